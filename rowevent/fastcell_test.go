package rowevent

import (
	"bytes"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
)

// FuzzFastCell checks that fastCell, where it decodes a cell, gives what
// decodeCell gives, and that where it does not, it leaves the value and
// the arena alone.
func FuzzFastCell(f *testing.F) {
	f.Add(byte(3), uint16(0), uint8(0), []byte("\x01\x02\x03\x04"))                  // INT
	f.Add(byte(4), uint16(0), uint8(1), []byte("\xff\xff\xff\xff\xff\xff\xff\xff"))  // BIGINT UNSIGNED
	f.Add(byte(9), uint16(0x0a02), uint8(0), []byte("\x80\x00\x03\xe7\x63"))         // DECIMAL(10,2)
	f.Add(byte(9), uint16(0x0c02), uint8(0), []byte("\x7f\xff\xff\x9f\xc7\xd8"))     // DECIMAL(12,2) < 0
	f.Add(byte(12), uint16(6), uint8(0), []byte("\x99\xb3\x9e\xc8\xb8\x01\xe2\x40")) // DATETIME(6)
	f.Add(byte(12), uint16(3), uint8(0), []byte("\x99\xb3\x9e\xc8\xb8\x01\xe2"))     // DATETIME(3)
	f.Add(byte(12), uint16(0), uint8(0), []byte("\xff\xff\xff\xff\xff"))             // DATETIME year > 9999
	f.Add(byte(19), uint16(400), uint8(0x10), []byte("\x05\x00hello"))               // VARCHAR utf8mb4
	f.Add(byte(18), uint16(4), uint8(0x10), []byte("\x01\xde"))                      // BINARY(4)
	f.Add(byte(21), uint16(2), uint8(0x20), []byte("\x03\x00ab\xff"))                // TEXT, invalid UTF-8
	f.Fuzz(func(t *testing.T, typ byte, meta uint16, flags uint8, data []byte) {
		col := fuzzColumn(typ, meta, flags)
		data = data[:len(data):len(data)]
		for _, lazy := range []bool{false, true} {
			var fa, sa arena
			fa.buf = append(fa.buf, "sentinel"...)
			sa.buf = append(sa.buf, "sentinel"...)
			fa.lazyUTF8, sa.lazyUTF8 = lazy, lazy
			var got change.Value
			n, ok := fastCell(&fa, data, &col, &got)
			if !ok {
				if n != 0 || !got.IsAbsent() || string(fa.buf) != "sentinel" {
					t.Fatalf("fastCell declined with n=%d v=%s arena %q", n, cellShow(got), fa.buf)
				}
				continue
			}
			want, wn, err := decodeCell(&sa, data, &col)
			if err != nil {
				t.Fatalf("fastCell gave %s, decodeCell %v", cellShow(got), err)
			}
			if n != wn || got.Kind() != want.Kind() || got.Uint() != want.Uint() || !bytes.Equal(got.Bytes(), want.Bytes()) ||
				(got.Bytes() == nil) != (want.Bytes() == nil) || cap(got.Bytes()) != len(got.Bytes()) {
				t.Fatalf("fastCell gave %s (%d bytes), decodeCell %s (%d bytes)", cellShow(got), n, cellShow(want), wn)
			}
			if !bytes.Equal(fa.buf, sa.buf) {
				t.Fatalf("arena %q, decodeCell's %q", fa.buf, sa.buf)
			}
		}
	})
}
