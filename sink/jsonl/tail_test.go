package jsonl

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
)

// tailFormat leaves records open ({"row":N) for AppendTail, as Maxwell's
// encoder does.
type tailFormat struct{}

func (tailFormat) AppendValue(b []byte, c *change.Change) ([]byte, error) {
	return strconv.AppendInt(append(b, `{"row":`...), int64(c.RowIndex), 10), nil
}
func (tailFormat) NeedsTail() bool { return true }
func (tailFormat) AppendTail(b []byte, tx change.TxEnd, last bool) []byte {
	b = append(b, fmt.Sprintf(`,"xid":%d`, tx.Xid)...)
	if last {
		b = append(b, `,"commit":true`...)
	}
	return append(b, '}')
}

// TestTailAcrossSpill: every record gets its transaction's tail, and only
// the last one the commit mark, whether the transaction stayed in memory
// or spilled to the temporary file (chunk boundaries inside records);
// a rolled-back transaction leaves nothing.
func TestTailAcrossSpill(t *testing.T) {
	defer func(n int) { spillChunk = n }(spillChunk)
	spillChunk = 13 // chunks end inside records
	for _, mem := range []int{1 << 20, 50, 7} {
		var out bytes.Buffer
		s := New(&out, Options{Memory: mem, TempDir: t.TempDir(), Format: tailFormat{}})
		ctx := context.Background()
		var want strings.Builder
		for tx := 1; tx <= 3; tx++ {
			n := tx * 40
			for i := 0; i < n; i++ {
				if err := s.Write(ctx, &change.Change{RowIndex: i}); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&want, `{"row":%d,"xid":%d`, i, tx)
				if i == n-1 {
					want.WriteString(`,"commit":true`)
				}
				want.WriteString("}\n")
			}
			if err := s.Commit(ctx, change.TxEnd{Xid: uint64(tx)}); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 30; i++ { // a transaction that does not commit
				s.Write(ctx, &change.Change{RowIndex: 1000 + i})
			}
			if err := s.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if out.String() != want.String() {
			t.Errorf("memory %d: output differs:\n%s", mem, out.String())
		}
	}
}
