package main

import "testing"

// TestReplayProcs: only a replay to MySQL on one connection, on two CPUs
// or fewer, without GOMAXPROCS set, runs on one CPU.
func TestReplayProcs(t *testing.T) {
	for _, c := range []struct {
		cpus     int
		env      string
		parallel int
		to       string
		want     int
	}{
		{2, "", 1, "mysql://root@127.0.0.1:3306/", 1},
		{1, "", 1, "mysql://root@db2/", 1},
		{2, "", 0, "mysql://root@db2/", 1}, // --parallel's default is 1
		{4, "", 1, "mysql://root@127.0.0.1/", 0},
		{2, "2", 1, "mysql://root@127.0.0.1/", 0},
		{2, "", 2, "mysql://root@127.0.0.1/", 0},
		{2, "", 1, "kafka://127.0.0.1:9092/t", 0},
		{2, "", 1, "", 0},
	} {
		if got := replayProcs(c.cpus, c.env, c.parallel, c.to); got != c.want {
			t.Errorf("replayProcs(%d, %q, %d, %q) = %d, want %d", c.cpus, c.env, c.parallel, c.to, got, c.want)
		}
	}
}
