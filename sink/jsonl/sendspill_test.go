package jsonl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
)

// writeMix writes transactions of every size to s (with rollbacks and
// spills) and returns the lines the committed ones hold.
func writeMix(t *testing.T, s *Sink) string {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewSource(26))
	var want, open strings.Builder
	for tx := 0; tx < 300; tx++ {
		n := 1 + rng.Intn(4)
		if rng.Intn(10) == 0 {
			n = 3000 // spills
		}
		for i := 0; i < n; i++ {
			line := fmt.Sprintf("tx %d line %d %s", tx, i, strings.Repeat("y", rng.Intn(200)))
			if err := s.Write(ctx, &change.Change{SQL: line}); err != nil {
				t.Fatal(err)
			}
			open.WriteString(line + "\n")
		}
		if rng.Intn(8) == 0 {
			if err := s.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := s.Commit(ctx, change.TxEnd{}); err != nil {
				t.Fatal(err)
			}
			want.WriteString(open.String())
		}
		open.Reset()
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return want.String()
}

// TestSpillToFiles: a spilled transaction reaches a file output by
// sendfile (and an O_APPEND file, which sendfile refuses, by a copy) and
// a pipe, byte for byte what the committed transactions hold, in order.
func TestSpillToFiles(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Memory: 16 << 10, TempDir: dir, Format: lineFormat{}}
	for _, flag := range []int{os.O_TRUNC, os.O_APPEND} {
		path := filepath.Join(dir, "out.jsonl")
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|flag, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		want := writeMix(t, New(f, opts))
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, []byte(want)) {
			t.Fatalf("flag %#x: the file holds %d bytes, want %d", flag, len(got), len(want))
		}
		os.Remove(path)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		read <- b
	}()
	want := writeMix(t, New(w, opts))
	w.Close()
	if got := <-read; !bytes.Equal(got, []byte(want)) {
		t.Fatalf("pipe: %d bytes out, want %d", len(got), len(want))
	}
}
