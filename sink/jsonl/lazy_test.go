package jsonl

import (
	"bytes"
	"context"
	"math/rand"
	"testing"
	"unicode/utf8"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/charset"
)

// TestUncheckedTextAsChecked: text the decoder left unchecked
// (rowevent.Decoder.LazyUTF8) encodes exactly as the text the decoder
// would have checked and, where invalid, converted: valid UTF-8 as it
// is, anything else as charset.Decode makes it, in every UTF-8 and ASCII
// collation.
func TestUncheckedTextAsChecked(t *testing.T) {
	collations := []uint32{
		45,  // utf8mb4_general_ci
		255, // utf8mb4_0900_ai_ci
		46,  // utf8mb4_bin
		33,  // utf8mb3_general_ci
		11,  // ascii_general_ci
		65,  // ascii_bin
	}
	cases := [][]byte{nil, []byte(""), []byte("plain ascii text, longer than eight"), []byte("café naïve Zürich \"q\" \\ \n"),
		[]byte("\xff"), []byte("ab\xc3"), []byte("\xe2\x80\xa8 sep"), []byte("ok \xed\xa0\x80 surrogate"), []byte("\xf4\x90\x80\x80 too big"),
		[]byte("mixed é and \x80 invalid"), []byte("\x00\x1f\x7f")}
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte("ab \"\\\n\x01\x7f\xc3\xa9\xe2\x80\xa8\xff\xf0\x9f\x98\x80")
	for range 5000 {
		s := make([]byte, rng.Intn(40))
		for i := range s {
			s[i] = alphabet[rng.Intn(len(alphabet))]
		}
		cases = append(cases, s)
	}
	for _, coll := range collations {
		if !charset.IsUTF8Compatible(coll) {
			t.Fatalf("collation %d is not UTF-8 compatible", coll)
		}
		for _, s := range cases {
			text := s
			if !utf8.Valid(s) { // what rowevent's toUTF8 does
				var err error
				if text, err = charset.Decode(nil, coll, s); err != nil {
					t.Fatal(err)
				}
			}
			tv, uv := change.TextValue(change.String, text), change.UncheckedText(s, coll)
			want := appendValue([]byte("x"), &tv)
			got := appendValue([]byte("x"), &uv)
			if !bytes.Equal(got, want) {
				t.Fatalf("collation %d, %q: got %s, want %s", coll, s, got, want)
			}
		}
	}
}

// TestUncheckedLargeText: a large value (encoded a piece at a time) that
// the decoder left unchecked is written as the checked one.
func TestUncheckedLargeText(t *testing.T) {
	checked, unchecked := largeChange(), largeChange()
	for _, row := range []change.Row{unchecked.Before, unchecked.After} {
		for i, v := range row {
			if v.Kind() == change.String {
				row[i] = change.UncheckedText(v.Bytes(), 45)
			}
		}
	}
	for _, row := range []change.Row{checked.Before, checked.After} {
		for i, v := range row {
			if v.Kind() == change.String && !utf8.Valid(v.Bytes()) {
				text, err := charset.Decode(nil, 45, v.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				row[i] = change.TextValue(change.String, text)
			}
		}
	}
	out := func(c *change.Change) []byte {
		var buf bytes.Buffer
		s := New(&buf, Options{Memory: 1 << 16})
		if err := s.Write(context.Background(), c); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(context.Background(), change.TxEnd{}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	got, want := out(unchecked), out(checked)
	if !bytes.Equal(got, want) {
		t.Fatalf("unchecked large text: %d bytes differ from the checked %d", len(got), len(want))
	}
	if !utf8.Valid(got) {
		t.Fatal("output is not UTF-8")
	}
}
