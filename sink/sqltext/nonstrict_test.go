package sqltext

import (
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
)

func TestNotStored(t *testing.T) {
	const mb4, mb3, ascii = 45, 33, 11 // utf8mb4_general_ci, utf8mb3_general_ci, ascii_general_ci
	for _, c := range []struct {
		b    string
		coll uint32
		ok   bool
	}{
		{"abc", mb4, true}, {"é😀", mb4, true},
		{"\xed\xa0\x80", mb4, true}, {"a\xed\xbf\xbfb", mb3, true}, // surrogates: MariaDB stores them
		{"\xff", mb4, false}, {"a\x80", mb4, false}, {"\xc0\xaf", mb4, false}, // not UTF-8, overlong
		{"\xe0\x80\xaf", mb4, false}, {"\xf0\x80\x80\xaf", mb4, false}, // overlong
		{"\xf4\x90\x80\x80", mb4, false}, {"\xed\xa0", mb4, false}, // above U+10FFFF, cut
		{"😀", mb3, false}, {"é", ascii, false}, {"a", ascii, true},
	} {
		row := change.Row{change.IntValue(1), change.UncheckedText([]byte(c.b), c.coll)}
		want := 1
		if c.ok {
			want = -1
		}
		if got := NotStored(row, nil); got != want {
			t.Errorf("%q (collation %d): NotStored %d, want %d", c.b, c.coll, got, want)
		}
		if got := NotStored(row, []int{0}); got != -1 {
			t.Errorf("%q: NotStored of column 0 only: %d", c.b, got)
		}
	}
	// Checked text (other sinks) and other kinds are stored as they are.
	if got := NotStored(change.Row{change.TextValue(change.String, []byte("\xff")), change.TextValue(change.Bytes, []byte{0xff})}, nil); got != -1 {
		t.Errorf("checked text or bytes refused: %d", got)
	}
}
