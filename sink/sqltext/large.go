package sqltext

import (
	"encoding/binary"
	"encoding/hex"
	"io"

	"github.com/binlogcdc/binlogcdc/change"
)

// Large values. A statement is normally built whole (Builder.SQL) and then
// written; with a 200 MB BLOB its X'…' literal alone is 400 MB, on top of
// the row. A row holding a value of largeValue bytes or more can instead
// be written with WriteTuple, which writes such a value's literal a piece
// at a time, so the tuple costs a constant beyond the row. The bytes are
// exactly InsertTuple's (TestWriteTupleSameBytes).
var largeValue = 1 << 20 // a variable for the tests

// largePiece is how many bytes of a large value are encoded at a time.
var largePiece = 64 << 10

// streamed reports whether v's literal is one WriteTuple writes in
// pieces: a large value of a kind whose literal never fails.
func streamed(v change.Value) bool {
	if len(v.Bytes()) < largeValue {
		return false
	}
	switch v.Kind() {
	case change.Bytes, change.Vector, change.Geometry, change.String, change.JSON:
		return true
	case change.Set:
		return !SetByNumber(v) // else its number
	case change.Enum:
		return v.Uint() != 0
	}
	return false
}

// HasLarge reports whether the columns cols of row hold a value WriteTuple
// writes in pieces.
func HasLarge(cols []int, row change.Row) bool {
	for _, i := range cols {
		if streamed(row[i]) {
			return true
		}
	}
	return false
}

// WriteTuple writes prefix and then "(v1,v2)" for the columns cols of
// row to w: the bytes of prefix and InsertTuple's, with the literals of
// large values written a piece at a time. buf is scratch space, returned
// for reuse. Every literal is checked before anything is written: an
// error leaves w untouched.
func WriteTuple(w io.Writer, buf, prefix []byte, cols []int, row change.Row) ([]byte, error) {
	buf, err := checkTuple(buf, cols, row)
	if err != nil {
		return buf, err
	}
	if _, err := w.Write(prefix); err != nil {
		return buf, err
	}
	buf = append(buf[:0], '(')
	for n, i := range cols {
		if n > 0 {
			buf = append(buf, ',')
		}
		v := row[i]
		if !streamed(v) {
			buf, _ = AppendLiteral(buf, v)
			continue
		}
		if buf, err = writeLarge(w, buf, v); err != nil {
			return buf, err
		}
	}
	buf = append(buf, ')')
	_, err = w.Write(buf)
	return buf[:0], err
}

// checkTuple returns the error InsertTuple would meet, if any.
func checkTuple(buf []byte, cols []int, row change.Row) ([]byte, error) {
	for _, i := range cols {
		if !streamed(row[i]) {
			var err error
			if buf, err = AppendLiteral(buf[:0], row[i]); err != nil {
				return buf, err
			}
		}
	}
	return buf[:0], nil
}

// writeLarge writes buf and then v's literal (AppendLiteral's bytes) to
// w, and returns buf emptied.
func writeLarge(w io.Writer, buf []byte, v change.Value) ([]byte, error) {
	b := v.Bytes()
	hexPieces := func(b []byte) error {
		for len(b) > 0 {
			n := min(len(b), largePiece)
			buf = hex.AppendEncode(buf, b[:n])
			b = b[n:]
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
		return nil
	}
	switch v.Kind() {
	case change.Bytes, change.Vector:
		buf = append(buf, "X'"...)
	case change.Geometry:
		// GeometryBytes: the SRID (4 bytes, little-endian), then the WKB.
		buf = append(buf, "X'"...)
		buf = hex.AppendEncode(buf, binary.LittleEndian.AppendUint32(nil, uint32(v.Uint())))
	default: // text: AppendText
		if !plainText(b) {
			buf = append(buf, "_utf8mb4 X'"...)
			break
		}
		buf = append(buf, "_utf8mb4'"...)
		for len(b) > 0 {
			n := min(len(b), largePiece)
			for _, c := range b[:n] {
				if c == '\'' {
					buf = append(buf, '\'')
				}
				buf = append(buf, c)
			}
			b = b[n:]
			if _, err := w.Write(buf); err != nil {
				return buf, err
			}
			buf = buf[:0]
		}
		return append(buf, '\''), nil
	}
	if err := hexPieces(b); err != nil {
		return buf, err
	}
	return append(buf, '\''), nil
}

// plainText reports whether AppendText writes s quoted rather than as
// hexadecimal.
func plainText(s []byte) bool {
	for _, c := range s {
		if c == '\\' || (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f {
			return false
		}
	}
	return true
}
