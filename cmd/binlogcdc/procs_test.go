package main

import "testing"

// TestReplayProcs: only a replay to MySQL on one connection without
// --load-data, on two CPUs or fewer, without GOMAXPROCS set, runs on one
// CPU.
func TestReplayProcs(t *testing.T) {
	for _, c := range []struct {
		cpus     int
		env      string
		parallel int
		loadData bool
		to       string
		want     int
	}{
		{2, "", 1, false, "mysql://root@127.0.0.1:3306/", 1},
		{1, "", 1, false, "mysql://root@db2/", 1},
		{2, "", 0, false, "mysql://root@db2/", 1}, // --parallel's default is 1
		{4, "", 1, false, "mysql://root@127.0.0.1/", 0},
		{2, "2", 1, false, "mysql://root@127.0.0.1/", 0},
		{2, "", 2, false, "mysql://root@127.0.0.1/", 0},
		{2, "", 1, false, "kafka://127.0.0.1:9092/t", 0},
		{2, "", 1, false, "", 0},
		{2, "", 1, true, "mysql://root@127.0.0.1/", 0}, // --load-data
	} {
		if got := replayProcs(c.cpus, c.env, c.parallel, c.loadData, c.to); got != c.want {
			t.Errorf("replayProcs(%d, %q, %d, %v, %q) = %d, want %d", c.cpus, c.env, c.parallel, c.loadData, c.to, got, c.want)
		}
	}
}
