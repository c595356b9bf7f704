package rowevent

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// cellCase is one cell as a server logged it. Unless noted, the bytes
// were captured from a MariaDB 10.11 binlog (one-column tables, one row
// per INSERT) and want is what SELECT printed for the row.
type cellCase struct {
	name string
	col  tablemap.Column
	hex  string
	want change.Value
}

func cellText(k change.Kind, s string) change.Value { return change.TextValue(k, []byte(s)) }

func cellSame(a, b change.Value) bool {
	return a.Kind() == b.Kind() && a.Uint() == b.Uint() && string(a.Bytes()) == string(b.Bytes())
}

func cellShow(v change.Value) string {
	return v.Kind().String() + "(" + strconv.FormatUint(v.Uint(), 10) + ", " + strconv.Quote(string(v.Bytes())) + ")"
}

// runCellCases decodes each case, checks the value and the byte count
// (with a trailing byte that must not be consumed), and checks that every
// shorter prefix is refused as truncated.
func runCellCases(t *testing.T, cases []cellCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := hex.DecodeString(tc.hex)
			if err != nil {
				t.Fatal(err)
			}
			col := tc.col
			if col.Name == "" {
				col.Name = "c"
			}
			var a arena
			v, n, err := decodeCell(&a, append(data[:len(data):len(data)], 0xee), &col)
			if err != nil {
				t.Fatalf("decodeCell: %v", err)
			}
			if n != len(data) {
				t.Errorf("n = %d, want %d", n, len(data))
			}
			if !cellSame(v, tc.want) {
				t.Errorf("got %s, want %s", cellShow(v), cellShow(tc.want))
			}
			for i := 0; i < len(data); i++ {
				_, n, err := decodeCell(&a, data[:i], &col)
				if !errors.Is(err, ErrTruncated) || n != 0 {
					t.Errorf("prefix of %d bytes: n=%d err=%v, want ErrTruncated", i, n, err)
				}
			}
		})
	}
}

func intCol(t byte, unsigned bool) tablemap.Column {
	return tablemap.Column{Type: t, Unsigned: unsigned}
}

func TestDecodeCellIntegers(t *testing.T) {
	runCellCases(t, []cellCase{
		{"tinyint min", intCol(mysql.MYSQL_TYPE_TINY, false), "80", change.IntValue(-128)},
		{"tinyint max", intCol(mysql.MYSQL_TYPE_TINY, false), "7f", change.IntValue(127)},
		{"tinyint -1", intCol(mysql.MYSQL_TYPE_TINY, false), "ff", change.IntValue(-1)},
		{"tinyint unsigned 0", intCol(mysql.MYSQL_TYPE_TINY, true), "00", change.UintValue(0)},
		{"tinyint unsigned max", intCol(mysql.MYSQL_TYPE_TINY, true), "ff", change.UintValue(255)},
		{"smallint min", intCol(mysql.MYSQL_TYPE_SHORT, false), "0080", change.IntValue(-32768)},
		{"smallint max", intCol(mysql.MYSQL_TYPE_SHORT, false), "ff7f", change.IntValue(32767)},
		{"smallint unsigned max", intCol(mysql.MYSQL_TYPE_SHORT, true), "ffff", change.UintValue(65535)},
		{"mediumint min", intCol(mysql.MYSQL_TYPE_INT24, false), "000080", change.IntValue(-8388608)},
		{"mediumint max", intCol(mysql.MYSQL_TYPE_INT24, false), "ffff7f", change.IntValue(8388607)},
		{"mediumint -1", intCol(mysql.MYSQL_TYPE_INT24, false), "ffffff", change.IntValue(-1)},
		{"mediumint unsigned max", intCol(mysql.MYSQL_TYPE_INT24, true), "ffffff", change.UintValue(16777215)},
		{"int min", intCol(mysql.MYSQL_TYPE_LONG, false), "00000080", change.IntValue(math.MinInt32)},
		{"int max", intCol(mysql.MYSQL_TYPE_LONG, false), "ffffff7f", change.IntValue(math.MaxInt32)},
		{"int unsigned max", intCol(mysql.MYSQL_TYPE_LONG, true), "ffffffff", change.UintValue(math.MaxUint32)},
		{"bigint min", intCol(mysql.MYSQL_TYPE_LONGLONG, false), "0000000000000080", change.IntValue(math.MinInt64)},
		{"bigint max", intCol(mysql.MYSQL_TYPE_LONGLONG, false), "ffffffffffffff7f", change.IntValue(math.MaxInt64)},
		{"bigint unsigned max", intCol(mysql.MYSQL_TYPE_LONGLONG, true), "ffffffffffffffff", change.UintValue(18446744073709551615)},
		{"bigint unsigned 0", intCol(mysql.MYSQL_TYPE_LONGLONG, true), "0000000000000000", change.UintValue(0)},
		// YEAR: one byte, year-1900; 0 is the zero year "0000"
		{"year 0", intCol(mysql.MYSQL_TYPE_YEAR, false), "00", change.IntValue(0)},
		{"year 1901", intCol(mysql.MYSQL_TYPE_YEAR, false), "01", change.IntValue(1901)},
		{"year 2155", intCol(mysql.MYSQL_TYPE_YEAR, true), "ff", change.IntValue(2155)},  // 1900+255; MariaDB logs YEAR unsigned
		{"year 2024", intCol(mysql.MYSQL_TYPE_YEAR, false), "7c", change.IntValue(2024)}, // 1900+0x7c
		// BIT(n): (n+7)/8 bytes big-endian; meta 0100 = BIT(1), 0201 = BIT(10), 0008 = BIT(64)
		{"bit(1)", tablemap.Column{Type: mysql.MYSQL_TYPE_BIT, Bits: 1}, "01", change.UintValue(1)},
		{"bit(10)", tablemap.Column{Type: mysql.MYSQL_TYPE_BIT, Bits: 10}, "0201", change.UintValue(0b1000000001)},
		{"bit(64) all ones", tablemap.Column{Type: mysql.MYSQL_TYPE_BIT, Bits: 64}, "ffffffffffffffff", change.UintValue(math.MaxUint64)},
		{"bit(64) 1", tablemap.Column{Type: mysql.MYSQL_TYPE_BIT, Bits: 64}, "0000000000000001", change.UintValue(1)},
		// FLOAT/DOUBLE: IEEE little-endian
		{"float 1.25", tablemap.Column{Type: mysql.MYSQL_TYPE_FLOAT}, "0000a03f", change.Float32Value(1.25)},
		{"float -3.4e38", tablemap.Column{Type: mysql.MYSQL_TYPE_FLOAT}, "9ec97fff", change.Float32Value(-3.4e38)},
		{"double -2.5", tablemap.Column{Type: mysql.MYSQL_TYPE_DOUBLE}, "00000000000004c0", change.Float64Value(-2.5)},
		{"double max", tablemap.Column{Type: mysql.MYSQL_TYPE_DOUBLE}, "ffffffffffffef7f", change.Float64Value(math.MaxFloat64)},
	})
}

func strCol(t byte, length int, collation uint32) tablemap.Column {
	return tablemap.Column{Type: t, Length: length, Collation: collation}
}

func TestDecodeCellStrings(t *testing.T) {
	const utf8mb4, binary, latin1 = 45, 63, 8
	runCellCases(t, []cellCase{
		// CHAR(5) utf8mb4: meta fe14 -> STRING, 20 bytes -> 1-byte length
		{"char", strCol(mysql.MYSQL_TYPE_STRING, 20, utf8mb4), "03616263", cellText(change.String, "abc")},
		{"char utf8", strCol(mysql.MYSQL_TYPE_STRING, 20, utf8mb4), "0668c3a96c6c6f", cellText(change.String, "héllo")},
		{"char empty", strCol(mysql.MYSQL_TYPE_STRING, 20, utf8mb4), "00", cellText(change.String, "")},
		// CHAR(100) utf8mb4: meta ee90 -> 0x90 | ((0xee&0x30)^0x30)<<4 = 400 bytes -> 2-byte length
		{"char 400 bytes", strCol(mysql.MYSQL_TYPE_STRING, 400, utf8mb4), "010078", cellText(change.String, "x")},
		// BINARY(4): trailing 0x00 are stripped in the binlog, restored here
		{"binary full", strCol(mysql.MYSQL_TYPE_STRING, 4, binary), "04deadbeef", cellText(change.Bytes, "\xde\xad\xbe\xef")},
		{"binary padded", strCol(mysql.MYSQL_TYPE_STRING, 4, binary), "01de", cellText(change.Bytes, "\xde\x00\x00\x00")},
		{"binary all zero", strCol(mysql.MYSQL_TYPE_STRING, 4, binary), "00", cellText(change.Bytes, "\x00\x00\x00\x00")},
		// VARCHAR(20) utf8mb4: meta 0x50 = 80 bytes -> 1-byte length
		{"varchar", strCol(mysql.MYSQL_TYPE_VARCHAR, 80, utf8mb4), "0d68c3a96c6c6f2077c3b6726c64", cellText(change.String, "héllo wörld")},
		// VARCHAR(300): meta 0x4b0 = 1200 bytes -> 2-byte length
		{"varchar 2-byte length", strCol(mysql.MYSQL_TYPE_VARCHAR, 1200, utf8mb4), "0b006c6f6e6720707265666978", cellText(change.String, "long prefix")},
		{"varbinary", strCol(mysql.MYSQL_TYPE_VARCHAR, 8, binary), "020102", cellText(change.Bytes, "\x01\x02")},
		{"var_string", strCol(mysql.MYSQL_TYPE_VAR_STRING, 8, binary), "020102", cellText(change.Bytes, "\x01\x02")},
		// BLOB family: pack length 1..4
		{"text", strCol(mysql.MYSQL_TYPE_BLOB, 2, utf8mb4), "0a00746578742076616c7565", cellText(change.String, "text value")},
		{"tinyblob", strCol(mysql.MYSQL_TYPE_BLOB, 1, binary), "02cafe", cellText(change.Bytes, "\xca\xfe")},
		{"mediumblob", strCol(mysql.MYSQL_TYPE_BLOB, 3, binary), "020000cafe", cellText(change.Bytes, "\xca\xfe")},
		{"longblob", strCol(mysql.MYSQL_TYPE_BLOB, 4, binary), "02000000cafe", cellText(change.Bytes, "\xca\xfe")},
		{"latin1 text", strCol(mysql.MYSQL_TYPE_BLOB, 2, latin1), "0400636166e9", cellText(change.String, "café")},
	})
}

func TestDecodeCellEnumSet(t *testing.T) {
	abc := tablemap.Column{Type: mysql.MYSQL_TYPE_ENUM, Length: 1, EnumValues: []string{"a", "b", "c"}}
	xyz := tablemap.Column{Type: mysql.MYSQL_TYPE_SET, Length: 1, SetValues: []string{"x", "y", "z"}}
	var e300 []string
	for i := 1; i <= 300; i++ {
		e300 = append(e300, "e"+strconv.Itoa(i))
	}
	var m64 []string
	for i := 0; i < 64; i++ {
		m64 = append(m64, "m"+strconv.Itoa(i))
	}
	ai := tablemap.Column{Type: mysql.MYSQL_TYPE_SET, Length: 2, SetValues: strings.Split("a,b,c,d,e,f,g,h,i", ",")}
	runCellCases(t, []cellCase{
		// ENUM: meta f701 -> pack length 1; the 1-based index
		{"enum b", abc, "02", change.EnumValue(2, []byte("b"))},
		{"enum error value", abc, "00", change.EnumValue(0, nil)},
		// ENUM with 300 members: meta f702 -> 2 bytes; 0x012c = 300
		{"enum 2 bytes", tablemap.Column{Type: mysql.MYSQL_TYPE_ENUM, Length: 2, EnumValues: e300}, "2c01", change.EnumValue(300, []byte("e300"))},
		// SET: bitmask little-endian; 0b101 = x,z
		{"set x,z", xyz, "05", change.SetValue(5, []byte("x,z"))},
		{"set empty", xyz, "00", change.SetValue(0, nil)},
		// 9 members: meta f802; 0x0101 = bits 0 and 8
		{"set 2 bytes", ai, "0101", change.SetValue(0x101, []byte("a,i"))},
		// 64 members: meta f808 -> 8 bytes; bit 0 and bit 63
		{"set64 first,last", tablemap.Column{Type: mysql.MYSQL_TYPE_SET, Length: 8, SetValues: m64}, "0100000000000080",
			change.SetValue(1|1<<63, []byte("m0,m63"))},
		{"set64 all", tablemap.Column{Type: mysql.MYSQL_TYPE_SET, Length: 8, SetValues: m64}, "ffffffffffffffff",
			change.SetValue(math.MaxUint64, []byte(strings.Join(m64, ",")))},
		{"set64 m7,m8", tablemap.Column{Type: mysql.MYSQL_TYPE_SET, Length: 8, SetValues: m64}, "8001000000000000",
			change.SetValue(0x180, []byte("m7,m8"))},
	})
}

func TestDecodeCellGeometryVector(t *testing.T) {
	point := "0101000000000000000000f03f0000000000000040" // WKB POINT(1 2)
	wkb, _ := hex.DecodeString(point)
	vec, _ := hex.DecodeString("0000c03f0000204000006040") // 1.5, 2.5, 3.5
	runCellCases(t, []cellCase{
		// GEOMETRY: pack length 4 (0x19 = 25 bytes), SRID 0, WKB
		{"point", tablemap.Column{Type: mysql.MYSQL_TYPE_GEOMETRY, Length: 4}, "1900000000000000" + point, change.GeometryValue(0, wkb)},
		{"point srid 4326", tablemap.Column{Type: mysql.MYSQL_TYPE_GEOMETRY, Length: 4}, "19000000e6100000" + point, change.GeometryValue(4326, wkb)},
		// VECTOR(3) (MySQL 9): pack length 4, 12 bytes of float32
		{"vector", tablemap.Column{Type: mysql.MYSQL_TYPE_VECTOR, Length: 4}, "0c000000" + hex.EncodeToString(vec), change.TextValue(change.Vector, vec)},
	})
}

func TestDecodeCellErrors(t *testing.T) {
	cases := []struct {
		name string
		col  tablemap.Column
		hex  string
		is   error
	}{
		{"unknown type", tablemap.Column{Type: 140}, "00", ErrUnsupportedType},
		{"null type", tablemap.Column{Type: mysql.MYSQL_TYPE_NULL}, "00", ErrUnsupportedType},
		{"enum index too big", tablemap.Column{Type: mysql.MYSQL_TYPE_ENUM, Length: 1, EnumValues: []string{"a"}}, "02", ErrBadValue},
		{"enum pack length", tablemap.Column{Type: mysql.MYSQL_TYPE_ENUM, Length: 3}, "010000", ErrBadMetadata},
		{"set bit beyond members", tablemap.Column{Type: mysql.MYSQL_TYPE_SET, Length: 1, SetValues: []string{"x", "y", "z"}}, "08", ErrBadValue},
		{"set pack length", tablemap.Column{Type: mysql.MYSQL_TYPE_SET, Length: 9}, "00", ErrBadMetadata},
		{"bit(0)", tablemap.Column{Type: mysql.MYSQL_TYPE_BIT}, "00", ErrBadMetadata},
		{"bit(65)", tablemap.Column{Type: mysql.MYSQL_TYPE_BIT, Bits: 65}, "00", ErrBadMetadata},
		{"blob pack length 5", tablemap.Column{Type: mysql.MYSQL_TYPE_BLOB, Length: 5}, "0000000000", ErrBadMetadata},
		{"blob length past end", tablemap.Column{Type: mysql.MYSQL_TYPE_BLOB, Length: 4}, "ffffffff00", ErrTruncated},
		{"geometry without srid", tablemap.Column{Type: mysql.MYSQL_TYPE_GEOMETRY, Length: 1}, "03000000", ErrBadValue},
		{"vector not float32s", tablemap.Column{Type: mysql.MYSQL_TYPE_VECTOR, Length: 1}, "03000000", ErrBadValue},
		{"fsp 7", tablemap.Column{Type: mysql.MYSQL_TYPE_DATETIME2, FSP: 7}, "99b39ec8b801e24000", ErrBadMetadata},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data, _ := hex.DecodeString(tc.hex)
			tc.col.Name = "col_x"
			var a arena
			v, n, err := decodeCell(&a, data, &tc.col)
			if !errors.Is(err, tc.is) || n != 0 || !v.IsAbsent() {
				t.Fatalf("got %s n=%d err=%v, want %v", cellShow(v), n, err, tc.is)
			}
			var ce *CellError
			if !errors.As(err, &ce) || ce.Column != "col_x" || ce.Type != tc.col.Type {
				t.Fatalf("error %#v is not a CellError for the column", err)
			}
			if !strings.HasPrefix(err.Error(), `column "col_x" (`) {
				t.Errorf("message %q", err)
			}
		})
	}
}

func TestCellErrorMessage(t *testing.T) {
	err := &CellError{Column: "price", Type: mysql.MYSQL_TYPE_NEWDECIMAL, Err: errTruncated(5, 2)}
	if got, want := err.Error(), `column "price" (NEWDECIMAL): truncated cell: need 5 bytes, have 2`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := typeName(200); got != "type 200" {
		t.Errorf("typeName(200) = %q", got)
	}
}

// TestDecodeCellNoCopy checks that binary and UTF-8 values slice into
// the row data instead of copying it.
func TestDecodeCellNoCopy(t *testing.T) {
	data := []byte{3, 'a', 'b', 'c'}
	for _, col := range []tablemap.Column{strCol(mysql.MYSQL_TYPE_VARCHAR, 10, 45), strCol(mysql.MYSQL_TYPE_VARCHAR, 10, 63)} {
		var a arena
		v, _, err := decodeCell(&a, data, &col)
		if err != nil {
			t.Fatal(err)
		}
		if &v.Bytes()[0] != &data[1] {
			t.Errorf("collation %d: value was copied", col.Collation)
		}
		if cap(v.Bytes()) != 3 {
			t.Errorf("collation %d: cap %d lets appends overwrite the row", col.Collation, cap(v.Bytes()))
		}
	}
}

func TestDecodeCellInvalidUTF8(t *testing.T) {
	runCellCases(t, []cellCase{
		// utf8mb4 bytes that are not UTF-8 go through the converter
		{"invalid utf8mb4", strCol(mysql.MYSQL_TYPE_VARCHAR, 80, 45), "0361ff62", cellText(change.String, "a\ufffdb")},
	})
}

// TestValueInterface checks the Go types listed in doc.go.
func TestValueInterface(t *testing.T) {
	m64 := make([]string, 64)
	for i := range m64 {
		m64[i] = "m" + strconv.Itoa(i)
	}
	cases := []struct {
		col  tablemap.Column
		hex  string
		want any
	}{
		{intCol(mysql.MYSQL_TYPE_LONGLONG, false), "0000000000000080", int64(math.MinInt64)},
		{intCol(mysql.MYSQL_TYPE_LONGLONG, true), "ffffffffffffffff", uint64(math.MaxUint64)},
		{intCol(mysql.MYSQL_TYPE_YEAR, true), "7c", int64(2024)},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_BIT, Bits: 10}, "0201", uint64(513)},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_FLOAT}, "0000a03f", float32(1.25)},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_DOUBLE}, "00000000000004c0", float64(-2.5)},
		{dcol(10, 2), "7fffffffcd", "-0.50"},
		{tcol(mysql.MYSQL_TYPE_DATE, 0), "43b50f", "2010-10-03"},
		{tcol(mysql.MYSQL_TYPE_DATETIME2, 3), "99b39ec8b81ed2", "2024-06-15 12:34:56.789"},
		{tcol(mysql.MYSQL_TYPE_TIMESTAMP2, 0), "666d8a70", "2024-06-15 12:34:56"},
		{tcol(mysql.MYSQL_TYPE_TIME2, 1), "7fef7cce", "-01:02:03.5"},
		{strCol(mysql.MYSQL_TYPE_VARCHAR, 80, 45), "0d68c3a96c6c6f2077c3b6726c64", "héllo wörld"},
		{strCol(mysql.MYSQL_TYPE_STRING, 4, 63), "01de", []byte{0xde, 0, 0, 0}},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_ENUM, Length: 1, EnumValues: []string{"a", "b"}}, "02", "b"},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_SET, Length: 8, SetValues: m64}, "0100000000000080", []string{"m0", "m63"}},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_SET, Length: 1, SetValues: []string{"x"}}, "00", []string{}},
		{strCol(mysql.MYSQL_TYPE_JSON, 4, 0), "020000000401", json.RawMessage("true")},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_GEOMETRY, Length: 1}, "06e610000001ff", change.GeometryData{SRID: 4326, WKB: []byte{1, 0xff}}},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_VECTOR, Length: 1}, "080000c03f00002040", []float32{1.5, 2.5}},
	}
	for _, tc := range cases {
		data, _ := hex.DecodeString(tc.hex)
		var a arena
		v, _, err := decodeCell(&a, data, &tc.col)
		if err != nil {
			t.Fatalf("%s: %v", tc.hex, err)
		}
		if got := v.Interface(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Interface() = %#v, want %#v", tc.hex, got, tc.want)
		}
	}
	if change.NullValue().Interface() != nil || (change.Value{}).Interface() != nil {
		t.Error("Null and Absent must give nil")
	}
	// byte results are copies
	data := []byte{2, 'a', 'b'}
	col := strCol(mysql.MYSQL_TYPE_VARCHAR, 8, 63)
	var a arena
	v, _, _ := decodeCell(&a, data, &col)
	b := v.Interface().([]byte)
	b[0] = 'z'
	if data[1] != 'a' {
		t.Error("Interface() returned the row's bytes, not a copy")
	}
}
