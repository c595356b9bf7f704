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
