package jsonl

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
)

// lineFormat writes each change's SQL as its line.
type lineFormat struct{}

func (lineFormat) AppendValue(dst []byte, c *change.Change) ([]byte, error) {
	return append(dst, c.SQL...), nil
}
func (lineFormat) NeedsTail() bool                                      { return false }
func (lineFormat) AppendTail(dst []byte, _ change.TxEnd, _ bool) []byte { return dst }

// TestCommittedLinesInOrder: whatever mix of small and large
// transactions, rollbacks, spills and flushes, the output is exactly the
// committed transactions' lines in commit order, and a flush writes out
// everything committed so far (the committed lines wait in pending until
// there are enough of them to pass on without a copy).
func TestCommittedLinesInOrder(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(7))
	for _, mem := range []int{4 << 10, 64 << 10, DefaultMemory} {
		var out bytes.Buffer
		s := New(&out, Options{Memory: mem, Format: lineFormat{}})
		var want, open strings.Builder
		for tx := 0; tx < 1200; tx++ {
			n := 1 + rng.Intn(4)
			if rng.Intn(50) == 0 {
				n = 2000 // spills
			}
			for i := 0; i < n; i++ {
				line := fmt.Sprintf("tx %d line %d %s", tx, i, strings.Repeat("x", rng.Intn(300)))
				if err := s.Write(ctx, &change.Change{SQL: line}); err != nil {
					t.Fatal(err)
				}
				open.WriteString(line + "\n")
			}
			switch r := rng.Intn(10); {
			case r == 0:
				if err := s.Rollback(ctx); err != nil {
					t.Fatal(err)
				}
			default:
				if err := s.Commit(ctx, change.TxEnd{}); err != nil {
					t.Fatal(err)
				}
				want.WriteString(open.String())
			}
			open.Reset()
			switch rng.Intn(20) {
			case 0:
				if err := s.Flush(); err != nil {
					t.Fatal(err)
				}
				if out.String() != want.String() {
					t.Fatalf("memory %d, tx %d: after Flush, %d bytes out, want %d", mem, tx, out.Len(), want.Len())
				}
			case 1:
				if err := s.FlushIdle(); err != nil {
					t.Fatal(err)
				}
				if out.String() != want.String() {
					t.Fatalf("memory %d, tx %d: after FlushIdle, %d bytes out, want %d", mem, tx, out.Len(), want.Len())
				}
			}
		}
		// An open transaction at the end is dropped.
		if err := s.Write(ctx, &change.Change{SQL: "never"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if out.String() != want.String() {
			t.Fatalf("memory %d: output differs from the committed lines (%d bytes, want %d)", mem, out.Len(), want.Len())
		}
	}
}
