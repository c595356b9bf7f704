package rowevent

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// fuzzTypes are the type codes FuzzDecodeCell maps its type byte onto
// (plus a few it should refuse).
var fuzzTypes = []byte{
	mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG,
	mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_YEAR, mysql.MYSQL_TYPE_BIT, mysql.MYSQL_TYPE_FLOAT,
	mysql.MYSQL_TYPE_DOUBLE, mysql.MYSQL_TYPE_NEWDECIMAL, mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE,
	mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP2, mysql.MYSQL_TYPE_TIME2,
	mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIME,
	mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_BLOB,
	mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET, mysql.MYSQL_TYPE_JSON, mysql.MYSQL_TYPE_GEOMETRY,
	mysql.MYSQL_TYPE_VECTOR, mysql.MYSQL_TYPE_NULL, mysql.MYSQL_TYPE_DECIMAL,
	tablemap.TypeBlobCompressed, tablemap.TypeVarcharCompressed,
}

var fuzzCollations = []uint32{45, 63, 255, 0, 8, 33}

// fuzzColumn builds a column from the fuzzer's type index, metadata and
// flags, covering in- and out-of-range metadata.
func fuzzColumn(typ byte, meta uint16, flags uint8) tablemap.Column {
	labels := make([]string, int(flags>>1)%70)
	for i := range labels {
		labels[i] = string(rune('a' + i%26))
	}
	m := int(meta)
	col := tablemap.Column{
		Name:       "f",
		Type:       fuzzTypes[int(typ)%len(fuzzTypes)],
		Length:     m % 1100, // CHAR/VARCHAR byte lengths
		Precision:  m >> 8 % 70,
		Scale:      m & 0xff % 40,
		FSP:        m % 8,
		Bits:       m % 70,
		Unsigned:   flags&1 != 0,
		Collation:  fuzzCollations[int(flags>>4)%len(fuzzCollations)],
		EnumValues: labels,
		SetValues:  labels,
	}
	switch col.Type {
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_JSON, mysql.MYSQL_TYPE_GEOMETRY, mysql.MYSQL_TYPE_VECTOR,
		mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET:
		col.Length = m % 10 // pack lengths, 0 and 5..9 out of range
	case tablemap.TypeBlobCompressed: // as tablemap.FromEventBody makes them
		col.Type, col.Compressed, col.Length = mysql.MYSQL_TYPE_BLOB, true, m%10
	case tablemap.TypeVarcharCompressed:
		col.Type, col.Compressed = mysql.MYSQL_TYPE_VARCHAR, true
	}
	return col
}

func FuzzDecodeCell(f *testing.F) {
	f.Add(byte(24), uint16(4), uint8(0), []byte("\x02\x00\x00\x00\x04\x01"))       // JSON true
	f.Add(byte(9), uint16(0x0a02), uint8(0), []byte("\x80\x00\x03\xe7\x63"))       // DECIMAL(10,2)
	f.Add(byte(14), uint16(6), uint8(0), []byte("\x7f\xff\xff\xff\xff\xff"))       // TIME2(6)
	f.Add(byte(18), uint16(4), uint8(0x10), []byte("\x01\xde"))                    // BINARY(4)
	f.Add(byte(23), uint16(8), uint8(128), []byte("\xff\xff\xff\xff\xff\xff\xff")) // SET 64
	f.Fuzz(func(t *testing.T, typ byte, meta uint16, flags uint8, data []byte) {
		col := fuzzColumn(typ, meta, flags)
		var a arena
		a.buf = append(a.buf, "sentinel"...)
		v, n, err := decodeCell(&a, data[:len(data):len(data)], &col)
		if string(a.buf[:8]) != "sentinel" {
			t.Fatalf("arena prefix overwritten")
		}
		if err != nil {
			var ce *CellError
			if !errors.As(err, &ce) || n != 0 || !v.IsAbsent() {
				t.Fatalf("error %v with n=%d v=%s", err, n, cellShow(v))
			}
			return
		}
		if n < 1 || n > len(data) {
			t.Fatalf("n = %d for %d bytes", n, len(data))
		}
		switch v.Kind() {
		case change.JSON, change.Decimal, change.Date, change.Datetime, change.Timestamp, change.Time,
			change.String, change.Enum, change.Set:
			if !utf8.Valid(v.Bytes()) {
				t.Fatalf("%s text is not UTF-8: %q", v.Kind(), v.Bytes())
			}
		}
		if v.Kind() == change.JSON && !json.Valid(v.Bytes()) {
			t.Fatalf("invalid JSON %q", v.Bytes())
		}
	})
}

func FuzzJSONBinary(f *testing.F) {
	f.Add([]byte("\x00\x02\x00\x19\x00\x12\x00\x01\x00\x13\x00\x02\x00\x04\x00\x00\x02\x15\x00kab\x00\x00\x04\x00"))
	f.Add([]byte("\x0f\xf6\x06\x06\x03\x80\x7b\x01\xc8"))
	f.Add([]byte("\x0c\x05hello"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, err := appendJSONBinary([]byte("x"), doc)
		if err != nil {
			if string(out) != "x" {
				t.Fatalf("dst changed on error")
			}
			return
		}
		if !json.Valid(out[1:]) || !utf8.Valid(out[1:]) {
			t.Fatalf("invalid JSON %q", out[1:])
		}
		if len(out) > 24*len(doc)+256 {
			t.Fatalf("%d bytes of output for %d of input", len(out), len(doc))
		}
	})
}
