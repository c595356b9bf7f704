package main

import "testing"

func TestGTIDsCover(t *testing.T) {
	for _, c := range []struct {
		have, need string
		want       bool
	}{
		{"0-1-3", "0-1-3", true},
		{"0-1-5", "0-1-3", true},
		{"0-1-3", "0-1-4", false},
		{"0-2-9", "0-1-4", true}, // another server id, same domain: sequence numbers count
		{"0-1-3,7-1-1", "7-1-1,0-1-3", true},
		{"0-1-3", "7-1-1,0-1-3", false}, // a domain the checkpoint never saw
		{"0-1-3,7-1-1", "0-1-3", true},
		{"", "0-1-3", false},
		{"0-1-3", "", false}, // nothing before the oldest binlog: a reset server
		{"0-1-3", "garbage", false},
		{"0-1-10", "0-1-9", true},
		{"0-1-9", "0-1-10", false},
	} {
		if got := gtidsCover(c.have, c.need); got != c.want {
			t.Errorf("gtidsCover(%q, %q) = %v, want %v", c.have, c.need, got, c.want)
		}
	}
}
