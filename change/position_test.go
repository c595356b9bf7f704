package change

import "testing"

func TestPositionCompare(t *testing.T) {
	pos := func(f string, o uint64) Position { return Position{File: f, Offset: o} }
	ordered := []Position{
		{},
		pos("binlog.000001", 4),
		pos("binlog.000001", 256),
		pos("binlog.000001", 1000),
		pos("binlog.000002", 4),
		pos("binlog.000010", 4),
		pos("binlog.999999", 4),
		pos("binlog.999999", 99999),
		pos("binlog.1000000", 4),
		pos("binlog.1000001", 4),
	}
	for i, a := range ordered {
		for j, b := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := a.Compare(b); got != want {
				t.Errorf("%v.Compare(%v) = %d, want %d", a, b, got, want)
			}
			if a.Before(b) != (want < 0) {
				t.Errorf("%v.Before(%v) = %v", a, b, a.Before(b))
			}
		}
	}
	// Different series, or names without a number: as text, and
	// antisymmetric.
	for _, c := range [][2]Position{{pos("a.000002", 4), pos("b.000001", 4)}, {pos("x", 4), pos("y", 4)}} {
		if c[0].Compare(c[1]) != -1 || c[1].Compare(c[0]) != 1 {
			t.Errorf("%v vs %v", c[0], c[1])
		}
	}
}

// TestPositionCompareHistories: an archive's later server histories
// (history-N/NAME) come after the ones before, whatever the file names.
func TestPositionCompareHistories(t *testing.T) {
	pos := func(f string, o uint64) Position { return Position{File: f, Offset: o} }
	ordered := []Position{
		{},
		pos("mysql-bin.000001", 4),
		pos("mysql-bin.000007", 900),
		pos("history-2/a.000001", 4),
		pos("history-2/a.000001", 500),
		pos("history-2/a.000002", 4),
		pos("history-3/zz.000001", 4),
		pos("history-10/b.000001", 4),
	}
	for i, a := range ordered {
		for j, b := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := a.Compare(b); got != want {
				t.Errorf("%v.Compare(%v) = %d, want %d", a, b, got, want)
			}
		}
	}
	if n, name := History("history-2/a.000001"); n != 2 || name != "a.000001" {
		t.Errorf("History: %d %q", n, name)
	}
	if n, name := History("history-x/a"); n != 1 || name != "history-x/a" {
		t.Errorf("History: %d %q", n, name)
	}
}
