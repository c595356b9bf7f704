package mysqlsink

import (
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

func TestPosLess(t *testing.T) {
	p := func(f string, o uint64) change.Position { return change.Position{File: f, Offset: o} }
	for _, c := range []struct {
		a, b change.Position
		want bool
	}{
		{p("binlog.000001", 4), p("binlog.000001", 5), true},
		{p("binlog.000002", 4), p("binlog.000001", 500), false},
		{p("binlog.999999", 900), p("binlog.1000000", 4), true},
		{p("", 0), p("binlog.000001", 4), true},
		{p("binlog.000001", 4), p("", 0), false},
		{p("binlog.000001", 4), p("binlog.000001", 4), false},
	} {
		if got := posLess(c.a, c.b); got != c.want {
			t.Errorf("posLess(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestKeyHash(t *testing.T) {
	tb := &tablemap.Table{DB: "d", Name: "t", PrimaryKey: []int{0}}
	c := &change.Change{Op: change.Update, Table: tb}
	row := func(v change.Value) change.Row { return change.Row{v, change.IntValue(7)} }
	h1, x1, ok1 := keyHash(c, row(change.IntValue(42)))
	h2, x2, ok2 := keyHash(c, row(change.IntValue(42)))
	h3, x3, _ := keyHash(c, row(change.IntValue(42+256)))
	if !ok1 || !ok2 || h1 != h2 || x1 != x2 || h1 == h3 || x1 == x3 {
		t.Errorf("int keys: %x %x %v, %x %x %v, %x %x", h1, x1, ok1, h2, x2, ok2, h3, x3)
	}
	// Integers go to partitions in blocks of 256: ascending inserts stay
	// together. But they are different rows: they do not wait for each
	// other.
	if h5, x5, _ := keyHash(c, row(change.IntValue(43))); h5 != h1 || x5 == x1 {
		t.Errorf("42 and 43: partitions %x %x (want equal), rows %x %x (want different)", h1, h5, x1, x5)
	}
	other := &change.Change{Op: change.Update, Table: &tablemap.Table{DB: "d", Name: "u", PrimaryKey: []int{0}}}
	if h4, x4, _ := keyHash(other, row(change.IntValue(42))); h4 == h1 || x4 == x1 {
		t.Errorf("the same key in another table hashes alike")
	}
	// The partition is part of assign: a restart after a crash must
	// compute what the run before it did, whatever the version.
	two := &change.Change{Op: change.Update, Table: &tablemap.Table{DB: "d", Name: "t", PrimaryKey: []int{0, 1}}}
	if h, _, _ := keyHash(two, change.Row{change.IntValue(42), change.TextValue(change.Bytes, []byte("ab\x00c"))}); h != 0x76e35b7cd4c29dfa {
		t.Errorf("partition hash %#x, want 0x76e35b7cd4c29dfa (as before: changing it breaks resuming a crashed --parallel run)", h)
	}
	// Text under a collation ('a' = 'A'), floats, prefixes, no key: none.
	if _, _, ok := keyHash(c, row(change.TextValue(change.String, []byte("a")))); ok {
		t.Errorf("a text key was hashed")
	}
	if _, _, ok := keyHash(&change.Change{Table: &tablemap.Table{DB: "d", Name: "n"}}, row(change.IntValue(1))); ok {
		t.Errorf("a table without a primary key was hashed")
	}
	pre := &change.Change{Table: &tablemap.Table{DB: "d", Name: "p", PrimaryKey: []int{0}, PrimaryKeyPrefix: []int{4}}}
	if _, _, ok := keyHash(pre, row(change.TextValue(change.Bytes, []byte("abcdef")))); ok {
		t.Errorf("a prefix key was hashed")
	}
	if !absentKey(change.Row{change.Value{}, change.IntValue(1)}, []int{0}) || absentKey(row(change.IntValue(1)), []int{0}) {
		t.Errorf("absentKey")
	}
}
