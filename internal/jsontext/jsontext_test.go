package jsontext

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
	"unicode/utf8"
)

// refAppendStr is AppendString before its ASCII fast path: one byte at a time.
func refAppendStr(b []byte, s []byte) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func TestAppendStringMatchesReference(t *testing.T) {
	// Every byte value at every offset of a 17-byte run of plain text,
	// so that each lands in both the 8-byte fast path and the tail.
	base := []byte("abcdefghijklmnopq")
	var cases [][]byte
	for c := 0; c < 256; c++ {
		for at := range base {
			s := bytes.Clone(base)
			s[at] = byte(c)
			cases = append(cases, s)
		}
	}
	for _, s := range []string{"", "x", "héllo wörld", "\u2028\u2029 in text", "tab\there\nnew \"q\" \\ back", "\x00\x1f\x7f\x80\xff", "日本語のテキスト、少し長めのもの。"} {
		cases = append(cases, []byte(s))
	}
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte("ab \"\\\n\x01\x7f\xc3\xa9\xe2\x80\xa8\xff")
	for range 20000 {
		s := make([]byte, rng.Intn(40))
		for i := range s {
			if rng.Intn(4) == 0 {
				s[i] = alphabet[rng.Intn(len(alphabet))]
			} else {
				s[i] = byte(0x20 + rng.Intn(0x5f))
			}
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		got := AppendString([]byte("x"), s)
		want := refAppendStr([]byte("x"), s)
		if !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
		if gs := AppendStringOf(nil, string(s)); !bytes.Equal(gs, want[1:]) {
			t.Fatalf("%q as string: got %s, want %s", s, gs, want[1:])
		}
		if gv, ok := AppendValidString([]byte("x"), s); ok != utf8.Valid(s) || ok && !bytes.Equal(gv, want) || !ok && string(gv) != "x" {
			t.Fatalf("%q: AppendValidString gave %s, %v", s, gv, ok)
		}
		var back string
		if err := json.Unmarshal(got[1:], &back); err != nil {
			t.Fatalf("%q: %s is not JSON: %v", s, got[1:], err)
		}
	}
}

// FuzzAppendString checks AppendString and AppendValidString against the
// byte-at-a-time reference on any input.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text!", "café naïve Zürich \"q\" \\", "\xc2\x80\xdf\xbf\xc0\x80\xc1\xbf\xe2\x80\xa8", "\x00\x1f\x7f\x80\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		want := refAppendStr([]byte("x"), s)
		if got := AppendString([]byte("x"), s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
		if gv, ok := AppendValidString([]byte("x"), s); ok != utf8.Valid(s) || ok && !bytes.Equal(gv, want) || !ok && string(gv) != "x" {
			t.Fatalf("%q: AppendValidString gave %s, %v", s, gv, ok)
		}
	})
}
