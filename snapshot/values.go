package snapshot

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/rowevent"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// converter turns a row as the snapshot's SELECT returns it into the
// change.Row the binlog would give for it. Strings, BIT, GEOMETRY, ENUM
// and SET are put back into their binlog cell form and decoded by
// rowevent's own cell decoder, so charsets, BINARY padding, labels and
// the ENUM error value come out exactly as in 'read'. Numbers and
// temporal text are exact in the forms selected (FLOAT is read as DOUBLE,
// every bit of it; the session's time zone is UTC).
type converter struct {
	dec  rowevent.CellDecoder
	cell []byte
	row  change.Row
	// lazyUTF8: text in a UTF-8 or ASCII charset becomes
	// change.UncheckedText, for a sink that checks it as it encodes it
	// (sink/jsonl: rowevent.Decoder.LazyUTF8 for 'read'), so that it is
	// read once, not twice, or that passes it on as it is (sink/mysql).
	lazyUTF8 bool
}

// convert returns the row's values, valid until the next call. Each value
// is written in place in the row (a change.Value returned by value and
// then appended cost 12% of the snapshot's client CPU in copies).
func (cv *converter) convert(ts *tableSchema, cells []textCell) (change.Row, error) {
	cv.dec.Reset()
	cv.dec.SetLazyUTF8(cv.lazyUTF8) // COMPRESSED text, as the binlog's
	cv.cell = cv.cell[:0]
	if cap(cv.row) < len(cells) {
		cv.row = make(change.Row, len(cells))
	}
	row := cv.row[:len(cells)]
	cols, kinds := ts.table.Columns[:len(cells)], ts.cols[:len(cells)]
	for i := range cells {
		if err := cv.value(&row[i], &cols[i], kinds[i].kind, &cells[i]); err != nil {
			return nil, fmt.Errorf("column %s: %w", tablemap.QuoteIdent(cols[i].Name), err)
		}
	}
	return row, nil
}

// value sets *dst to the value of one cell.
func (cv *converter) value(dst *change.Value, col *tablemap.Column, kind readKind, f *textCell) error {
	if f.null {
		*dst = change.NullValue()
		return nil
	}
	raw := f.b
	var err error
	switch kind {
	case readUTF8:
		if cv.lazyUTF8 {
			*dst = change.UncheckedText(raw, col.Collation)
			return nil
		}
		// What the cell decoder gives for valid UTF-8, without the cell.
		if utf8.Valid(raw) {
			*dst = change.TextValue(change.String, raw)
			return nil
		}
	case readInt:
		switch {
		case col.Type == mysql.MYSQL_TYPE_YEAR:
			var n uint64
			n, err = intOf(raw)
			*dst = change.IntValue(int64(n))
		case col.Unsigned:
			var n uint64
			n, err = intOf(raw)
			*dst = change.UintValue(n)
		default:
			var n int64
			n, err = parseInt(raw)
			*dst = change.IntValue(n)
		}
		return err
	case readFloat, readDouble:
		x, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return err
		}
		if kind == readFloat {
			if x != 0 && math.Abs(x) < math.MaxFloat32 && float64(float32(x)) != x {
				return fmt.Errorf("FLOAT read as %v, which no float32 holds", x)
			}
			*dst = change.Float32Value(float32(x))
			return nil
		}
		*dst = change.Float64Value(x)
		return nil
	case readText:
		k := change.String
		switch col.Type {
		case mysql.MYSQL_TYPE_NEWDECIMAL:
			k = change.Decimal
		case mysql.MYSQL_TYPE_DATE:
			k = change.Date
		case mysql.MYSQL_TYPE_DATETIME2:
			k = change.Datetime
		case mysql.MYSQL_TYPE_TIME2:
			k = change.Time
		case mysql.MYSQL_TYPE_JSON:
			k = change.JSON
		}
		*dst = change.TextValue(k, raw)
		return nil
	case readTimestamp:
		sec, err := unixSeconds(string(raw))
		if err != nil {
			return err
		}
		*dst = change.TimestampValue(sec, raw)
		return nil
	case readEnumLabel:
		// The value decodeEnum gives for the member's index.
		if len(raw) == 0 {
			*dst = change.EnumValue(0, nil)
			return nil
		}
		for i, l := range col.EnumValues {
			if string(raw) == l {
				*dst = change.EnumValue(uint64(i+1), raw)
				return nil
			}
		}
		return fmt.Errorf("ENUM value %q is none of its members", raw)
	case readIndex:
		n, err := intOf(raw)
		if err != nil {
			return err
		}
		at := len(cv.cell)
		for i := 0; i < col.Length; i++ {
			cv.cell = append(cv.cell, byte(n>>(8*i)))
		}
		*dst, err = cv.dec.Decode(cv.cell[at:], col)
		return err
	}
	*dst, err = cv.cellValue(col, raw)
	return err
}

// cellValue decodes raw as the binlog cell of col.
func (cv *converter) cellValue(col *tablemap.Column, raw []byte) (change.Value, error) {
	// readCell (and readUTF8 text that is not valid UTF-8): the bytes as
	// the binlog logs them.
	// Each cell goes after the row's earlier ones: their values may point
	// into them (a grown buffer leaves the old one to them).
	at := len(cv.cell)
	switch col.Type {
	case mysql.MYSQL_TYPE_BIT:
		cv.cell = append(cv.cell, raw...)
		return cv.dec.Decode(cv.cell[at:], col)
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR:
		max := col.Length
		if col.Compressed {
			max++
		}
		if max < 256 {
			cv.cell = append(cv.cell, 0)
		} else {
			cv.cell = append(cv.cell, 0, 0)
		}
	default: // BLOB, GEOMETRY: the pack length
		for i := 0; i < col.Length; i++ {
			cv.cell = append(cv.cell, 0)
		}
	}
	n := len(raw)
	if col.Compressed && n > 0 {
		n++ // stored uncompressed behind a 0x00 header
		cv.cell = append(cv.cell, 0)
	}
	prefix := len(cv.cell) - at
	if col.Compressed && n > 0 {
		prefix--
	}
	if prefix < 4 && uint64(n) >= 1<<(8*uint(prefix)) {
		return change.Value{}, fmt.Errorf("a value of %d bytes does not fit the column", len(raw))
	}
	var l [4]byte
	binary.LittleEndian.PutUint32(l[:], uint32(n))
	copy(cv.cell[at:at+prefix], l[:prefix])
	cv.cell = append(cv.cell, raw...)
	return cv.dec.Decode(cv.cell[at:], col)
}

// parseInt reads a signed integer's text without a string conversion.
func parseInt(b []byte) (int64, error) {
	neg := len(b) > 0 && b[0] == '-'
	digits := b
	if neg {
		digits = b[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return strconv.ParseInt(string(b), 10, 64) // long (or odd): the exact check
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return strconv.ParseInt(string(b), 10, 64)
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// intOf reads an unsigned integer's text (ENUM/SET+0, YEAR, UNSIGNED);
// a float's text (a result the server typed as DOUBLE) is truncated.
func intOf(b []byte) (uint64, error) {
	if len(b) > 0 && len(b) <= 19 {
		var n uint64
		ok := true
		for _, c := range b {
			if c < '0' || c > '9' {
				ok = false
				break
			}
			n = n*10 + uint64(c-'0')
		}
		if ok {
			return n, nil
		}
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		if x, ferr := strconv.ParseFloat(string(b), 64); ferr == nil {
			return uint64(x), nil
		}
	}
	return n, err
}

// unixSeconds reads a TIMESTAMP's UTC text; the zero timestamp is 0.
func unixSeconds(s string) (uint64, error) {
	if len(s) >= 19 && s[:19] == "0000-00-00 00:00:00" {
		return 0, nil
	}
	if len(s) > 19 {
		s = s[:19]
	}
	t, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		return 0, fmt.Errorf("TIMESTAMP %q: %w", s, err)
	}
	return uint64(t.Unix()), nil
}
