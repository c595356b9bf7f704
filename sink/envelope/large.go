package envelope

import (
	"encoding/base64"
	"encoding/json"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Large values. A record is normally built whole; with a 200 MB BLOB that
// is 267 MB of base64 on top of the row. A writer that can take a record
// in pieces (the JSON lines sink: its spill file) sets a spill function
// (Spiller); the encoder then writes the base64 or JSON text of a value of
// largeValue bytes or more a piece at a time, handing the record so far
// to spill after each piece. The bytes are those of the record built
// whole (TestLargeSameBytes). Without a spill function (Kafka: a record
// is one message), records are built whole.
var largeValue = 1 << 20 // variables for the tests

// largePiece is how much of a large value is encoded at a time: a
// multiple of 3, so that the base64 of the pieces joins into the base64
// of the whole.
var largePiece = 3 << 16

// Spiller is implemented by the encoders that write large values in
// pieces.
type Spiller interface {
	// SetSpill sets the function AppendValue hands the bytes so far to
	// (its dst, then the record) while it writes a large value: spill
	// writes them on, or keeps them, and returns where the record
	// continues (b, or b emptied). Its error ends AppendValue with it.
	SetSpill(spill func(b []byte) ([]byte, error))
}

// pieces is the large-value writing of an encoder.
type pieces struct {
	spill  func([]byte) ([]byte, error)
	active bool // inside AppendValue (not AppendKey: keys are built whole)
	err    error
}

func (p *pieces) SetSpill(spill func([]byte) ([]byte, error)) { p.spill = spill }

// begin and end bracket AppendValue; end returns the spill's error.
func (p *pieces) begin() { p.active, p.err = p.spill != nil, nil }
func (p *pieces) end() error {
	err := p.err
	p.active, p.err = false, nil
	return err
}

// large reports whether v is written in pieces.
func (p *pieces) large(v change.Value) bool { return p.active && len(v.Bytes()) >= largeValue }

func (p *pieces) flush(b []byte) []byte {
	if p.err != nil {
		return b
	}
	b, p.err = p.spill(b)
	return b
}

// base64 is appendBase64 in pieces.
func (p *pieces) base64(b, src []byte) []byte {
	b = append(b, '"')
	for len(src) > 0 && p.err == nil {
		n := min(len(src), largePiece)
		b = base64.StdEncoding.AppendEncode(b, src[:n])
		src = src[n:]
		b = p.flush(b)
	}
	return append(b, '"')
}

// str is appendStringBytes in pieces.
func (p *pieces) str(b, s []byte) []byte {
	b = append(b, '"')
	for len(s) > 0 && p.err == nil {
		n := stringCut(s, largePiece)
		m := len(b)
		b = appendStringBytes(b, s[:n])
		// Without the quotes appendStringBytes puts around each piece.
		b = append(b[:m], b[m+1:len(b)-1]...)
		s = s[n:]
		b = p.flush(b)
	}
	return append(b, '"')
}

// raw appends s as it is (JSON text), in pieces.
func (p *pieces) raw(b, s []byte) []byte {
	for len(s) > 0 && p.err == nil {
		n := min(len(s), largePiece)
		b = append(b, s[:n]...)
		s = s[n:]
		b = p.flush(b)
	}
	return b
}

// stringCut returns where to cut s for a piece of at most max bytes (all
// of s when it is shorter): before a byte that starts a UTF-8 sequence,
// so that each piece escapes as its part of the whole would (as
// sink/jsonl's large values are cut).
func stringCut(s []byte, max int) int {
	if len(s) <= max {
		return len(s)
	}
	n := max
	for i := 0; i < 3 && s[n]&0xc0 == 0x80; i++ {
		n--
	}
	if n == 0 { // a piece shorter than a sequence (the tests'): all of it
		for n = max; n < len(s) && s[n]&0xc0 == 0x80; n++ {
		}
	}
	return n
}

// compactJSON appends s, valid JSON text, without the whitespace between
// its tokens (as json.Compact, which would need s's size again), in
// pieces when s is large.
func (p *pieces) compactJSON(b, s []byte) []byte {
	var st compactState
	for len(s) > 0 && p.err == nil {
		n := len(s)
		if p.active {
			n = min(n, largePiece)
		}
		b = st.append(b, s[:n])
		s = s[n:]
		if p.active {
			b = p.flush(b)
		}
	}
	return b
}

// compactState is where appendCompact stands in JSON text cut in pieces:
// inside a string, and just after its backslash.
type compactState struct{ in, esc bool }

func (st *compactState) append(b, s []byte) []byte {
	start := 0
	for i, c := range s {
		switch {
		case st.in:
			switch {
			case st.esc:
				st.esc = false
			case c == '\\':
				st.esc = true
			case c == '"':
				st.in = false
			}
		case c == '"':
			st.in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			b = append(b, s[start:i]...)
			start = i + 1
		}
	}
	return append(b, s[start:]...)
}

// isMariaJSON reports whether v, a value of col, is written as the JSON
// value itself where a format embeds JSON (Maxwell): a MariaDB column
// declared JSON (tablemap.Column.JSON) whose text is valid JSON. Text
// that is not (a json_valid CHECK dropped, or never enforced) stays a
// string.
func isMariaJSON(col *tablemap.Column, v change.Value) bool {
	return col.JSON && v.Kind() == change.String && json.Valid(v.Bytes())
}
