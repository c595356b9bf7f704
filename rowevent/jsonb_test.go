package rowevent

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
)

func jsonbUnhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestJSONBinary(t *testing.T) {
	long := strings.Repeat("x", 200)
	cases := []struct{ name, doc, want string }{
		{"true", "04 01", `true`},
		{"false", "04 02", `false`},
		{"null", "04 00", `null`},
		{"int16 min", "05 0080", `-32768`},
		{"uint16 max", "06 ffff", `65535`},
		{"int32 min", "07 00000080", `-2147483648`},
		{"uint32 max", "08 ffffffff", `4294967295`},
		{"int64 min", "09 0000000000000080", `-9223372036854775808`},
		{"uint64 max", "0a ffffffffffffffff", `18446744073709551615`},
		{"double 1.5", "0b 000000000000f83f", `1.5`},
		{"double 3.0 stays a double", "0b 0000000000000840", `3.0`},
		{"double -0.0", "0b 0000000000000080", `-0.0`},
		{"double 0.1", "0b 9a9999999999b93f", `0.1`},
		{"double 1e300", "0b 9c7500883ce4377e", `1e+300`},
		{"string", "0c 05 68656c6c6f", `"hello"`},
		// '"' '\' LF TAB 0x01 '/' 'é'
		{"string escapes", "0c 08 225c0a09012fc3a9", `"\"\\\n\t\u0001/é"`},
		{"string invalid utf8", "0c 02 ff41", `"\ufffdA"`},
		// length 200 = 0x48 | 0x80, then 200>>7 = 1
		{"string 2-byte length", "0c c801" + strings.Repeat("78", 200), `"` + long + `"`},
		// small array: count 3, size 15; header 4 + 3*3 = 13; "a" at 13
		{"small array", "02 0300 0f00 050100 0c0d00 040100 0161", `[1,"a",true]`},
		// int32 is not inline in a small array: at offset 4+3 = 7
		{"small array int32", "02 0100 0b00 070700 ffffffff", `[-1]`},
		// small object: header 4 + 2*4 + 2*3 = 18; keys "k" at 18, "ab" at 19; [] at 21, size 25
		{"small object", "00 0200 1900 12000100 13000200 040000 021500 6b 6162 00000400", `{"k":null,"ab":[]}`},
		// large object: header 8 + 6 + 5 = 19; int32 inline; key at 19
		{"large object", "01 01000000 14000000 13000000 0100 07 07000000 61", `{"a":7}`},
		// large array: header 8 + 2*5 = 18; uint32 inline, double at 18
		{"large array", "03 02000000 1a000000 08ffffffff 0b12000000 000000000000f83f", `[4294967295,1.5]`},
		{"empty object", "00 0000 0400", `{}`},
		// opaque NEWDECIMAL: precision 6, scale 3, 123 = 0x807b (sign bit), 456 = 0x01c8
		{"opaque decimal", "0f f6 06 0603807b01c8", `123.456`},
		// opaque DATE: ((2012*13+3)<<5 | 18) << 17 << 24, little-endian
		{"opaque date", "0f 0a 08 0000000000e48b19", `"2012-03-18"`},
		// opaque DATETIME: (ymd<<17 | 11<<12 | 30<<6 | 45) << 24 + 123456
		{"opaque datetime", "0f 0c 08 40e201adb7e48b19", `"2012-03-18 11:30:45.123456"`},
		{"opaque timestamp", "0f 07 08 40e201adb7e48b19", `"2012-03-18 11:30:45.123456"`},
		// opaque TIME: -((1<<12)<<24 + 500000)
		{"opaque time", "0f 0b 08 e05ef8ffefffffff", `"-01:00:00.500000"`},
		// other opaque types: base64 of the raw bytes
		{"opaque varchar", "0f 0f 01 55", `"base64:type15:VQ=="`},
		{"opaque bit", "0f 10 02 0201", `"base64:type16:AgE="`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := appendJSONBinary([]byte("prefix"), jsonbUnhex(t, tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(out[len("prefix"):]); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
			if !json.Valid(out[len("prefix"):]) {
				t.Errorf("invalid JSON %s", out)
			}
		})
	}
}

func TestJSONBinaryErrors(t *testing.T) {
	cases := []struct{ name, doc string }{
		{"empty", ""},
		{"bad type", "0d 00"},
		{"bad literal", "04 03"},
		{"short int16", "05 00"},
		{"short double", "0b 0000"},
		{"NaN", "0b 010000000000f87f"},
		{"+Inf", "0b 000000000000f07f"},
		{"string past end", "0c 05 6865"},
		{"string length 6 bytes", "0c ffffffffff01"},
		{"opaque short", "0f"},
		{"opaque decimal bad scale", "0f f6 03 0140 80"},
		{"container short", "02 0100"},
		{"size past end", "02 0100 ff00 050100"},
		{"count past size", "02 0500 0700 050100"},
		{"value offset in header", "02 0100 0800 0c0300 00"},
		{"value offset past size", "02 0100 0800 0c0900 00"},
		{"key offset in header", "00 0100 0c00 05000100 040000 61"},
		{"key past size", "00 0100 0c00 0b000500 040000 61"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := appendJSONBinary([]byte("keep"), jsonbUnhex(t, tc.doc))
			if err == nil {
				t.Fatalf("no error, got %s", out)
			}
			if string(out) != "keep" {
				t.Errorf("dst changed on error: %q", out)
			}
		})
	}
}

// TestJSONBinaryDepth: MySQL allows 100 levels of nesting.
func TestJSONBinaryDepth(t *testing.T) {
	nest := func(levels int) []byte {
		doc := []byte{0x02, 0, 0, 4, 0} // []
		for i := 1; i < levels; i++ {
			// [child]: header 4 + 3 = 7, child at 7
			size := 7 + len(doc) - 1
			doc = append([]byte{0x02, 1, 0, byte(size), byte(size >> 8), 0x02, 7, 0}, doc[1:]...)
		}
		return doc
	}
	out, err := appendJSONBinary(nil, nest(jsonMaxDepth))
	if err != nil {
		t.Fatalf("depth %d: %v", jsonMaxDepth, err)
	}
	if want := strings.Repeat("[", jsonMaxDepth) + strings.Repeat("]", jsonMaxDepth); string(out) != want {
		t.Fatalf("got %s", out)
	}
	if _, err := appendJSONBinary(nil, nest(jsonMaxDepth+1)); !errors.Is(err, ErrBadValue) {
		t.Fatalf("depth %d: err = %v", jsonMaxDepth+1, err)
	}
}

// TestJSONBinarySharedValues: containers whose entries all point at the
// same child would render exponentially; the output limit stops them.
func TestJSONBinarySharedValues(t *testing.T) {
	// Each level: small array of 2 entries, both pointing at offset 10,
	// where the next level starts (header 4 + 2*3 = 10).
	doc := []byte{0x02, 0, 0, 4, 0}
	for i := 0; i < 60; i++ {
		size := 10 + len(doc) - 1
		doc = append([]byte{0x02, 2, 0, byte(size), byte(size >> 8), 0x02, 10, 0, 0x02, 10, 0}, doc[1:]...)
	}
	start := time.Now()
	_, err := appendJSONBinary(nil, doc)
	if !errors.Is(err, ErrBadValue) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
}

func TestDecodeCellJSONEmpty(t *testing.T) {
	runCellCases(t, []cellCase{
		// a 0-length document (non-strict insert into NOT NULL) reads as null
		{"empty", strCol(mysql.MYSQL_TYPE_JSON, 4, 0), "00000000", cellText(change.JSON, "null")},
		{"pack length 2", strCol(mysql.MYSQL_TYPE_JSON, 2, 0), "02000401", cellText(change.JSON, "true")},
	})
}

// TestJSONGoMySQLFixtures decodes the MySQL 5.7 rows events from
// go-mysql's TestParseJson / TestJsonCompatibility / TestJsonNull.
func TestJSONGoMySQLFixtures(t *testing.T) {
	const dir = "go-mysql-org__go-mysql/replication__row_event_test.go__"
	rowsOf := func(tm, rows string, update bool) [][]change.Value {
		tb := fxTableMap(t, fxRead(t, dir+tm))
		return fxRows(t, fxRead(t, dir+rows), true, update, tb.cols)
	}
	check := func(name string, v change.Value, want string) {
		t.Helper()
		if v.Kind() != change.JSON && v.Kind() != change.Decimal || string(v.Bytes()) != want {
			t.Errorf("%s: got %s, want %s", name, cellShow(v), want)
		}
	}
	r := rowsOf("TestParseJson__L366__t10_tablemap.bin", "TestParseJson__L380__t10_write_rows_v2_a.bin", false)
	check("t10 a c2", r[0][1], "1")
	r = rowsOf("TestParseJson__L366__t10_tablemap.bin", "TestParseJson__L381__t10_write_rows_v2_b.bin", false)
	check("t10 b c1", r[0][0], `{"key1":"value1","key2":"value2"}`)
	check("t10 b c2", r[0][1], "1")
	r = rowsOf("TestParseJson__L366__t10_tablemap.bin", "TestParseJson__L393__t10_write_rows_v2_long.bin", false)
	if s := string(r[0][0].Bytes()); !strings.HasPrefix(s, `{"text":"Lorem ipsum dolor sit amet, consectetuer`) || !json.Valid([]byte(s)) {
		t.Errorf("t10 long: %.80s", s)
	}
	check("t10 long c2", r[0][1], "101")

	r = rowsOf("TestJsonCompatibility__L616__t11_tablemap.bin", "TestJsonCompatibility__L629__t11_write_rows.bin", false)
	check("t11 write", r[0][2], `{}`)
	r = rowsOf("TestJsonCompatibility__L616__t11_tablemap.bin", "TestJsonCompatibility__L636__t11_update_rows_after5722_a.bin", true)
	check("t11 update a before", r[0][2], `{}`)
	check("t11 update a after", r[1][2], `{"a":1234}`)
	r = rowsOf("TestJsonCompatibility__L616__t11_tablemap.bin", "TestJsonCompatibility__L643__t11_update_rows_after5722_b.bin", true)
	check("t11 update b before", r[0][2], `{"a":1234}`)
	check("t11 update b after", r[1][2], `{}`)

	r = rowsOf("TestJsonNull__L578__hj_order_preview_tablemap.bin", "TestJsonNull__L591__hj_order_preview_write_rows.bin", false)
	check("hj_order_preview empty JSON", r[0][3], "null")
}

// TestJSONOpaqueFixture decodes the MySQL 9.0.1 json-opaque binlog from
// rust_mysql_common: JSON values holding MySQL-typed (opaque) scalars.
func TestJSONOpaqueFixture(t *testing.T) {
	evs := fxEvents(t, fxRead(t, "blackbeam__rust_mysql_common/test-data__binlogs__json-opaque.binlog"))
	want := []string{
		`{"a":"base64:type15:VQ=="}`,
		`{"b":"2012-03-18"}`,
		`{"c":"2012-03-18 11:30:45.000000"}`,
		`{"c":"87:31:46.654321"}`,
		`{"d":123.456}`,
		`{"e":9.00}`,
		`{"e":[0,1,true,false]}`,
		`{"e":null}`,
	}
	var tb fxTable
	var got []string
	for _, e := range evs {
		switch e.typ {
		case 19:
			tb = fxTableMap(t, e.body)
		case 30:
			for _, row := range fxRows(t, e.body, true, false, tb.cols) {
				got = append(got, string(row[0].Bytes()))
			}
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
