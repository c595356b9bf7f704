package rowevent

import (
	"encoding/binary"
	"os"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/fixtures"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Helpers that read the real-server fixtures in
// ../shared/fixtures/upstream (see its MANIFEST.md) just far enough to
// feed cells to decodeCell. They parse TABLE_MAP and rows event bodies
// themselves so that these tests depend on nothing but decodeCell.

// fxPath returns the path of an upstream fixture.
func fxPath(t *testing.T, name string) string { return fixtures.Path(t, name) }

func fxRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(fxPath(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fxEvent is one binlog event: its type and body (header and CRC32 cut).
type fxEvent struct {
	typ  byte
	body []byte
}

// fxEvents splits a binlog file (with the 4-byte magic) or a replication
// stream capture (without it) into events. All fixtures used here carry
// CRC32 checksums.
func fxEvents(t *testing.T, b []byte) []fxEvent {
	t.Helper()
	if len(b) >= 4 && string(b[:4]) == "\xfebin" {
		b = b[4:]
	}
	var evs []fxEvent
	for len(b) > 0 {
		if len(b) < 19 {
			t.Fatalf("truncated event header")
		}
		size := int(binary.LittleEndian.Uint32(b[9:13]))
		if size < 23 || size > len(b) {
			t.Fatalf("bad event size %d", size)
		}
		evs = append(evs, fxEvent{typ: b[4], body: b[19 : size-4]})
		b = b[size:]
	}
	return evs
}

// fxTable is a TABLE_MAP body reduced to what the tests need.
type fxTable struct {
	id   uint64
	name string
	cols []tablemap.Column
}

func fxLenEnc(b []byte) (uint64, int) {
	switch {
	case b[0] < 251:
		return uint64(b[0]), 1
	case b[0] == 252:
		return uint64(binary.LittleEndian.Uint16(b[1:])), 3
	case b[0] == 253:
		return leUint(b[1:4]), 4
	}
	return binary.LittleEndian.Uint64(b[1:]), 9
}

// fxTableMap parses a TABLE_MAP body (6-byte table ids). Column
// signedness, collations and labels are left for the test to fill in.
func fxTableMap(t *testing.T, b []byte) fxTable {
	t.Helper()
	tb := fxTable{id: leUint(b[:6])}
	p := 8
	p += 1 + int(b[p]) + 1 // schema
	tb.name = string(b[p+1 : p+1+int(b[p])])
	p += 1 + int(b[p]) + 1
	n, k := fxLenEnc(b[p:])
	p += k
	types := b[p : p+int(n)]
	p += int(n)
	_, k = fxLenEnc(b[p:])
	p += k
	for i, typ := range types {
		c := tablemap.Column{Name: "c" + string(rune('a'+i%26)), Type: typ, Collation: 45}
		switch typ {
		case mysql.MYSQL_TYPE_FLOAT, mysql.MYSQL_TYPE_DOUBLE:
			p++
		case mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_GEOMETRY, mysql.MYSQL_TYPE_JSON, mysql.MYSQL_TYPE_VECTOR:
			c.Length = int(b[p])
			p++
		case mysql.MYSQL_TYPE_TIME2, mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP2:
			c.FSP = int(b[p])
			p++
		case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING:
			c.Length = int(binary.LittleEndian.Uint16(b[p:]))
			p += 2
		case mysql.MYSQL_TYPE_BIT:
			c.Bits = int(b[p+1])*8 + int(b[p])
			p += 2
		case mysql.MYSQL_TYPE_NEWDECIMAL:
			c.Precision, c.Scale = int(b[p]), int(b[p+1])
			p += 2
		case mysql.MYSQL_TYPE_STRING:
			b0, b1 := int(b[p]), int(b[p+1])
			p += 2
			c.Type, c.Length = byte(b0), b1
			if b0&0x30 != 0x30 {
				c.Type, c.Length = byte(b0|0x30), b1|((b0&0x30)^0x30)<<4
			}
		}
		tb.cols = append(tb.cols, c)
	}
	return tb
}

// fxRows decodes every row image of a rows event body (v1 or v2) with
// decodeCell, checking that each image is consumed exactly.
func fxRows(t *testing.T, body []byte, v2, update bool, cols []tablemap.Column) [][]change.Value {
	t.Helper()
	p := 8
	if v2 {
		p += int(binary.LittleEndian.Uint16(body[p:]))
	}
	n, k := fxLenEnc(body[p:])
	p += k
	bm := (int(n) + 7) / 8
	present := body[p : p+bm]
	p += bm
	if update {
		p += bm // the after image's bitmap: the fixtures use full images
	}
	var a arena
	var rows [][]change.Value
	data := body[p:]
	for len(data) > 0 {
		var idx []int
		for i := range cols {
			if present[i/8]&(1<<(i%8)) != 0 {
				idx = append(idx, i)
			}
		}
		nb := (len(idx) + 7) / 8
		nulls := data[:nb]
		data = data[nb:]
		row := make([]change.Value, len(cols))
		for j, i := range idx {
			if nulls[j/8]&(1<<(j%8)) != 0 {
				row[i] = change.NullValue()
				continue
			}
			v, n, err := decodeCell(&a, data, &cols[i])
			if err != nil {
				t.Fatalf("row %d column %d: %v", len(rows), i, err)
			}
			row[i] = v
			data = data[n:]
		}
		rows = append(rows, row)
	}
	return rows
}

// zongjiColumns fills in what the capture_types TABLE_MAP's optional
// metadata says (see MANIFEST.md: signedness, charsets, labels).
func zongjiColumns(cols []tablemap.Column, utf8mb4 uint32) {
	cols[2].Unsigned = true
	for _, i := range []int{6, 7, 9} { // bin_col, vb, blb
		cols[i].Collation = 63
	}
	for _, i := range []int{4, 5, 8} {
		cols[i].Collation = utf8mb4
	}
	cols[16].Unsigned = utf8mb4 != 255 // MariaDB logs YEAR as unsigned
	cols[17].EnumValues = []string{"a", "b", "c"}
	cols[18].EnumValues = []string{"a,b", "c'd", "plain"}
	cols[19].SetValues = []string{"x", "y", "z"}
	cols[23].Collation = 8  // latin1_swedish_ci
	cols[24].Collation = 8  // latin1_swedish_ci
	cols[25].Collation = 35 // ucs2_general_ci
}

func fxFindRows(t *testing.T, evs []fxEvent, table string, rowsTypes ...byte) (fxTable, []fxEvent) {
	t.Helper()
	var tb fxTable
	var out []fxEvent
	for _, e := range evs {
		if e.typ == 19 {
			if m := fxTableMap(t, e.body); m.name == table {
				tb = m
			}
			continue
		}
		for _, rt := range rowsTypes {
			if e.typ == rt && tb.name == table && leUint(e.body[:6]) == tb.id {
				out = append(out, e)
			}
		}
	}
	if tb.name == "" || len(out) == 0 {
		t.Fatalf("no rows for table %s", table)
	}
	return tb, out
}

// TestDecodeCellZongjiRow decodes the 26-column capture_types row written
// by MySQL 8.4.8 and MariaDB 11.8.8 and compares it with the values the
// upstream test asserts.
func TestDecodeCellZongjiRow(t *testing.T) {
	wkb := "\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\xf0?\x00\x00\x00\x00\x00\x00\x00@" // POINT(1 2)
	want := []change.Value{
		change.IntValue(1),
		change.IntValue(9223372036854775807),
		change.UintValue(18446744073709551615),
		cellText(change.Decimal, "-12345678901234567.0123456789"),
		cellText(change.String, "héllo wörld"),
		cellText(change.String, "abc"),
		cellText(change.Bytes, "\xde\xad\xbe\xef"),
		cellText(change.Bytes, "\x01\x02"),
		cellText(change.String, "text value"),
		cellText(change.Bytes, "\xca\xfe"),
		change.Float32Value(1.25),
		change.Float64Value(-2.5),
		cellText(change.Datetime, "2024-06-15 12:34:56.789"),
		cellTS(1718454896, "2024-06-15 12:34:56"),
		cellText(change.Date, "2024-06-15"),
		cellText(change.Time, "-01:02:03.500"),
		change.IntValue(2024),
		change.EnumValue(2, []byte("b")),
		change.EnumValue(2, []byte("c'd")),
		change.SetValue(5, []byte("x,z")),
		change.UintValue(0b1000000001),
		{}, // JSON: per server, below
		change.GeometryValue(0, []byte(wkb)),
		cellText(change.String, "café ñ"),
		cellText(change.String, "Ÿ€ señor"), // latin1 is cp1252 in MySQL
		cellText(change.String, "héllo"),    // ucs2
	}
	for _, srv := range []struct {
		file     string
		rowsType byte
		utf8mb4  uint32
		json     change.Value
	}{
		{"vlasky__zongji/test__fixtures__binlog-mysql84-fullmeta.json.stream.bin", 30, 255,
			// binary JSON keeps keys sorted by length, then bytes
			cellText(change.JSON, `{"a":1,"d":1.5,"arr":["x",true,null],"big":9223372036854775807}`)},
		{"vlasky__zongji/test__fixtures__binlog-mariadb118.json.stream.bin", 23, 45,
			// MariaDB: JSON is LONGTEXT, the text as inserted
			cellText(change.String, `{"a": 1, "big": 9223372036854775807, "arr": ["x", true, null], "d": 1.5}`)},
	} {
		t.Run(srv.file, func(t *testing.T) {
			evs := fxEvents(t, fxRead(t, srv.file))
			tb, rows := fxFindRows(t, evs, "capture_types", srv.rowsType)
			zongjiColumns(tb.cols, srv.utf8mb4)
			got := fxRows(t, rows[0].body, srv.rowsType == 30, false, tb.cols)
			if len(got) != 1 {
				t.Fatalf("%d rows", len(got))
			}
			want[21] = srv.json
			for i, v := range got[0] {
				if !cellSame(v, want[i]) {
					t.Errorf("column %d: got %s, want %s", i, cellShow(v), cellShow(want[i]))
				}
			}
			// the NULL row (id=3) and the update/delete images decode too
			for _, e := range rows[1:] {
				fxRows(t, e.body, srv.rowsType == 30, false, tb.cols)
			}
		})
	}
}

// TestDecodeCellMariaDBHires decodes the capture_hires row (MariaDB 11.8,
// old "mariadb-5.3" DATETIME(3), TIME(3), TIMESTAMP(3)) with the
// precision supplied by hand: its TABLE_MAP metadata is empty.
func TestDecodeCellMariaDBHires(t *testing.T) {
	evs := fxEvents(t, fxRead(t, "vlasky__zongji/test__fixtures__binlog-mariadb118.json.stream.bin"))
	tb, rows := fxFindRows(t, evs, "capture_hires", 23)
	want := []change.Value{
		cellText(change.Datetime, "2024-06-15 12:34:56.789"),
		cellText(change.Time, "-01:02:03.500"),
		cellTS(1718454896, "2024-06-15 12:34:56.789"),
	}
	for i := range tb.cols {
		if tb.cols[i].FSP != 0 {
			t.Fatalf("column %d: the binlog gave a precision (%d); update the old-format notes", i, tb.cols[i].FSP)
		}
		tb.cols[i].FSP = 3
	}
	got := fxRows(t, rows[0].body, false, false, tb.cols)
	for i, v := range got[0] {
		if !cellSame(v, want[i]) {
			t.Errorf("column %d: got %s, want %s", i, cellShow(v), cellShow(want[i]))
		}
	}
}
