package checkpoint

import "testing"

func TestMariaPos(t *testing.T) {
	p, ok := ParseMariaPos(" 7-1-1,0-1-3 ")
	if !ok || p.String() != "0-1-3,7-1-1" {
		t.Errorf("ParseMariaPos = %v, %v", p, ok)
	}
	if _, ok := ParseMariaPos("0-1-3,3E11FA47-71CA-11E1-9E33-C80AA9429562:23"); ok {
		t.Error("a MySQL GTID parsed as MariaDB's")
	}
	if p, ok := ParseMariaPos(""); !ok || len(p) != 0 || p.String() != "" {
		t.Errorf("empty: %v, %v", p, ok)
	}
	for _, s := range []string{"0-1", "a-1-2", "0-1-2-3", "-1-1-1", "0-1-99999999999999999999"} {
		if _, ok := ParseMariaGTID(s); ok {
			t.Errorf("ParseMariaGTID(%q) ok", s)
		}
	}
}

// After: does a checkpoint at p still find every transaction after it in
// binlogs that begin at GTID state start?
func TestMariaPosAfter(t *testing.T) {
	for _, c := range []struct {
		p, start string
		want     bool
	}{
		{"0-1-3", "0-1-3", true},
		{"0-1-5", "0-1-3", true},
		{"0-1-3", "0-1-4", false},
		{"0-2-9", "0-1-4", true}, // another server id, same domain: sequence numbers count
		{"0-1-3,7-1-1", "7-1-1,0-1-3", true},
		{"0-1-3", "7-1-1,0-1-3", false}, // a domain the checkpoint never saw
		{"0-1-3,7-1-1", "0-1-3", true},
		{"", "0-1-3", false},
		{"0-1-3", "", true}, // the binlogs begin before any transaction
		{"0-1-10", "0-1-9", true},
		{"0-1-9", "0-1-10", false},
	} {
		p, _ := ParseMariaPos(c.p)
		start, _ := ParseMariaPos(c.start)
		if got := p.After(start); got != c.want {
			t.Errorf("%q.After(%q) = %v, want %v", c.p, c.start, got, c.want)
		}
	}
}

func TestMariaPosMatches(t *testing.T) {
	for _, c := range []struct {
		p, at string
		want  bool
	}{
		{"0-1-22", "0-1-22", true},
		{"0-1-22", "0-1-4", false},
		{"0-1-22", "0-2-22", false}, // same number, another server: another transaction
		{"0-1-22", "0-1-22,1-1-7", true},
		{"0-1-22,1-1-7", "0-1-22", false},
		{"0-1-22", "", false},
	} {
		p, _ := ParseMariaPos(c.p)
		at, _ := ParseMariaPos(c.at)
		if got := p.Matches(at); got != c.want {
			t.Errorf("%q.Matches(%q) = %v, want %v", c.p, c.at, got, c.want)
		}
	}
}

func TestMariaStateContains(t *testing.T) {
	st := ParseMariaState("0-1-22,0-2-30,1-1-5")
	for _, c := range []struct {
		p    string
		want bool
	}{
		{"0-1-22", true},
		{"0-1-21", true},
		{"0-1-23", false},
		{"0-2-30", true},
		{"0-3-1", false}, // a server this history never had
		{"0-2-30,1-1-5", true},
		{"0-2-30,1-1-6", false},
		{"2-1-1", false},
		{"", true},
	} {
		p, _ := ParseMariaPos(c.p)
		if got := st.Contains(p); got != c.want {
			t.Errorf("Contains(%q) = %v, want %v", c.p, got, c.want)
		}
	}
}
