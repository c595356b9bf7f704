package change

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Kind says what a Value holds. The zero Kind is Absent, so a zero Value
// means "this column was not sent in the row image", which is never the
// same as NULL.
type Kind uint8

const (
	// Absent: the column is not in the row image (binlog_row_image MINIMAL
	// or NOBLOB). It is not NULL.
	Absent Kind = iota
	// Null: SQL NULL.
	Null
	// Int: a signed integer (TINYINT…BIGINT, YEAR). Int() returns it.
	Int
	// Uint: an UNSIGNED integer or a BIT(n) value. Uint() returns it.
	Uint
	// Float32: FLOAT. Float() returns it widened; Float32() exactly.
	Float32
	// Float64: DOUBLE.
	Float64
	// Decimal: DECIMAL as text with exactly the column's scale ("-0.50").
	Decimal
	// Date: "YYYY-MM-DD", zero dates kept ("0000-00-00").
	Date
	// Datetime: "YYYY-MM-DD hh:mm:ss[.ffffff]" with the column's fsp.
	Datetime
	// Timestamp: like Datetime, in UTC. Uint() holds the Unix seconds.
	Timestamp
	// Time: "[-]hh:mm:ss[.ffffff]", hours up to 838.
	Time
	// String: text decoded to UTF-8 (CHAR, VARCHAR, TEXT; JSON on MariaDB).
	String
	// Bytes: a binary string (BINARY, VARBINARY, BLOB), kept byte for byte.
	Bytes
	// Enum: the label as text; Uint() holds the 1-based index (0 = error value "").
	Enum
	// Set: the labels joined by ','; Uint() holds the member bitmask.
	Set
	// JSON: MySQL binary JSON rendered as JSON text.
	JSON
	// Geometry: WKB bytes; Uint() holds the SRID.
	Geometry
	// Vector: little-endian IEEE 754 float32s, 4 bytes each.
	Vector
)

var kindNames = [...]string{"absent", "null", "int", "uint", "float32", "float64", "decimal",
	"date", "datetime", "timestamp", "time", "string", "bytes", "enum", "set", "json", "geometry", "vector"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one decoded cell. It is a small struct, not an interface, so
// decoding a row allocates nothing per value. Byte slices may point into
// a buffer owned by the decoder: copy them to keep them past the Change.
type Value struct {
	kind Kind
	num  uint64
	b    []byte
}

// Constructors used by decoders.
func NullValue() Value                    { return Value{kind: Null} }
func IntValue(i int64) Value              { return Value{kind: Int, num: uint64(i)} }
func UintValue(u uint64) Value            { return Value{kind: Uint, num: u} }
func Float32Value(f float32) Value        { return Value{kind: Float32, num: uint64(math32bits(f))} }
func Float64Value(f float64) Value        { return Value{kind: Float64, num: math64bits(f)} }
func TextValue(k Kind, text []byte) Value { return Value{kind: k, b: text} }
func TimestampValue(sec uint64, text []byte) Value {
	return Value{kind: Timestamp, num: sec, b: text}
}
func EnumValue(index uint64, label []byte) Value { return Value{kind: Enum, num: index, b: label} }
func SetValue(mask uint64, joined []byte) Value  { return Value{kind: Set, num: mask, b: joined} }
func GeometryValue(srid uint32, wkb []byte) Value {
	return Value{kind: Geometry, num: uint64(srid), b: wkb}
}

// In-place forms of the constructors, for a decoder that fills the
// slots of a Row: v.PutText(k, b) leaves in *v what TextValue(k, b)
// returns, and so on. Assigning a returned Value to a slot copies it
// through the stack, where the 16-byte loads of the copy wait for the
// 8-byte stores that built it: 10-16 ns a value, against under 2 ns for
// these (Go 1.26, measured on x86-64).
func (v *Value) PutNull()                    { v.kind, v.num, v.b = Null, 0, nil }
func (v *Value) PutInt(i int64)              { v.kind, v.num, v.b = Int, uint64(i), nil }
func (v *Value) PutUint(u uint64)            { v.kind, v.num, v.b = Uint, u, nil }
func (v *Value) PutText(k Kind, text []byte) { v.kind, v.num, v.b = k, 0, text }
func (v *Value) PutUncheckedText(text []byte, collation uint32) {
	v.kind, v.num, v.b = String, uncheckedUTF8|uint64(collation), text
}

// PutRaw is the in-place form of RawValue.
func (v *Value) PutRaw(k Kind, num uint64, b []byte) { v.kind, v.num, v.b = k, num, b }

// uncheckedUTF8 marks, in num, a String whose text was not checked to be
// UTF-8 (UncheckedText); the low 32 bits hold its collation.
const uncheckedUTF8 = 1 << 63

// UncheckedText is a String value whose text, in a collation of a UTF-8 or
// ASCII character set, was not checked to be valid UTF-8 (a decoder leaves
// that to a sink that checks as it encodes: see UncheckedUTF8).
func UncheckedText(text []byte, collation uint32) Value {
	return Value{kind: String, num: uncheckedUTF8 | uint64(collation), b: text}
}

// UncheckedUTF8 reports whether v is a String made by UncheckedText, and
// its collation. Where its text is not valid UTF-8, the value is what
// charset.Decode makes of the text in that collation; where it is valid,
// the text as it is.
func (v Value) UncheckedUTF8() (collation uint32, ok bool) {
	if v.kind == String && v.num&uncheckedUTF8 != 0 {
		return uint32(v.num), true
	}
	return 0, false
}

// Parts returns v's Kind, Uint and Bytes at once, for a hot loop over a
// row. It takes a pointer because a Value (40 bytes) is too large for the
// compiler to keep in registers: each value-receiver method inlined on
// it copies it to the stack first.
func (v *Value) Parts() (k Kind, num uint64, b []byte) { return v.kind, v.num, v.b }

func (v Value) Kind() Kind       { return v.kind }
func (v Value) IsAbsent() bool   { return v.kind == Absent }
func (v Value) IsNull() bool     { return v.kind == Null }
func (v Value) Int() int64       { return int64(v.num) }
func (v Value) Uint() uint64     { return v.num }
func (v Value) Float32() float32 { return math32frombits(uint32(v.num)) }

// Float returns FLOAT and DOUBLE values as float64.
func (v Value) Float() float64 {
	if v.kind == Float32 {
		return float64(v.Float32())
	}
	return math64frombits(v.num)
}

// Bytes returns the payload of text-like kinds: the UTF-8 text, the raw
// binary string, the decimal or temporal text, the JSON text, the WKB or
// the vector bytes.
func (v Value) Bytes() []byte { return v.b }

// SetLabels splits a Set value into its labels, an empty label included
// (nil for the empty set).
func (v Value) SetLabels() []string {
	var l []string
	if v.SetLostEmpty() {
		l = []string{""}
	}
	if len(v.b) == 0 {
		return l
	}
	return append(l, strings.Split(string(v.b), ",")...)
}

// SetLostEmpty reports whether v is a Set value holding a member whose
// label is empty that its text leaves out. The text is the server's: the
// members' labels joined with ',', with no ',' before the first label
// written, so an empty label first among those v holds leaves no trace
// (a SET whose first member is the empty label, holding it and 'x',
// reads "x"; holding it alone, ""); the text has fewer labels than v has
// members exactly then. That member is the first of v's labels.
func (v Value) SetLostEmpty() bool {
	if v.kind != Set {
		return false
	}
	labels := 0
	if len(v.b) > 0 {
		labels = bytes.Count(v.b, []byte{','}) + 1
	}
	return labels != bits.OnesCount64(v.num)
}

// SetText is a Set value's labels joined with ',', an empty label
// included: ",x" for the empty label and 'x', as Debezium joins them;
// "" for the empty set and for a value holding the empty label alone.
func (v Value) SetText() []byte {
	if v.SetLostEmpty() && len(v.b) > 0 {
		return append([]byte{','}, v.b...)
	}
	return v.b
}

// Clone returns a Value that owns its bytes.
func (v Value) Clone() Value {
	if v.b != nil {
		v.b = append([]byte(nil), v.b...)
	}
	return v
}

// GeometryData is what Interface returns for a Geometry value: the SRID and
// the WKB bytes.
type GeometryData struct {
	SRID uint32
	WKB  []byte
}

// Interface returns the value as a plain Go value:
//
//	Int                                   int64
//	Uint                                  uint64
//	Float32                               float32
//	Float64                               float64
//	Decimal, Date, Datetime, Timestamp,
//	Time, String, Enum                    string
//	Bytes                                 []byte
//	Set                                   []string (empty, not nil, for the empty set)
//	JSON                                  json.RawMessage
//	Geometry                              GeometryData
//	Vector                                []float32
//	Null, Absent                          nil
//
// Null and Absent both give nil: check IsAbsent first when the difference
// matters. Byte slices in the result are copies, safe to keep.
func (v Value) Interface() any {
	switch v.kind {
	case Int:
		return v.Int()
	case Uint:
		return v.num
	case Float32:
		return v.Float32()
	case Float64:
		return v.Float()
	case Decimal, Date, Datetime, Timestamp, Time, String, Enum:
		return string(v.b)
	case Bytes:
		return append([]byte{}, v.b...)
	case Set:
		if l := v.SetLabels(); l != nil {
			return l
		}
		return []string{}
	case JSON:
		return json.RawMessage(append([]byte{}, v.b...))
	case Geometry:
		return GeometryData{SRID: uint32(v.num), WKB: append([]byte{}, v.b...)}
	case Vector:
		f := make([]float32, len(v.b)/4)
		for i := range f {
			f[i] = math.Float32frombits(binary.LittleEndian.Uint32(v.b[4*i:]))
		}
		return f
	}
	return nil
}

// RawValue builds a Value from its parts (Kind, Uint and Bytes), as a
// store that serialized them reads them back.
func RawValue(k Kind, num uint64, b []byte) Value { return Value{kind: k, num: num, b: b} }
