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

// Without a writable temporary directory, a transaction is held in
// memory up to memoryNoSpill (what DefaultMemory was), whole and in
// order; a larger one fails with the spill file's error. With one, it
// spills past DefaultMemory.
func TestNoSpillFileHoldsUpTo8MiB(t *testing.T) {
	ctx := context.Background()
	line := strings.Repeat("y", 1000)
	write := func(s *Sink, bytes int) error {
		for n := 0; n < bytes; n += len(line) + 1 {
			if err := s.Write(ctx, &change.Change{SQL: line}); err != nil {
				return err
			}
		}
		return nil
	}
	var out bytes.Buffer
	s := New(&out, Options{Format: lineFormat{}, TempDir: t.TempDir() + "/missing"})
	for tx := 0; tx < 2; tx++ {
		if err := write(s, 3<<20); err != nil {
			t.Fatalf("a 3 MiB transaction without a spill file: %v", err)
		}
		if err := s.Commit(ctx, change.TxEnd{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if want := 2 * ((3<<20 + len(line)) / (len(line) + 1)) * (len(line) + 1); out.Len() != want {
		t.Fatalf("%d bytes out, want %d", out.Len(), want)
	}
	if err := write(s, 9<<20); err == nil || !strings.Contains(err.Error(), "cannot create a spill file") {
		t.Fatalf("a 9 MiB transaction without a spill file: %v", err)
	}

	s = New(&out, Options{Format: lineFormat{}, TempDir: t.TempDir()})
	if err := write(s, 2<<20); err != nil {
		t.Fatal(err)
	}
	if s.spill == nil || s.spilled == 0 {
		t.Fatal("a 2 MiB transaction did not spill past DefaultMemory")
	}
	s.Close(ctx)
}
