package envelope

import (
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// TestMaxwellDDLTail: a transaction of DDL records only closes them
// without "xid" and "commit"; one with rows (CREATE TABLE … SELECT)
// closes its rows as always.
func TestMaxwellDDLTail(t *testing.T) {
	m := &maxwell{}
	tbl := &tablemap.Table{DB: "d", Name: "t", Columns: []tablemap.Column{{Name: "id", Type: mysql.MYSQL_TYPE_LONG}},
		PrimaryKey: []int{0}, PKNames: []string{"id"}}
	def := &change.TableDef{Table: tbl, Charset: "latin1", Columns: make([]change.ColumnDef, 1)}
	ddl := &change.Change{Op: change.DDL, DB: "d", SQL: "CREATE TABLE t (id INT PRIMARY KEY)", Time: time.Unix(5, 0),
		Pos:    change.Position{File: "binlog.000001", Offset: 4},
		Schema: []change.SchemaChange{{Kind: change.TableCreate, DB: "d", Table: "t", New: def}}}
	b, err := m.AppendValue(nil, ddl)
	if err != nil {
		t.Fatal(err)
	}
	b = m.AppendTail(b, change.TxEnd{Xid: 7}, true)
	want := `{"type":"table-create","database":"d","table":"t","def":{"database":"d","charset":"latin1","table":"t","columns":[{"type":"int","name":"id","signed":true}],"primary-key":["id"]},"ts":5,"sql":"CREATE TABLE t (id INT PRIMARY KEY)","position":"binlog.000001:4"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	// DDL, then a row: the row's tail is as always.
	m.AppendValue(nil, ddl)
	row := &change.Change{Op: change.Insert, Table: tbl, After: change.Row{change.IntValue(1)}, Time: time.Unix(5, 0)}
	r, err := m.AppendValue(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	if tail := string(m.AppendTail(nil, change.TxEnd{Xid: 7}, true)); tail != `,"xid":7,"commit":true}` {
		t.Errorf("row tail %s (%s)", tail, r)
	}
	// The next transaction of DDL only is closed bare again.
	m.AppendValue(nil, ddl)
	if tail := string(m.AppendTail(nil, change.TxEnd{}, true)); tail != "}" {
		t.Errorf("DDL tail %s", tail)
	}
}

// TestDebeziumSchemaChange: a rename is an ALTER with the new id; a drop
// has no table; a statement about no table has no table changes.
func TestDebeziumSchemaChange(t *testing.T) {
	tbl := &tablemap.Table{DB: "d", Name: "u", Columns: []tablemap.Column{{Name: "v", Type: mysql.MYSQL_TYPE_NEWDECIMAL, Precision: 5, Scale: 2, Nullable: true}}}
	def := &change.TableDef{Table: tbl, Columns: []change.ColumnDef{{Default: "'1.50'", HasDefault: true}}}
	for _, tc := range []struct {
		sc   []change.SchemaChange
		want string
	}{
		{[]change.SchemaChange{{Kind: change.TableAlter, DB: "d", Table: "t", New: def}},
			`[{"type":"ALTER","id":"\"d\".\"u\"","table":{"defaultCharsetName":null,"primaryKeyColumnNames":[],"columns":[{"name":"v","jdbcType":3,"nativeType":null,"typeName":"DECIMAL","typeExpression":"DECIMAL","charsetName":null,"length":5,"scale":2,"position":1,"optional":true,"autoIncremented":false,"generated":false,"comment":null,"defaultValueExpression":"1.50","enumValues":null}],"comment":null}}]`},
		{[]change.SchemaChange{{Kind: change.TableDrop, DB: "d", Table: "t"}}, `[{"type":"DROP","id":"\"d\".\"t\"","table":null}]`},
		{[]change.SchemaChange{{Kind: change.DatabaseCreate, DB: "d"}}, `[]`},
		{nil, `[]`},
	} {
		var b []byte
		if len(tc.sc) > 0 {
			b = appendTableChange(append(b, '['), &tc.sc[0])
			b = append(b, ']')
		} else {
			b = []byte("[]")
		}
		if string(b) != tc.want {
			t.Errorf("got  %s\nwant %s", b, tc.want)
		}
	}
}

// TestDebeziumDefaultValueExpression: defaultValueExpression as
// Debezium's MySQL DDL parser sets it. The first cases are its tests'
// expectations (MySqlAntlrDdlParserTest testMultiColumnAlterWithDefaults,
// testCharsetIntroducerInDefault; BinlogAntlrDdlParserTest
// shouldParseAlterTableStatementAddColumns's ' 29 ',
// shouldApplyCorrectColumnInfoWhenAlterColumnType); the rest follow its
// DefaultValueParserListener (debezium 3.6.1 = aad55199).
func TestDebeziumDefaultValueExpression(t *testing.T) {
	for _, tc := range []struct {
		def  string // the DEFAULT operand; "-" for no DEFAULT
		want string // "-" for none (null)
	}{
		{"current_timestamp", "1970-01-01 00:00:00"},
		{"'08:00'", "08:00"},
		{"'1970-01-01 00:00:00'", "1970-01-01 00:00:00"},
		{"' 29 '", " 29 "},
		{"_utf8'abc'", "abc"},
		{"_UTF8MB4'0'", "0"},
		{"current_timestamp()", "1970-01-01 00:00:00"},
		{"NOW(3)", "1970-01-01 00:00:00"},
		{"localtimestamp", "1970-01-01 00:00:00"},
		{"-", "-"},
		{"NULL", "-"},
		{"(rand() * 10)", "-"},
		{"uuid()", "-"},
		{"0", "0"},
		{"-1", "-1"},
		{"+2.50", "+2.50"},
		{"1.5e3", "1.5e3"},
		{"TRUE", "TRUE"},
		{"false", "false"},
		{"x'0F'", "0F"},
		{"b'101'", "101"},
		{"0x0F", "0"},
		{"'it''s'", "it''s"},
		{`'a\'b'`, `a\'b`},
		{`"dq"`, "dq"},
		{"DATE '2024-01-01'", "DATE'2024-01-01'"},
	} {
		cd := change.ColumnDef{Default: tc.def, HasDefault: tc.def != "-"}
		got, ok := defaultExpression(&cd)
		if !ok {
			got = "-"
		}
		if got != tc.want {
			t.Errorf("DEFAULT %s: %q, want %q", tc.def, got, tc.want)
		}
	}
}

// TestDebeziumEnumSetLength: Debezium's parser gives every ENUM length 1
// and a SET the number of its labels and commas
// (ColumnDefinitionParserListener; BinlogAntlrDdlParserTest
// shouldParseCreateTableWithEnumAndSetColumns: ENUM 1, SET('a','b','c') 5).
func TestDebeziumEnumSetLength(t *testing.T) {
	for _, tc := range []struct {
		c    tablemap.Column
		want int
	}{
		{tablemap.Column{Type: mysql.MYSQL_TYPE_ENUM, EnumValues: []string{"station", "post_office"}}, 1},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_SET, SetValues: []string{"a", "b", "c"}}, 5},
		{tablemap.Column{Type: mysql.MYSQL_TYPE_SET, SetValues: []string{"new", "vip", "wholesale"}}, 5},
	} {
		if n, _ := dbzLength(&tc.c); n != tc.want {
			t.Errorf("%v: length %d, want %d", tc.c, n, tc.want)
		}
	}
}
