// Package jsontext writes JSON strings: the one escaper that the JSON
// rendering of MySQL's binary JSON (rowevent) and the JSON line encoder
// (sink/jsonl) share.
package jsontext

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
	"unsafe"
)

// AppendStringOf is AppendString for a string.
func AppendStringOf(b []byte, s string) []byte {
	// Read-only view of the string's bytes: AppendString does not keep or
	// change them.
	return AppendString(b, unsafe.Slice(unsafe.StringData(s), len(s)))
}

const hexDigits = "0123456789abcdef"

// SWAR constants: one in every byte, and every byte's top bit.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special8 marks the bytes of w (8 of them, little-endian) that need an
// escape or a UTF-8 check: a byte below 0x20, '"', '\\' or one of 0x80 or
// more gets its top bit set. The lowest marked byte is always one of
// these; a marked byte above it may not be (a borrow runs upwards).
func special8(w uint64) uint64 {
	ctl := (w - lsb*0x20) &^ w // a byte below 0x20
	quote := w ^ lsb*'"'
	quote = (quote - lsb) &^ quote // a '"' byte
	bs := w ^ lsb*'\\'
	bs = (bs - lsb) &^ bs // a '\\' byte
	return (w | ctl | quote | bs) & msb
}

// AppendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// so the output is always valid UTF-8; control characters are escaped,
// and so are U+2028 and U+2029 (safe to embed in JavaScript too).
func AppendString(b []byte, s []byte) []byte {
	b, _ = appendString(b, s, false)
	return b
}

// AppendValidString is AppendString for text that ought to be valid
// UTF-8: at the first byte that is not, it stops and returns b as it was
// and false (the caller then makes the text valid its own way), so that
// one pass both checks and escapes it.
func AppendValidString(b []byte, s []byte) ([]byte, bool) {
	return appendString(b, s, true)
}

func appendString(b []byte, s []byte, strict bool) ([]byte, bool) {
	n0 := len(b)
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Most text is plain ASCII: skip it 8 bytes at a time, and in the
		// 8 bytes that are not all plain, straight to the first that is not.
		for i+8 <= len(s) {
			m := special8(binary.LittleEndian.Uint64(s[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
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
		// A 2-byte sequence (Latin letters with accents, Greek,
		// Cyrillic…) is valid when its lead is C2-DF and the next byte a
		// continuation byte: no escape, no need to decode it.
		if c >= 0xc2 && c < 0xe0 && i+1 < len(s) && s[i+1]&0xc0 == 0x80 {
			i += 2
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			if strict {
				return b[:n0], false
			}
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
	return append(b, '"'), true
}
