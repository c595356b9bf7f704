package snapshot

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

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

func (cv *converter) convert(ts *tableSchema, fields []mysql.FieldValue) (change.Row, error) {
	cv.dec.Reset()
	cv.cell = cv.cell[:0]
	cv.row = cv.row[:0]
	for i := range fields {
		v, err := cv.value(&ts.table.Columns[i], ts.cols[i].kind, &fields[i])
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", tablemap.QuoteIdent(ts.table.Columns[i].Name), err)
		}
		cv.row = append(cv.row, v)
	}
	return cv.row, nil
}

func (cv *converter) value(col *tablemap.Column, kind readKind, f *mysql.FieldValue) (change.Value, error) {
	if f.Type == mysql.FieldValueTypeNull {
		return change.NullValue(), nil
	}
	switch kind {
	case readInt:
		switch {
		case col.Type == mysql.MYSQL_TYPE_YEAR:
			n, err := intOf(f)
			return change.IntValue(int64(n)), err
		case col.Unsigned:
			n, err := intOf(f)
			return change.UintValue(n), err
		}
		if f.Type == mysql.FieldValueTypeSigned {
			return change.IntValue(f.AsInt64()), nil
		}
		n, err := strconv.ParseInt(string(f.AsString()), 10, 64)
		return change.IntValue(n), err
	case readFloat, readDouble:
		x, err := floatOf(f)
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
		return change.TextValue(k, f.AsString()), nil
	case readTimestamp:
		text := f.AsString()
		sec, err := unixSeconds(string(text))
		if err != nil {
			return change.Value{}, err
		}
		return change.TimestampValue(sec, text), nil
	case readIndex:
		n, err := intOf(f)
		if err != nil {
			return change.Value{}, err
		}
		at := len(cv.cell)
		for i := 0; i < col.Length; i++ {
			cv.cell = append(cv.cell, byte(n>>(8*i)))
		}
		return cv.dec.Decode(cv.cell[at:], col)
	}
	// readCell: the bytes as the binlog logs them.
	// Each cell goes after the row's earlier ones: their values may point
	// into them (a grown buffer leaves the old one to them).
	raw := f.AsString()
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

func intOf(f *mysql.FieldValue) (uint64, error) {
	switch f.Type {
	case mysql.FieldValueTypeUnsigned:
		return f.AsUint64(), nil
	case mysql.FieldValueTypeSigned:
		return uint64(f.AsInt64()), nil
	case mysql.FieldValueTypeFloat:
		return uint64(f.AsFloat64()), nil
	}
	return strconv.ParseUint(string(f.AsString()), 10, 64)
}

func floatOf(f *mysql.FieldValue) (float64, error) {
	if f.Type == mysql.FieldValueTypeFloat {
		return f.AsFloat64(), nil
	}
	return strconv.ParseFloat(string(f.AsString()), 64)
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
