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
