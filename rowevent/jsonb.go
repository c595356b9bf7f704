package rowevent

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/jsontext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// MySQL binary JSON (sql-common/json_binary.h) rendered as compact JSON
// text. A document is a type byte and a value:
//
//	object/array  count, size (2 bytes each when small, 4 when large), then
//	              key entries (objects: key offset, 2-byte key length),
//	              value entries (type byte + offset, or the value inline
//	              for literals, int16, uint16 and, when large, int32/uint32);
//	              offsets count from the start of the object/array
//	literal       0x00 null, 0x01 true, 0x02 false
//	numbers       little-endian int16…uint64, IEEE double
//	string        variable-length size (7 bits a byte, low first), utf8mb4
//	opaque        MySQL field type byte, variable-length size, data
//
// Output follows MySQL where it matters for meaning: key order as stored,
// doubles with an integral value keep ".0", DECIMAL opaques are numbers,
// DATE/TIME/DATETIME/TIMESTAMP opaques are strings with 6 fractional
// digits, other opaques are "base64:type<N>:<data>".

const (
	jsonbSmallObject = 0x00
	jsonbLargeObject = 0x01
	jsonbSmallArray  = 0x02
	jsonbLargeArray  = 0x03
	jsonbLiteral     = 0x04
	jsonbInt16       = 0x05
	jsonbUint16      = 0x06
	jsonbInt32       = 0x07
	jsonbUint32      = 0x08
	jsonbInt64       = 0x09
	jsonbUint64      = 0x0a
	jsonbDouble      = 0x0b
	jsonbString      = 0x0c
	jsonbOpaque      = 0x0f

	// jsonMaxDepth is MySQL's JSON_DOCUMENT_MAX_DEPTH: containers nest at
	// most this deep.
	jsonMaxDepth = 100
)

// decodeJSONCell: pack-length prefix, then a binary JSON document. An
// empty document (written when an empty string or NULL goes into a NOT
// NULL column in non-strict mode) reads as null, as MySQL does.
func decodeJSONCell(a *arena, data []byte, col *tablemap.Column) (change.Value, int, error) {
	raw, n, err := lenPrefixed(data, col.Length)
	if err != nil {
		return change.Value{}, 0, err
	}
	s := a.start()
	if len(raw) == 0 {
		a.buf = append(a.buf, "null"...)
		return change.TextValue(change.JSON, a.since(s)), n, nil
	}
	out, err := appendJSONBinary(a.buf, raw)
	if err != nil {
		return change.Value{}, 0, err
	}
	a.buf = out
	return change.TextValue(change.JSON, a.since(s)), n, nil
}

// appendJSONBinary appends the JSON text of the binary document doc.
func appendJSONBinary(dst, doc []byte) ([]byte, error) {
	if len(doc) == 0 {
		return dst, errBadValue("empty JSON document")
	}
	j := jsonWriter{out: dst, start: len(dst), limit: 16*len(doc) + 64}
	j.value(doc[0], doc[1:], 0)
	if j.err != nil {
		return dst, j.err
	}
	return j.out, nil
}

// jsonWriter renders one document. The output limit guards against
// documents whose offsets point many times at the same value, which
// would otherwise blow up exponentially: a document written by MySQL
// renders to far less than 16 bytes per input byte.
type jsonWriter struct {
	out   []byte
	start int
	limit int
	err   error
}

func (j *jsonWriter) fail(err error) {
	if j.err == nil {
		j.err = err
	}
}

// value renders the value of type t whose bytes start data (data runs to
// the end of the enclosing container).
func (j *jsonWriter) value(t byte, data []byte, depth int) {
	if j.err != nil {
		return
	}
	if len(j.out)-j.start > j.limit {
		j.fail(errBadValue("JSON document renders too large (shared or looping offsets)"))
		return
	}
	switch t {
	case jsonbSmallObject, jsonbLargeObject, jsonbSmallArray, jsonbLargeArray:
		j.container(t, data, depth+1)
	case jsonbLiteral:
		if len(data) < 1 {
			j.fail(errTruncated(1, len(data)))
			return
		}
		j.literal(data[0])
	case jsonbInt16, jsonbUint16:
		if len(data) < 2 {
			j.fail(errTruncated(2, len(data)))
			return
		}
		j.integer(t, data[:2])
	case jsonbInt32, jsonbUint32:
		if len(data) < 4 {
			j.fail(errTruncated(4, len(data)))
			return
		}
		j.integer(t, data[:4])
	case jsonbInt64, jsonbUint64, jsonbDouble:
		if len(data) < 8 {
			j.fail(errTruncated(8, len(data)))
			return
		}
		j.integer(t, data[:8])
	case jsonbString:
		s, ok := j.varData(data)
		if ok {
			j.out = jsontext.AppendString(j.out, s)
		}
	case jsonbOpaque:
		if len(data) < 1 {
			j.fail(errTruncated(1, len(data)))
			return
		}
		if s, ok := j.varData(data[1:]); ok {
			j.opaque(data[0], s)
		}
	default:
		j.fail(errBadValue("JSON value type %#x", t))
	}
}

func (j *jsonWriter) literal(b byte) {
	switch b {
	case 0:
		j.out = append(j.out, "null"...)
	case 1:
		j.out = append(j.out, "true"...)
	case 2:
		j.out = append(j.out, "false"...)
	default:
		j.fail(errBadValue("JSON literal %#x", b))
	}
}

// integer renders the numeric types (b has exactly the type's size).
func (j *jsonWriter) integer(t byte, b []byte) {
	u := leUint(b)
	switch t {
	case jsonbInt16:
		j.out = strconv.AppendInt(j.out, int64(int16(u)), 10)
	case jsonbInt32:
		j.out = strconv.AppendInt(j.out, int64(int32(u)), 10)
	case jsonbInt64:
		j.out = strconv.AppendInt(j.out, int64(u), 10)
	case jsonbDouble:
		f := math.Float64frombits(u)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			j.fail(errBadValue("JSON double %v", f))
			return
		}
		s := len(j.out)
		j.out = strconv.AppendFloat(j.out, f, 'g', -1, 64)
		integral := true
		for _, c := range j.out[s:] {
			if c == '.' || c == 'e' {
				integral = false
				break
			}
		}
		if integral { // keep it a double when read back, like MySQL
			j.out = append(j.out, ".0"...)
		}
	default: // unsigned
		j.out = strconv.AppendUint(j.out, u, 10)
	}
}

// varData reads a variable-length size and returns that many bytes.
func (j *jsonWriter) varData(data []byte) ([]byte, bool) {
	var size uint64
	for i := 0; i < 5; i++ {
		if i >= len(data) {
			j.fail(errTruncated(uint64(i+1), len(data)))
			return nil, false
		}
		size |= uint64(data[i]&0x7f) << (7 * uint(i))
		if data[i]&0x80 == 0 {
			if size > uint64(len(data)-i-1) {
				j.fail(errTruncated(uint64(i+1)+size, len(data)))
				return nil, false
			}
			return data[i+1 : i+1+int(size)], true
		}
	}
	j.fail(errBadValue("JSON length longer than 5 bytes"))
	return nil, false
}

// container renders an object or an array.
func (j *jsonWriter) container(t byte, data []byte, depth int) {
	if depth > jsonMaxDepth {
		j.fail(errBadValue("JSON nested deeper than %d", jsonMaxDepth))
		return
	}
	large := t == jsonbLargeObject || t == jsonbLargeArray
	object := t == jsonbSmallObject || t == jsonbLargeObject
	off := 2 // size of counts and offsets
	if large {
		off = 4
	}
	if len(data) < 2*off {
		j.fail(errTruncated(uint64(2*off), len(data)))
		return
	}
	count, size := leUint(data[:off]), leUint(data[off:2*off])
	if size > uint64(len(data)) {
		j.fail(errTruncated(size, len(data)))
		return
	}
	data = data[:size]
	keyEntry, valueEntry := uint64(off+2), uint64(1+off)
	header := uint64(2*off) + count*valueEntry
	if object {
		header += count * keyEntry
	}
	if count > size || header > size { // count > size also keeps header from overflowing
		j.fail(errBadValue("JSON container header of %d entries exceeds its size %d", count, size))
		return
	}
	open, closing := byte('['), byte(']')
	if object {
		open, closing = '{', '}'
	}
	j.out = append(j.out, open)
	valueEntries := uint64(2 * off)
	if object {
		valueEntries += count * keyEntry
	}
	for i := uint64(0); i < count && j.err == nil; i++ {
		if i > 0 {
			j.out = append(j.out, ',')
		}
		if object {
			e := uint64(2*off) + i*keyEntry
			koff := leUint(data[e : e+uint64(off)])
			klen := leUint(data[e+uint64(off) : e+keyEntry])
			if koff < header || koff > size || klen > size-koff {
				j.fail(errBadValue("JSON key %d at %d+%d outside its object (%d..%d)", i, koff, klen, header, size))
				return
			}
			j.out = jsontext.AppendString(j.out, data[koff:koff+klen])
			j.out = append(j.out, ':')
		}
		e := valueEntries + i*valueEntry
		vt := data[e]
		inline := data[e+1 : e+valueEntry]
		switch {
		case vt == jsonbLiteral || vt == jsonbInt16 || vt == jsonbUint16,
			large && (vt == jsonbInt32 || vt == jsonbUint32):
			j.value(vt, inline, depth)
		default:
			voff := leUint(inline)
			if voff < header || voff >= size {
				j.fail(errBadValue("JSON value %d at offset %d outside its container (%d..%d)", i, voff, header, size))
				return
			}
			j.value(vt, data[voff:], depth)
		}
	}
	j.out = append(j.out, closing)
}

// opaque renders a value of MySQL field type ft stored in JSON.
func (j *jsonWriter) opaque(ft byte, data []byte) {
	switch ft {
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		// precision, scale, then binary DECIMAL; a JSON number
		if len(data) < 2 {
			j.fail(errTruncated(2, len(data)))
			return
		}
		out, _, err := appendDecimal(j.out, data[2:], int(data[0]), int(data[1]))
		if err != nil {
			j.fail(err)
			return
		}
		j.out = out
		return
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIME:
		// 8-byte little-endian packed temporal (MySQL's longlong packed
		// format: int part << 24 | microseconds, signed for TIME).
		if len(data) < 8 {
			j.fail(errTruncated(8, len(data)))
			return
		}
		j.out = append(j.out, '"')
		j.out = appendPackedTemporal(j.out, ft, int64(binary.LittleEndian.Uint64(data)))
		j.out = append(j.out, '"')
		return
	}
	j.out = append(j.out, `"base64:type`...)
	j.out = strconv.AppendUint(j.out, uint64(ft), 10)
	j.out = append(j.out, ':')
	j.out = base64.StdEncoding.AppendEncode(j.out, data)
	j.out = append(j.out, '"')
}

// appendPackedTemporal appends a MySQL in-memory packed temporal value as
// MySQL prints it in JSON: DATE "YYYY-MM-DD", TIME "[-]hh:mm:ss.ffffff",
// DATETIME/TIMESTAMP "YYYY-MM-DD hh:mm:ss.ffffff".
func appendPackedTemporal(b []byte, ft byte, v int64) []byte {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	usec, intpart := u&(1<<24-1), u>>24
	if usec >= usecPerSec { // corrupt: keep the text well-formed
		usec = usecPerSec - 1
	}
	if ft == mysql.MYSQL_TYPE_TIME {
		if neg {
			b = append(b, '-')
		}
		b = appendClock(b, intpart>>12&1023, intpart>>6&63, intpart&63)
		return appendFrac(b, usec, 6)
	}
	ymd, hms := intpart>>17, intpart&(1<<17-1)
	ym := ymd >> 5
	b = appendDate(b, ym/13, ym%13, ymd&31)
	if ft == mysql.MYSQL_TYPE_DATE {
		return b
	}
	b = append(b, ' ')
	b = appendClock(b, hms>>12, hms>>6&63, hms&63)
	return appendFrac(b, usec, 6)
}
