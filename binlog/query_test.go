package binlog

import "testing"

// TestQueryStatusVars: the walk over a QUERY event's status variables
// reaches the start microseconds (MariaDB's Q_HRNOW, MySQL's
// Q_MICROSECONDS) past the variables written before them.
func TestQueryStatusVars(t *testing.T) {
	for _, c := range []struct {
		name string
		v    []byte
		want uint32
		has  bool
	}{
		{"MariaDB DDL", []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 3, 1, 0, 1, 0, 4, 33, 0, 33, 0, 45, 0,
			5, 6, '+', '0', '0', ':', '0', '0', 128, 0x47, 0x84, 0x02, 129, 1, 0, 0, 0, 0, 0, 0, 0}, 0x028447, true},
		{"invoker and table map before it", []byte{9, 1, 2, 3, 4, 5, 6, 7, 8, 10, 0, 0, 0, 0,
			11, 4, 'r', 'o', 'o', 't', 9, 'l', 'o', 'c', 'a', 'l', 'h', 'o', 's', 't', 128, 1, 0, 0}, 1, true},
		{"MySQL updated databases, microseconds", []byte{12, 2, 'a', 0, 'b', 'c', 0, 13, 0x3f, 0x42, 0x0f}, 999999, true},
		{"no databases (254)", []byte{12, 254, 13, 5, 0, 0}, 5, true},
		{"none", []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, 0, false},
		{"cut short", []byte{11, 4, 'r', 'o'}, 0, false},
		{"unknown code first", []byte{200, 128, 1, 0, 0}, 0, false},
	} {
		var q Query
		q.statusVars(c.v)
		if q.StartMicros != c.want || q.HasStartMicros != c.has {
			t.Errorf("%s: micros %d (%v), want %d (%v)", c.name, q.StartMicros, q.HasStartMicros, c.want, c.has)
		}
	}
}
