package rowevent

import (
	"encoding/binary"
	"math"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// decodeCell decodes one non-NULL cell: see cell_contract.go. Text it
// produces goes into a; byte slices in v point into data or a.
func decodeCell(a *arena, data []byte, col *tablemap.Column) (v change.Value, n int, err error) {
	v, n, err = decodeValue(a, data, col)
	if err == nil && (n < 0 || n > len(data)) { // cannot happen; keep the contract anyway
		err = errTruncated(uint64(n), len(data))
	}
	if err != nil {
		typ := col.Type
		if col.Compressed && typ == mysql.MYSQL_TYPE_VARCHAR {
			typ = tablemap.TypeVarcharCompressed
		} else if col.Compressed {
			typ = tablemap.TypeBlobCompressed
		}
		return change.Value{}, 0, &CellError{Column: col.Name, Type: typ, Err: err}
	}
	return v, n, nil
}

func decodeValue(a *arena, data []byte, col *tablemap.Column) (change.Value, int, error) {
	if col.Compressed {
		return decodeCompressedString(a, data, col)
	}
	switch col.Type {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24,
		mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG:
		return decodeInt(data, col)
	case mysql.MYSQL_TYPE_YEAR:
		if len(data) < 1 {
			return change.Value{}, 0, errTruncated(1, len(data))
		}
		if data[0] == 0 {
			return change.IntValue(0), 1, nil
		}
		return change.IntValue(1900 + int64(data[0])), 1, nil
	case mysql.MYSQL_TYPE_BIT:
		return decodeBit(data, col)
	case mysql.MYSQL_TYPE_FLOAT:
		if len(data) < 4 {
			return change.Value{}, 0, errTruncated(4, len(data))
		}
		return change.Float32Value(math.Float32frombits(binary.LittleEndian.Uint32(data))), 4, nil
	case mysql.MYSQL_TYPE_DOUBLE:
		if len(data) < 8 {
			return change.Value{}, 0, errTruncated(8, len(data))
		}
		return change.Float64Value(math.Float64frombits(binary.LittleEndian.Uint64(data))), 8, nil
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		return decodeNewDecimal(a, data, col)
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		return decodeDate(a, data)
	case mysql.MYSQL_TYPE_DATETIME2:
		return decodeDatetime2(a, data, col)
	case mysql.MYSQL_TYPE_TIMESTAMP2:
		return decodeTimestamp2(a, data, col)
	case mysql.MYSQL_TYPE_TIME2:
		return decodeTime2(a, data, col)
	case mysql.MYSQL_TYPE_DATETIME:
		return decodeOldDatetime(a, data, col)
	case mysql.MYSQL_TYPE_TIMESTAMP:
		return decodeOldTimestamp(a, data, col)
	case mysql.MYSQL_TYPE_TIME:
		return decodeOldTime(a, data, col)
	case mysql.MYSQL_TYPE_STRING, mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
		return decodeString(a, data, col, stringPrefix(col.Length))
	case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_TINY_BLOB,
		mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB:
		return decodeString(a, data, col, col.Length)
	case mysql.MYSQL_TYPE_ENUM:
		return decodeEnum(a, data, col)
	case mysql.MYSQL_TYPE_SET:
		return decodeSet(a, data, col)
	case mysql.MYSQL_TYPE_JSON:
		return decodeJSONCell(a, data, col)
	case mysql.MYSQL_TYPE_GEOMETRY:
		return decodeGeometry(data, col)
	case mysql.MYSQL_TYPE_VECTOR:
		return decodeVector(data, col)
	}
	return change.Value{}, 0, ErrUnsupportedType
}

var intSizes = [...]int{
	mysql.MYSQL_TYPE_TINY:     1,
	mysql.MYSQL_TYPE_SHORT:    2,
	mysql.MYSQL_TYPE_INT24:    3,
	mysql.MYSQL_TYPE_LONG:     4,
	mysql.MYSQL_TYPE_LONGLONG: 8,
}

// decodeInt reads a little-endian integer of 1, 2, 3, 4 or 8 bytes.
func decodeInt(data []byte, col *tablemap.Column) (change.Value, int, error) {
	size := intSizes[col.Type]
	if len(data) < size {
		return change.Value{}, 0, errTruncated(uint64(size), len(data))
	}
	u := leUint(data[:size])
	if col.Unsigned {
		return change.UintValue(u), size, nil
	}
	shift := uint(64 - 8*size) // sign-extend from the top bit of the width
	return change.IntValue(int64(u<<shift) >> shift), size, nil
}

// decodeBit reads BIT(n): (n+7)/8 bytes, big-endian.
func decodeBit(data []byte, col *tablemap.Column) (change.Value, int, error) {
	if col.Bits < 1 || col.Bits > 64 {
		return change.Value{}, 0, errBadMeta("BIT(%d)", col.Bits)
	}
	size := (col.Bits + 7) / 8
	if len(data) < size {
		return change.Value{}, 0, errTruncated(uint64(size), len(data))
	}
	return change.UintValue(beUint(data[:size])), size, nil
}

// leUint reads up to 8 bytes as a little-endian unsigned integer.
func leUint(b []byte) uint64 {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	return u
}

// beUint reads up to 8 bytes as a big-endian unsigned integer.
func beUint(b []byte) uint64 {
	var u uint64
	for _, c := range b {
		u = u<<8 | uint64(c)
	}
	return u
}

// stringPrefix is the size of the length prefix of CHAR and VARCHAR
// values: 1 byte when the column's max byte length is below 256, else 2.
func stringPrefix(maxLen int) int {
	if maxLen < 256 {
		return 1
	}
	return 2
}

// lenPrefixed splits off a value preceded by a size-byte little-endian
// length (size 1..4). The payload's capacity is capped at its length.
func lenPrefixed(data []byte, size int) ([]byte, int, error) {
	if size < 1 || size > 4 {
		return nil, 0, errBadMeta("length prefix of %d bytes", size)
	}
	if len(data) < size {
		return nil, 0, errTruncated(uint64(size), len(data))
	}
	l := leUint(data[:size])
	if l > uint64(len(data)-size) {
		return nil, 0, errTruncated(uint64(size)+l, len(data))
	}
	n := size + int(l)
	return data[size:n:n], n, nil
}

// decodeString handles CHAR/BINARY, VARCHAR/VARBINARY and the BLOB/TEXT
// family: binary collation gives Bytes, anything else UTF-8 String.
func decodeString(a *arena, data []byte, col *tablemap.Column, prefix int) (change.Value, int, error) {
	raw, n, err := lenPrefixed(data, prefix)
	if err != nil {
		return change.Value{}, 0, err
	}
	if col.IsBinary() {
		// BINARY(n) is logged with its trailing 0x00 padding stripped:
		// put it back, as the column holds exactly n bytes.
		if col.Type == mysql.MYSQL_TYPE_STRING && len(raw) < col.Length {
			if col.Length > 0xffff {
				return change.Value{}, 0, errBadMeta("BINARY length %d", col.Length)
			}
			s := a.start()
			a.buf = append(a.buf, raw...)
			for i := len(raw); i < col.Length; i++ {
				a.buf = append(a.buf, 0)
			}
			return change.TextValue(change.Bytes, a.since(s)), n, nil
		}
		return change.TextValue(change.Bytes, raw), n, nil
	}
	if a.lazyUTF8 && charset.IsUTF8Compatible(col.Collation) {
		return change.UncheckedText(raw, col.Collation), n, nil
	}
	text, err := toUTF8(a, col.Collation, raw)
	if err != nil {
		return change.Value{}, 0, err
	}
	return change.TextValue(change.String, text), n, nil
}

// toUTF8 returns raw as UTF-8: raw itself when the collation's charset is
// UTF-8 already (and the bytes are valid), else a conversion written into
// the arena (invalid sequences become U+FFFD).
func toUTF8(a *arena, collation uint32, raw []byte) ([]byte, error) {
	if charset.IsUTF8Compatible(collation) && utf8.Valid(raw) {
		return raw, nil
	}
	s := a.start()
	out, err := charset.Decode(a.buf, collation, raw)
	if err != nil {
		return nil, err
	}
	a.buf = out
	return a.since(s), nil
}

// decodeEnum reads the 1-based member index (1 or 2 bytes, little-endian).
func decodeEnum(a *arena, data []byte, col *tablemap.Column) (change.Value, int, error) {
	size := col.Length
	if size != 1 && size != 2 {
		return change.Value{}, 0, errBadMeta("ENUM pack length %d", size)
	}
	if len(data) < size {
		return change.Value{}, 0, errTruncated(uint64(size), len(data))
	}
	idx := leUint(data[:size])
	if idx == 0 { // the "error value" stored for invalid input in non-strict mode
		return change.EnumValue(0, nil), size, nil
	}
	if idx > uint64(len(col.EnumValues)) {
		return change.Value{}, 0, errBadValue("ENUM index %d, column has %d members", idx, len(col.EnumValues))
	}
	s := a.start()
	a.buf = append(a.buf, col.EnumValues[idx-1]...)
	return change.EnumValue(idx, a.since(s)), size, nil
}

// decodeSet reads the member bitmask (1..8 bytes, little-endian) and joins
// the members' labels with ','.
func decodeSet(a *arena, data []byte, col *tablemap.Column) (change.Value, int, error) {
	size := col.Length
	if size < 1 || size > 8 {
		return change.Value{}, 0, errBadMeta("SET pack length %d", size)
	}
	if len(data) < size {
		return change.Value{}, 0, errTruncated(uint64(size), len(data))
	}
	mask := leUint(data[:size])
	members := len(col.SetValues)
	if members < 64 && mask>>uint(members) != 0 {
		return change.Value{}, 0, errBadValue("SET bitmask %#x, column has %d members", mask, members)
	}
	s := a.start()
	for i := 0; i < members && i < 64; i++ {
		if mask&(1<<uint(i)) == 0 {
			continue
		}
		if len(a.buf) > s {
			a.buf = append(a.buf, ',')
		}
		a.buf = append(a.buf, col.SetValues[i]...)
	}
	return change.SetValue(mask, a.since(s)), size, nil
}

// decodeGeometry: pack-length prefix, then a 4-byte little-endian SRID
// and the WKB.
func decodeGeometry(data []byte, col *tablemap.Column) (change.Value, int, error) {
	raw, n, err := lenPrefixed(data, col.Length)
	if err != nil {
		return change.Value{}, 0, err
	}
	if len(raw) < 4 {
		return change.Value{}, 0, errBadValue("GEOMETRY value of %d bytes has no SRID", len(raw))
	}
	return change.GeometryValue(binary.LittleEndian.Uint32(raw), raw[4:]), n, nil
}

// decodeVector: pack-length prefix, then little-endian float32s.
func decodeVector(data []byte, col *tablemap.Column) (change.Value, int, error) {
	raw, n, err := lenPrefixed(data, col.Length)
	if err != nil {
		return change.Value{}, 0, err
	}
	if len(raw)%4 != 0 {
		return change.Value{}, 0, errBadValue("VECTOR value of %d bytes is not a whole number of float32s", len(raw))
	}
	return change.TextValue(change.Vector, raw), n, nil
}
