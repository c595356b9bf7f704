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
}

func (cv *converter) convert(ts *tableSchema, cells []textCell) (change.Row, error) {
	cv.dec.Reset()
	cv.cell = cv.cell[:0]
	cv.row = cv.row[:0]
	for i := range cells {
		v, err := cv.value(&ts.table.Columns[i], ts.cols[i].kind, &cells[i])
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", tablemap.QuoteIdent(ts.table.Columns[i].Name), err)
		}
		cv.row = append(cv.row, v)
	}
	return cv.row, nil
}

func (cv *converter) value(col *tablemap.Column, kind readKind, f *textCell) (change.Value, error) {
	if f.null {
		return change.NullValue(), nil
	}
	raw := f.b
	switch kind {
	case readUTF8:
		// What the cell decoder gives for valid UTF-8, without the cell.
		if utf8.Valid(raw) {
			return change.TextValue(change.String, raw), nil
		}
	case readInt:
		switch {
		case col.Type == mysql.MYSQL_TYPE_YEAR:
			n, err := intOf(raw)
			return change.IntValue(int64(n)), err
		case col.Unsigned:
			n, err := intOf(raw)
			return change.UintValue(n), err
		}
		n, err := parseInt(raw)
		return change.IntValue(n), err
	case readFloat, readDouble:
		x, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return change.Value{}, err
		}
		if kind == readFloat {
			if x != 0 && math.Abs(x) < math.MaxFloat32 && float64(float32(x)) != x {
				return change.Value{}, fmt.Errorf("FLOAT read as %v, which no float32 holds", x)
			}
			return change.Float32Value(float32(x)), nil
		}
		return change.Float64Value(x), nil
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
		return change.TextValue(k, raw), nil
	case readTimestamp:
		sec, err := unixSeconds(string(raw))
		if err != nil {
			return change.Value{}, err
		}
		return change.TimestampValue(sec, raw), nil
	case readIndex:
		n, err := intOf(raw)
		if err != nil {
			return change.Value{}, err
		}
		at := len(cv.cell)
		for i := 0; i < col.Length; i++ {
			cv.cell = append(cv.cell, byte(n>>(8*i)))
		}
		return cv.dec.Decode(cv.cell[at:], col)
	}
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
