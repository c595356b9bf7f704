package snapshot

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// appendTextRow encodes cells as a text-protocol row (what the server
// sends): each a length-encoded string, 0xfb for NULL.
func appendTextRow(p []byte, cells []textCell) []byte {
	for _, c := range cells {
		if c.null {
			p = append(p, 0xfb)
			continue
		}
		switch n := len(c.b); {
		case n < 0xfb:
			p = append(p, byte(n))
		case n <= 0xffff:
			p = append(p, 0xfc, byte(n), byte(n>>8))
		case n <= 0xffffff:
			p = append(p, 0xfd, byte(n), byte(n>>8), byte(n>>16))
		default:
			p = append(p, 0xfe)
			p = binary.LittleEndian.AppendUint64(p, uint64(n))
		}
		p = append(p, c.b...)
	}
	return p
}

func TestParseTextRow(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 70000)
	want := []textCell{{b: []byte("42")}, {null: true}, {b: []byte{}}, {b: bytes.Repeat([]byte("é"), 200)}, {b: long}}
	p := appendTextRow(nil, want)
	got := make([]textCell, len(want))
	if err := parseTextRow(p, got); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i].null != want[i].null || !bytes.Equal(got[i].b, want[i].b) {
			t.Fatalf("cell %d: got %v %q, want %v %q", i, got[i].null, got[i].b, want[i].null, want[i].b)
		}
	}
	// Short, long, or a length past the end: an error, never a panic.
	for _, bad := range [][]byte{p[:len(p)-1], append(p[:len(p):len(p)], 0), {0xfc, 1}, {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, {0xff}} {
		if err := parseTextRow(bad, got); err == nil {
			t.Fatalf("%x: no error", bad)
		}
	}
}

func FuzzParseTextRow(f *testing.F) {
	f.Add([]byte{1, '1', 0xfb, 0}, 3)
	f.Add([]byte{0xfc, 2, 0, 'a', 'b'}, 1)
	f.Add([]byte{0xfe, 1, 0, 0, 0, 0, 0, 0, 0, 'z'}, 1)
	f.Fuzz(func(t *testing.T, p []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		cells := make([]textCell, n)
		if err := parseTextRow(p, cells); err != nil {
			return
		}
		// What parses encodes back to the same bytes, but for a length
		// written longer than it needs.
		again := appendTextRow(nil, cells)
		back := make([]textCell, n)
		if err := parseTextRow(again, back); err != nil {
			t.Fatalf("re-encoded %x: %v", again, err)
		}
		for i := range cells {
			if back[i].null != cells[i].null || !bytes.Equal(back[i].b, cells[i].b) {
				t.Fatalf("cell %d differs after re-encoding", i)
			}
		}
	})
}

// TestUTF8TextAsCell: a text column's value read as it is (readUTF8)
// equals the one its binlog cell decodes to, and text that is not valid
// UTF-8 goes through the cell (its invalid bytes become U+FFFD).
func TestUTF8TextAsCell(t *testing.T) {
	cols := []tablemap.Column{
		{Name: "v", Type: mysql.MYSQL_TYPE_VARCHAR, Length: 400, Collation: 45}, // utf8mb4_general_ci
		{Name: "c", Type: mysql.MYSQL_TYPE_STRING, Length: 40, Collation: 33},   // utf8mb3_general_ci
		{Name: "t", Type: mysql.MYSQL_TYPE_BLOB, Length: 2, Collation: 11},      // ascii_general_ci
		{Name: "l", Type: mysql.MYSQL_TYPE_VARCHAR, Length: 100, Collation: 8},  // latin1: not plain text
		{Name: "b", Type: mysql.MYSQL_TYPE_VARCHAR, Length: 100, Collation: 63}, // binary: not plain text
	}
	want := map[string]bool{"v": true, "c": true, "t": true}
	for i := range cols {
		col := &cols[i]
		if plainText(col) != want[col.Name] {
			t.Fatalf("%s: plainText %v", col.Name, !want[col.Name])
		}
		if !want[col.Name] {
			continue
		}
		for _, text := range []string{"", "plain", "café \"naïve\" Zürich", "\xff\xfe bad", "a\x00b"} {
			var fast, slow converter
			var fv, sv, lv change.Value
			ferr := fast.value(&fv, col, readUTF8, &textCell{b: []byte(text)})
			serr := slow.value(&sv, col, readCell, &textCell{b: []byte(text)})
			if (ferr != nil) != (serr != nil) || fv.Kind() != sv.Kind() || !bytes.Equal(fv.Bytes(), sv.Bytes()) || fv.Kind() != change.String {
				t.Fatalf("%s %q: readUTF8 gives %v %q (%v), the cell %v %q (%v)", col.Name, text, fv.Kind(), fv.Bytes(), ferr, sv.Kind(), sv.Bytes(), serr)
			}
			// Unchecked (for sink/jsonl), the JSON is the cell's.
			lazy := converter{lazyUTF8: true}
			if err := lazy.value(&lv, col, readUTF8, &textCell{b: []byte(text)}); err != nil {
				t.Fatal(err)
			}
			if _, ok := lv.UncheckedUTF8(); !ok {
				t.Fatalf("%s %q: lazy readUTF8 gives %v, not unchecked text", col.Name, text, lv.Kind())
			}
			tbl := &tablemap.Table{DB: "d", Name: "t", Columns: []tablemap.Column{*col}}
			var enc jsonl.Encoder
			lj := enc.AppendChange(nil, &change.Change{Op: change.Snapshot, Table: tbl, After: change.Row{lv}})
			sj := enc.AppendChange(nil, &change.Change{Op: change.Snapshot, Table: tbl, After: change.Row{sv}})
			if !bytes.Equal(lj, sj) {
				t.Fatalf("%s %q: unchecked text encodes as %s, the cell as %s", col.Name, text, lj, sj)
			}
		}
	}
}
