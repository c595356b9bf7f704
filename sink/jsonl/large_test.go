package jsonl

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// largeText is n bytes of text whose multi-byte characters, escapes,
// invalid UTF-8 and U+2028 fall across largePiece boundaries.
func largeText(n int) []byte {
	var b bytes.Buffer
	parts := []string{"plain ascii text ", "café ", "\"quoted\\\" ", "tab\there ", "naïve Zürich ", "\u2028", "🙂", "\xe2\x82", "\xff", "\n"}
	for i := 0; b.Len() < n; i++ {
		b.WriteString(parts[i%len(parts)])
		if i%7 == 0 {
			b.WriteString(strings.Repeat("x", i%5)) // shifts the characters against the boundaries
		}
	}
	return b.Bytes()[:n]
}

func largeChange() *change.Change {
	tbl := &tablemap.Table{DB: "big", Name: "t\"1", PrimaryKey: []int{0}, PKNames: []string{"id"},
		Columns: []tablemap.Column{
			{Name: "id", Type: mysql.MYSQL_TYPE_LONG},
			{Name: "b", Type: mysql.MYSQL_TYPE_BLOB},
			{Name: "s", Type: mysql.MYSQL_TYPE_BLOB},
			{Name: "j", Type: mysql.MYSQL_TYPE_JSON},
			{Name: "g", Type: mysql.MYSQL_TYPE_GEOMETRY},
			{Name: "small", Type: mysql.MYSQL_TYPE_VARCHAR},
			{Name: "gone", Type: mysql.MYSQL_TYPE_VARCHAR},
			{Name: "n", Type: mysql.MYSQL_TYPE_BLOB},
		}}
	blob := make([]byte, largeValue+largePiece+2) // not a multiple of 3: padding at the end
	for i := range blob {
		blob[i] = byte(i * 7)
	}
	json := append([]byte(`{"k":"`), bytes.Repeat([]byte("v"), largeValue)...)
	json = append(json, `"}`...)
	before := change.Row{change.IntValue(1), change.TextValue(change.Bytes, blob[:largeValue]),
		change.TextValue(change.String, largeText(largeValue+3*largePiece+1)), change.TextValue(change.JSON, json),
		change.GeometryValue(4326, blob), change.TextValue(change.String, []byte("small")), {}, change.NullValue()}
	after := change.Row{change.IntValue(1), change.TextValue(change.Bytes, blob),
		change.TextValue(change.String, []byte("short")), change.TextValue(change.JSON, []byte(`{}`)),
		change.GeometryValue(0, []byte{1, 2, 3}), change.TextValue(change.String, largeText(100)), {}, change.NullValue()}
	return &change.Change{Op: change.Update, Table: tbl, Before: before, After: after,
		Time: time.Unix(1796039146, 0).UTC(), Pos: change.Position{File: "binlog.000002", Offset: 123456789}, GTID: "0-1-226504"}
}

// TestLargeLineSameBytes: a change with large values, encoded a piece at
// a time through the spill file, is the line appendChange builds whole;
// around it, the transaction's other lines keep their order, and a
// rolled-back transaction with a large value leaves nothing.
func TestLargeLineSameBytes(t *testing.T) {
	ctx := context.Background()
	big := largeChange()
	small := benchChange(change.Insert)
	var e encoder
	var want []byte
	want = e.appendChange(want, small)
	want = e.appendChange(want, big)
	want = e.appendChange(want, small)
	for _, mem := range []int{DefaultMemory, 100} {
		var out bytes.Buffer
		s := New(&out, Options{Memory: mem, TempDir: t.TempDir()})
		for _, c := range []*change.Change{small, big, small} {
			if err := s.Write(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		// The large line went out in pieces: never whole in memory.
		if s.spilled == 0 || cap(s.pending) >= largeValue {
			t.Fatalf("memory %d: %d bytes spilled, %d held: the large line was built whole", mem, s.spilled, cap(s.pending))
		}
		if err := s.Commit(ctx, change.TxEnd{}); err != nil {
			t.Fatal(err)
		}
		if err := s.Write(ctx, big); err != nil {
			t.Fatal(err)
		}
		if err := s.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), want) {
			got := out.Bytes()
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Fatalf("memory %d: %d bytes, want %d; first difference at byte %d: %.80q vs %.80q", mem, len(got), len(want), i, got[i:], want[i:])
		}
	}
}

func TestStringCut(t *testing.T) {
	s := []byte("ab\u00e9\U0001F642cd")
	for max := 1; max <= len(s); max++ {
		n := stringCut(s, max)
		if n > max || (n < len(s) && s[n]&0xc0 == 0x80) || n < max-3 {
			t.Errorf("stringCut(%q, %d) = %d", s, max, n)
		}
	}
}
