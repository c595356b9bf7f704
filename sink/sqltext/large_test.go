package sqltext

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// withLarge sets the large-value thresholds for a test.
func withLarge(t *testing.T, value, piece int) {
	v, p := largeValue, largePiece
	largeValue, largePiece = value, piece
	t.Cleanup(func() { largeValue, largePiece = v, p })
}

func largeRow() change.Row {
	text := []byte(strings.Repeat("it's ☃ 😀 ", 20))
	return change.Row{
		change.IntValue(7),
		change.TextValue(change.Bytes, bytes.Repeat([]byte{0, 0xff, '\''}, 50)),
		change.TextValue(change.String, text),
		change.TextValue(change.String, append(append([]byte(nil), text...), '\\')),
		change.GeometryValue(4326, bytes.Repeat([]byte{1, 2, 3}, 40)),
		change.TextValue(change.JSON, []byte(`{"a":"`+strings.Repeat("b'c", 50)+`"}`)),
		change.SetValue(5, []byte(strings.Repeat("a,", 60)+"c")),
		change.EnumValue(2, []byte(strings.Repeat("e", 100))),
		change.EnumValue(0, nil),
		change.TextValue(change.Vector, bytes.Repeat([]byte{0, 0, 0x80, 0x3f}, 30)),
		change.NullValue(),
		change.TextValue(change.Decimal, []byte("-0.50")),
		change.TextValue(change.Bytes, []byte{1}),
	}
}

func TestWriteTupleSameBytes(t *testing.T) {
	row := largeRow()
	cols := Columns(nil, row, nil)
	var b Builder
	b.InsertTuple(cols, row)
	want := append([]byte("prefix,"), b.SQL...)
	for _, piece := range []int{1, 2, 3, 7, 64} {
		withLarge(t, 10, piece)
		if !HasLarge(cols, row) {
			t.Fatal("HasLarge: false")
		}
		var out bytes.Buffer
		if _, err := WriteTuple(&out, nil, []byte("prefix,"), cols, row); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Errorf("pieces of %d:\n got %s\nwant %s", piece, out.Bytes(), want)
		}
	}
	// A literal that fails fails before anything is written.
	row[11] = change.TextValue(change.Decimal, []byte("1; DROP"))
	var out bytes.Buffer
	if _, err := WriteTuple(&out, nil, []byte("prefix,"), cols, row); err == nil || out.Len() > 0 {
		t.Errorf("bad DECIMAL: %v, wrote %q", err, out.Bytes())
	}
}

// The Sink writes the same SQL for rows with large values, whose INSERTs
// it writes a piece at a time, as it builds whole.
func TestSinkLargeSameBytes(t *testing.T) {
	tbl := &tablemap.Table{DB: "d", Name: "t", PrimaryKey: []int{0}}
	for i := range largeRow() {
		tbl.Columns = append(tbl.Columns, tablemap.Column{Name: string(rune('a' + i))})
	}
	small := func(id int64) change.Row {
		r := largeRow()
		for i := range r {
			if len(r[i].Bytes()) > 8 {
				r[i] = change.TextValue(change.String, []byte("s'"))
			}
		}
		r[0] = change.IntValue(id)
		return r
	}
	big := func(id int64) change.Row {
		r := largeRow()
		r[0] = change.IntValue(id)
		if id != 6 {
			r[8] = change.NullValue() // not the ENUM error value, whose INSERT is built whole
		}
		return r
	}
	run := func(rollback bool) string {
		var out bytes.Buffer
		s := New(&out, Options{})
		ctx := context.Background()
		for _, r := range []change.Row{small(1), small(2), big(3), small(4), big(5), big(6), small(7)} {
			if err := s.Write(ctx, &change.Change{Op: change.Insert, Table: tbl, After: r}); err != nil {
				t.Fatal(err)
			}
		}
		s.Commit(ctx, change.TxEnd{})
		if rollback {
			s.Write(ctx, &change.Change{Op: change.Insert, Table: tbl, After: big(8)})
			s.Rollback(ctx)
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	want := run(false)
	withLarge(t, 10, 5)
	if got := run(false); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// A rolled-back INSERT already written ends before the ROLLBACK.
	got := run(true)
	rest := strings.TrimPrefix(got, want)
	if !strings.HasPrefix(got, want) || !strings.HasPrefix(rest, "BEGIN;\nINSERT INTO `d`.`t` (") || !strings.HasSuffix(rest, ");\nROLLBACK;\n") {
		t.Errorf("rolled back:\n%s", strings.TrimPrefix(got, want))
	}
}
