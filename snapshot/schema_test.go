package snapshot

import (
	"reflect"
	"testing"
	"time"
)

func TestParseLabels(t *testing.T) {
	for _, c := range []struct {
		typ  string
		want []string
	}{
		{"enum('a','b')", []string{"a", "b"}},
		{"enum('it''s','back\\\\slash','x,y',' sp ','')", []string{"it's", "back\\slash", "x,y", " sp ", ""}},
		{"set('ü','€ x')", []string{"ü", "€ x"}},
	} {
		got, err := parseLabels(c.typ)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("parseLabels(%q) = %q, %v; want %q", c.typ, got, err, c.want)
		}
	}
	if _, err := parseLabels("enum()"); err == nil {
		t.Error("parseLabels(enum()) gave no error")
	}
}

func TestTwoInts(t *testing.T) {
	for typ, want := range map[string][2]int{"decimal(10,2)": {10, 2}, "decimal(65,30) unsigned": {65, 30}, "decimal(5)": {5, 0}} {
		p, s, ok := twoInts(typ)
		if !ok || p != want[0] || s != want[1] {
			t.Errorf("twoInts(%q) = %d, %d, %v", typ, p, s, ok)
		}
	}
	if _, _, ok := twoInts("decimal"); ok {
		t.Error("twoInts(decimal) ok")
	}
}

func TestBlobPack(t *testing.T) {
	for n, want := range map[int]int{255: 1, 65535: 2, 16777215: 3, 4294967295: 4} {
		if got := blobPack(n); got != want {
			t.Errorf("blobPack(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestUnixSeconds(t *testing.T) {
	for s, want := range map[string]uint64{"0000-00-00 00:00:00": 0, "0000-00-00 00:00:00.000": 0, "1970-01-01 00:00:01.99": 1, "2038-01-19 03:14:07": 2147483647} {
		if got, err := unixSeconds(s); err != nil || got != want {
			t.Errorf("unixSeconds(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	if _, err := unixSeconds("garbage"); err == nil {
		t.Error("unixSeconds(garbage) gave no error")
	}
}

func TestProgressLeft(t *testing.T) {
	p := Progress{Rows: 100, EstimatedRows: 300, Elapsed: 10 * time.Second}
	if got := p.Left(); got != 20*time.Second {
		t.Errorf("Left = %v, want 20s", got)
	}
	if got := (Progress{Rows: 0, EstimatedRows: 10}).Left(); got != 0 {
		t.Errorf("Left with no rows = %v", got)
	}
}
