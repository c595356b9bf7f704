package conformance

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Helpers to check one value's kind and content.

func wantNull(t *testing.T, what string, v change.Value) {
	t.Helper()
	if !v.IsNull() {
		t.Errorf("%s = %v %v, want NULL", what, v.Kind(), v.Interface())
	}
}

func wantInt(t *testing.T, what string, v change.Value, want int64) {
	t.Helper()
	if v.Kind() != change.Int || v.Int() != want {
		t.Errorf("%s = %v %v, want int %d", what, v.Kind(), v.Interface(), want)
	}
}

func wantUint(t *testing.T, what string, v change.Value, want uint64) {
	t.Helper()
	if v.Kind() != change.Uint || v.Uint() != want {
		t.Errorf("%s = %v %v, want uint %d", what, v.Kind(), v.Interface(), want)
	}
}

// wantText checks a value whose payload is text: String, Decimal, Date,
// Datetime, Timestamp, Time, Enum, JSON.
func wantText(t *testing.T, what string, v change.Value, kind change.Kind, want string) {
	t.Helper()
	if v.Kind() != kind || string(v.Bytes()) != want {
		t.Errorf("%s = %v %q, want %v %q", what, v.Kind(), v.Bytes(), kind, want)
	}
}

func wantBytes(t *testing.T, what string, v change.Value, want []byte) {
	t.Helper()
	if v.Kind() != change.Bytes || !bytes.Equal(v.Bytes(), want) {
		t.Errorf("%s = %v %x, want bytes %x", what, v.Kind(), v.Bytes(), want)
	}
}

func wantEnum(t *testing.T, what string, v change.Value, index uint64, label string) {
	t.Helper()
	if v.Kind() != change.Enum || v.Uint() != index || string(v.Bytes()) != label {
		t.Errorf("%s = %v #%d %q, want enum #%d %q", what, v.Kind(), v.Uint(), v.Bytes(), index, label)
	}
}

func wantSet(t *testing.T, what string, v change.Value, mask uint64, labels ...string) {
	t.Helper()
	if v.Kind() != change.Set || v.Uint() != mask || !reflect.DeepEqual(v.SetLabels(), labels) {
		t.Errorf("%s = %v %#b %q, want set %#b %q", what, v.Kind(), v.Uint(), v.SetLabels(), mask, labels)
	}
}

func wantVector(t *testing.T, what string, v change.Value, want ...float32) {
	t.Helper()
	if v.Kind() != change.Vector || !reflect.DeepEqual(v.Interface(), want) {
		t.Errorf("%s = %v %v, want vector %v", what, v.Kind(), v.Interface(), want)
	}
}

func wantNames(t *testing.T, tbl *tablemap.Table, names ...string) {
	t.Helper()
	var got []string
	for _, c := range tbl.Columns {
		got = append(got, c.Name)
	}
	if !reflect.DeepEqual(got, names) {
		t.Errorf("%s.%s columns = %q, want %q", tbl.DB, tbl.Name, got, names)
	}
}

func wantOps(t *testing.T, rows []rec, ops ...change.Op) {
	t.Helper()
	var got []change.Op
	for _, r := range rows {
		got = append(got, r.Op)
	}
	if !reflect.DeepEqual(got, ops) {
		t.Fatalf("ops = %v, want %v", got, ops)
	}
}

// sameRow checks two images hold the same values.
func sameRow(t *testing.T, what string, got, want change.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d values, want %d", what, len(got), len(want))
		return
	}
	for i := range got {
		if got[i].Kind() != want[i].Kind() || !reflect.DeepEqual(got[i].Interface(), want[i].Interface()) {
			t.Errorf("%s: value %d = %v %v, want %v %v", what, i, got[i].Kind(), got[i].Interface(), want[i].Kind(), want[i].Interface())
		}
	}
}

// TestFullInvisibleColumns: MySQL 8.0.26, binlog_row_metadata=FULL,
// CREATE TABLE t1 (f1 INT UNSIGNED INVISIBLE, f2 INT UNSIGNED INVISIBLE,
// f3 INT, f4 TEXT, f5 BLOB, f6 BIGINT UNSIGNED INVISIBLE). Values as
// printed by `mariadb-binlog --no-defaults -vvv --base64-output=DECODE-ROWS`.
func TestFullInvisibleColumns(t *testing.T) {
	rows := mustRun(t, blackbeam+"binlog-invisible-columns.000001")
	wantOps(t, rows, change.Insert, change.Insert, change.Update)
	tbl := rows[0].Table
	if tbl.DB != "mysql" || tbl.Name != "t1" || len(tbl.PKNames) != 0 {
		t.Errorf("table %s.%s pk %q, want mysql.t1 without primary key", tbl.DB, tbl.Name, tbl.PKNames)
	}
	wantNames(t, tbl, "f1", "f2", "f3", "f4", "f5", "f6")
	for i, vis := range []bool{false, false, true, true, true, false} {
		if tbl.Columns[i].Visible != vis {
			t.Errorf("%s visible = %v, want %v (COLUMN_VISIBILITY)", tbl.Columns[i].Name, tbl.Columns[i].Visible, vis)
		}
	}
	if c := tbl.Columns[3]; c.Collation != 255 {
		t.Errorf("f4 TEXT collation %d, want 255 (utf8mb4_0900_ai_ci)", c.Collation)
	}
	if c := tbl.Columns[4]; !c.IsBinary() {
		t.Errorf("f5 BLOB collation %d, want binary", c.Collation)
	}

	r := rows[0]
	wantUint(t, "f1", r.after(t, "f1"), 1)
	wantUint(t, "f2", r.after(t, "f2"), 2)
	wantInt(t, "f3", r.after(t, "f3"), -3)
	wantText(t, "f4", r.after(t, "f4"), change.String, "4")
	wantBytes(t, "f5", r.after(t, "f5"), []byte{5})
	wantUint(t, "f6", r.after(t, "f6"), 6000000000)
	if r.GTID != "97c7af02-4c50-11ec-acd8-681842034964:3" {
		t.Errorf("gtid %q", r.GTID)
	}

	r = rows[1]
	wantNull(t, "f1", r.after(t, "f1"))
	wantNull(t, "f2", r.after(t, "f2"))
	wantInt(t, "f3", r.after(t, "f3"), -33)
	wantText(t, "f4", r.after(t, "f4"), change.String, "44")
	wantBytes(t, "f5", r.after(t, "f5"), []byte("U"))
	wantNull(t, "f6", r.after(t, "f6"))

	u := rows[2]
	sameRow(t, "update before = second insert", u.Before, rows[1].After)
	wantUint(t, "f1", u.after(t, "f1"), 111)
	wantUint(t, "f2", u.after(t, "f2"), 222)
	wantInt(t, "f3", u.after(t, "f3"), -333)
	wantText(t, "f4", u.after(t, "f4"), change.String, "444")
	wantBytes(t, "f5", u.after(t, "f5"), []byte("U"))
	wantNull(t, "f6", u.after(t, "f6"))
	if u.GTID != "97c7af02-4c50-11ec-acd8-681842034964:5" {
		t.Errorf("gtid %q", u.GTID)
	}
}

// TestFullBit: MySQL 8.0.26, CREATE TABLE foo(a BIT(3), b TEXT, c BIT(8)).
// Upstream asserts a = [0b100], b = "foo", c = [0b100000]; mariadb-binlog
// prints b'100', 'foo', b'00100000'. BIT is an unsigned number in the
// JSON contract.
func TestFullBit(t *testing.T) {
	rows := mustRun(t, blackbeam+"mysql_type_bit.000001")
	wantOps(t, rows, change.Insert)
	r := rows[0]
	wantNames(t, r.Table, "a", "b", "c")
	if r.Before != nil {
		t.Error("insert has a before image")
	}
	if a, c := r.Table.Columns[0], r.Table.Columns[2]; a.Bits != 3 || c.Bits != 8 {
		t.Errorf("BIT widths %d, %d, want 3, 8", a.Bits, c.Bits)
	}
	wantUint(t, "a", r.after(t, "a"), 0b100)
	wantText(t, "b", r.after(t, "b"), change.String, "foo")
	wantUint(t, "c", r.after(t, "c"), 0b100000)
	wantJSONLine(t, blackbeam+"mysql_type_bit.000001", 0, `"after":{"a":4,"b":"foo","c":32}`)
}

// TestFullEnumStringSet: MySQL 8.0.28, CREATE TABLE t(f1 CHAR(128),
// f2 VARCHAR(300), f3 ENUM('var1','variant2','foo'),
// f4 SET('one','two','three','four'), f5 TEXT) with default charset
// utf8mb4 (DEFAULT_CHARSET 255 = utf8mb4_0900_ai_ci). mariadb-binlog 10.11
// prints f1 as "BINARY(512)" only because it does not know collation 255;
// the columns are text.
func TestFullEnumStringSet(t *testing.T) {
	rows := mustRun(t, blackbeam+"mysql-enum-string-set.000001")
	wantOps(t, rows, change.Insert, change.Update, change.Delete)
	tbl := rows[0].Table
	wantNames(t, tbl, "f1", "f2", "f3", "f4", "f5")
	for _, i := range []int{0, 1, 4} {
		if c := tbl.Columns[i]; c.Collation != 255 {
			t.Errorf("%s collation %d, want 255", c.Name, c.Collation)
		}
	}
	if c := tbl.Columns[0]; c.Type != mysql.MYSQL_TYPE_STRING || c.Length != 512 {
		t.Errorf("f1: type %d length %d, want CHAR of 512 bytes (128 utf8mb4 characters)", c.Type, c.Length)
	}
	if got := tbl.Columns[2].EnumValues; !reflect.DeepEqual(got, []string{"var1", "variant2", "foo"}) {
		t.Errorf("f3 ENUM labels %q", got)
	}
	if got := tbl.Columns[3].SetValues; !reflect.DeepEqual(got, []string{"one", "two", "three", "four"}) {
		t.Errorf("f4 SET labels %q", got)
	}

	// The upstream test's values (rust_mysql_common mysql_enum_string_set).
	f1 := strings.Repeat("0123456789", 10)
	part := strings.Repeat("0123456789", 12) + "012345678"
	f2 := part + part + strings.Repeat("0123456789", 4) // 298 characters, as inserted
	if len(f2) != 298 {
		t.Fatal("bad f2 constant")
	}
	ins := rows[0]
	wantText(t, "f1", ins.after(t, "f1"), change.String, f1)
	wantText(t, "f2", ins.after(t, "f2"), change.String, f2)
	wantEnum(t, "f3", ins.after(t, "f3"), 1, "var1")
	wantSet(t, "f4", ins.after(t, "f4"), 0b0101, "one", "three")
	wantText(t, "f5", ins.after(t, "f5"), change.String, "0123456789")

	upd := rows[1]
	sameRow(t, "update before = insert", upd.Before, ins.After)
	wantText(t, "f1", upd.after(t, "f1"), change.String, "field1")
	wantText(t, "f2", upd.after(t, "f2"), change.String, "field_2")
	wantEnum(t, "f3", upd.after(t, "f3"), 2, "variant2")
	wantSet(t, "f4", upd.after(t, "f4"), 0b1010, "two", "four")
	wantText(t, "f5", upd.after(t, "f5"), change.String, f2)

	del := rows[2]
	if del.After != nil {
		t.Error("delete has an after image")
	}
	sameRow(t, "delete before = update after", del.Before, upd.After)
	wantJSONLine(t, blackbeam+"mysql-enum-string-set.000001", 2,
		`"before":{"f1":"field1","f2":"field_2","f3":"variant2","f4":["two","four"],"f5":"`+f2+`"}`)
}

// TestFullJSONOpaque: MySQL 9.0.1, create table test (a json); eight
// single-row inserts of JSON holding MySQL "opaque" scalars. Upstream
// asserts the first column of each after image; binlogcdc renders JSON
// the way MySQL prints it, so DECIMAL members are JSON numbers
// (123.456, 9.00), where the Rust upstream test models them as strings.
func TestFullJSONOpaque(t *testing.T) {
	rows := mustRun(t, blackbeam+"json-opaque.binlog")
	want := []string{
		`{"a":"base64:type15:VQ=="}`, // opaque VARCHAR: MySQL prints base64:type<N>:
		`{"b":"2012-03-18"}`,
		`{"c":"2012-03-18 11:30:45.000000"}`,
		`{"c":"87:31:46.654321"}`,
		`{"d":123.456}`,
		`{"e":9.00}`,
		`{"e":[0,1,true,false]}`,
		`{"e":null}`,
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, r := range rows {
		if r.Op != change.Insert || r.Table.DB != "foo" || r.Table.Name != "test" {
			t.Errorf("row %d: %v %s.%s", i, r.Op, r.Table.DB, r.Table.Name)
		}
		wantText(t, "a", r.after(t, "a"), change.JSON, want[i])
	}
	wantJSONLine(t, blackbeam+"json-opaque.binlog", 4, `"after":{"a":{"d":123.456}}`)
}

// TestFullVector: MySQL 9.0.1, CREATE TABLE foo(id SERIAL,
// vector_column VECTOR(3) NOT NULL) and bar(id SERIAL, vector_column
// VECTOR(2) NOT NULL, foo TEXT, vector_column2 VECTOR(4) NOT NULL) in a
// utf8mb4 database. Upstream asserts the foo rows' raw vectors; the bar
// values were read from `mariadb-binlog -H` hex dumps (float32 LE).
func TestFullVector(t *testing.T) {
	rows := mustRun(t, blackbeam+"vector.binlog")
	wantOps(t, rows, change.Insert, change.Insert, change.Insert, change.Insert,
		change.Insert, change.Insert, change.Insert, change.Insert, change.Delete, change.Insert)

	foo := rows[0]
	wantNames(t, foo.Table, "id", "vector_column")
	if !reflect.DeepEqual(foo.Table.PKNames, []string{"id"}) {
		t.Errorf("foo pk %q", foo.Table.PKNames)
	}
	wantUint(t, "foo.id", foo.after(t, "id"), 1) // SERIAL = BIGINT UNSIGNED
	v := foo.after(t, "vector_column")
	if want := []byte{205, 204, 140, 63, 205, 204, 12, 64, 51, 51, 83, 64}; !bytes.Equal(v.Bytes(), want) {
		t.Errorf("foo row 1 vector bytes %v, want %v", v.Bytes(), want)
	}
	wantVector(t, "foo row 1", v, 1.1, 2.2, 3.3)
	wantUint(t, "foo.id", rows[1].after(t, "id"), 2)
	v = rows[1].after(t, "vector_column")
	if want := []byte{0, 0, 128, 63, 0, 0, 128, 191, 0, 0, 0, 0}; !bytes.Equal(v.Bytes(), want) {
		t.Errorf("foo row 2 vector bytes %v, want %v", v.Bytes(), want)
	}
	wantVector(t, "foo row 2", v, 1, -1, 0)
	if foo.Pos != rows[1].Pos || foo.RowIndex != 0 || rows[1].RowIndex != 1 {
		t.Errorf("the two foo rows come from one event: %v#%d, %v#%d", foo.Pos, foo.RowIndex, rows[1].Pos, rows[1].RowIndex)
	}

	bar := rows[2]
	wantNames(t, bar.Table, "id", "vector_column", "foo", "vector_column2")
	// DEFAULT_CHARSET of bar is "default 63, character column #1 = 255":
	// the server numbers the VECTOR columns among character columns.
	for i, want := range []uint32{0, 63, 255, 63} {
		if got := bar.Table.Columns[i].Collation; got != want {
			t.Errorf("bar.%s collation %d, want %d", bar.Table.Columns[i].Name, got, want)
		}
	}
	wantUint(t, "bar.id", bar.after(t, "id"), 1)
	wantVector(t, "bar.vector_column", bar.after(t, "vector_column"), 1.1, 2.2)
	wantNull(t, "bar.foo", bar.after(t, "foo"))
	wantVector(t, "bar.vector_column2", bar.after(t, "vector_column2"), 1.1, 2.2, 3.3, 4.4)
	bar = rows[3]
	wantUint(t, "bar.id", bar.after(t, "id"), 2)
	wantVector(t, "bar.vector_column", bar.after(t, "vector_column"), 1.01, -1.01)
	wantText(t, "bar.foo (TEXT)", bar.after(t, "foo"), change.String, "bar")
	wantVector(t, "bar.vector_column2", bar.after(t, "vector_column2"), 42, 43, 44, 45)

	// The same inserts again, then DELETE id=2 and a new row 3.
	for i := 0; i < 4; i++ {
		sameRow(t, "repeat", rows[4+i].After, rows[i].After)
	}
	sameRow(t, "delete", rows[8].Before, rows[3].After)
	last := rows[9]
	wantUint(t, "bar.id", last.after(t, "id"), 3)
	wantVector(t, "bar.vector_column", last.after(t, "vector_column"), 2.01, -2.01)
	wantNull(t, "bar.foo", last.after(t, "foo"))
	wantVector(t, "bar.vector_column2", last.after(t, "vector_column2"), 42.1, 43.2, 44.3, 45.4)

	wantJSONLine(t, blackbeam+"vector.binlog", 0, `"pk":["id"],"after":{"id":1,"vector_column":[1.1,2.2,3.3]}`)
	wantJSONLine(t, blackbeam+"vector.binlog", 3, `"after":{"id":2,"vector_column":[1.01,-1.01],"foo":"bar","vector_column2":[42,43,44,45]}`)
}

// TestFullMariaDB105: MariaDB 10.5.15 with binlog_row_metadata=FULL, table
// toddy_test.outbox (id INT PRIMARY KEY, topic VARCHAR, event_type
// ENUM('BLOB','JSON','PROTOBUF'), event BLOB, created TIMESTAMP). Upstream
// asserts names, the primary key and the charsets; mariadb-binlog decodes
// the rows as (62,'foo',2,'{"foo":1}',1650493084) and (63,…,1650493195).
func TestFullMariaDB105(t *testing.T) {
	rows := mustRun(t, blackbeam+"mariadb-bin.000001")
	wantOps(t, rows, change.Insert, change.Insert)
	tbl := rows[0].Table
	if tbl.DB != "toddy_test" || tbl.Name != "outbox" {
		t.Errorf("table %s.%s", tbl.DB, tbl.Name)
	}
	wantNames(t, tbl, "id", "topic", "event_type", "event", "created")
	if !reflect.DeepEqual(tbl.PKNames, []string{"id"}) || !reflect.DeepEqual(tbl.PrimaryKey, []int{0}) {
		t.Errorf("pk %q %v, want [id] [0]", tbl.PKNames, tbl.PrimaryKey)
	}
	for i, want := range []uint32{0, 45, 45, 63, 0} { // utf8mb4_general_ci = 45
		if got := tbl.Columns[i].Collation; got != want {
			t.Errorf("%s collation %d, want %d", tbl.Columns[i].Name, got, want)
		}
	}
	for _, c := range tbl.Columns {
		if !c.Visible {
			t.Errorf("%s invisible: MariaDB logs no visibility", c.Name)
		}
	}
	if got := tbl.Columns[2].EnumValues; !reflect.DeepEqual(got, []string{"BLOB", "JSON", "PROTOBUF"}) {
		t.Errorf("event_type labels %q", got)
	}
	for i, want := range []struct {
		id      int64
		created string
		unix    uint64
		gtid    string
	}{{62, "2022-04-20 22:18:04", 1650493084, "0-1-1"}, {63, "2022-04-20 22:19:55", 1650493195, "0-1-2"}} {
		r := rows[i]
		wantInt(t, "id", r.after(t, "id"), want.id)
		wantText(t, "topic", r.after(t, "topic"), change.String, "foo")
		wantEnum(t, "event_type", r.after(t, "event_type"), 2, "JSON")
		wantBytes(t, "event", r.after(t, "event"), []byte(`{"foo":1}`))
		c := r.after(t, "created")
		wantText(t, "created", c, change.Timestamp, want.created)
		if c.Uint() != want.unix {
			t.Errorf("created unix %d, want %d", c.Uint(), want.unix)
		}
		if r.GTID != want.gtid {
			t.Errorf("gtid %q, want %q", r.GTID, want.gtid)
		}
	}
	wantJSONLine(t, blackbeam+"mariadb-bin.000001", 0,
		`{"op":"insert","db":"toddy_test","table":"outbox","pk":["id"],"after":{"id":62,"topic":"foo","event_type":"JSON","event":"eyJmb28iOjF9","created":"2022-04-20 22:18:04"},"ts":"2022-04-20T22:18:04Z","pos":{"file":"test-data__binlogs__mariadb-bin.000001","offset":612,"row":0},"gtid":"0-1-1"}`)
}

// wantJSONLine decodes a file fixture through the JSON lines sink and
// checks that line i contains want.
func wantJSONLine(t *testing.T, rel string, i int, want string) {
	t.Helper()
	out, err := jsonLines(t, openFile(t, fixture(t, rel)))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if i >= len(lines) {
		t.Fatalf("%s: %d lines, want line %d", rel, len(lines), i)
	}
	if !strings.Contains(lines[i], want) {
		t.Errorf("%s line %d:\n got %s\nwant it to contain %s", rel, i, lines[i], want)
	}
}
