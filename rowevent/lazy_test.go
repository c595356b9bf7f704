package rowevent

import (
	"bytes"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// TestLazyUTF8: with Decoder.LazyUTF8, text in UTF-8 and ASCII
// collations comes as change.UncheckedText over the logged bytes; binary
// strings and other charsets decode as without it.
func TestLazyUTF8(t *testing.T) {
	data := []byte{4, 'a', 0xff, 'b', 'c'}
	for _, tc := range []struct {
		collation uint32
		unchecked bool
	}{{45, true}, {33, true}, {11, true}, {63, false}, {8, false}} {
		col := &tablemap.Column{Name: "c", Type: mysql.MYSQL_TYPE_VARCHAR, Length: 100, Collation: tc.collation}
		var checked, lazy arena
		lazy.lazyUTF8 = true
		want, wn, err := decodeCell(&checked, data, col)
		if err != nil {
			t.Fatal(err)
		}
		got, gn, err := decodeCell(&lazy, data, col)
		if err != nil {
			t.Fatal(err)
		}
		if gn != wn {
			t.Fatalf("collation %d: %d bytes used, want %d", tc.collation, gn, wn)
		}
		coll, unchecked := got.UncheckedUTF8()
		if unchecked != tc.unchecked {
			t.Fatalf("collation %d: unchecked %v, want %v", tc.collation, unchecked, tc.unchecked)
		}
		if unchecked {
			if coll != tc.collation || !bytes.Equal(got.Bytes(), data[1:]) || got.Kind() != change.String {
				t.Fatalf("collation %d: got %v %q coll %d", tc.collation, got.Kind(), got.Bytes(), coll)
			}
			continue
		}
		if got.Kind() != want.Kind() || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("collation %d: got %v %q, want %v %q", tc.collation, got.Kind(), got.Bytes(), want.Kind(), want.Bytes())
		}
	}
}
