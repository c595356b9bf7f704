package e2e

// Debezium's schema change records (issue 24 section 2): 'read --ddl
// --format debezium', one record per table a statement changes (per
// statement when it changes none), shaped as Debezium's
// SchemaChangeValue with ConnectTableChangeSerializer's table changes;
// the columns as Debezium's DDL parser tests expect them
// (BinlogAntlrDdlParserTest: shouldParseTimeWithNowDefault,
// shouldParseCreateTableWithEnumAndSetColumns), transcribed below.

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// dbzCol is a column as ConnectTableChangeSerializer writes it (the
// fields the parser tests assert).
func dbzCol(name, typeName string, jdbc, length int, optional, generated, autoInc bool, pos int) map[string]any {
	var l any
	if length >= 0 {
		l = float64(length)
	}
	return map[string]any{"name": name, "typeName": typeName, "jdbcType": float64(jdbc), "length": l,
		"optional": optional, "generated": generated, "autoIncremented": autoInc, "position": float64(pos)}
}

func TestDebeziumDDLRead(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	stmts := []string{
		"CREATE DATABASE dz",
		"CREATE TABLE dz.t1 ( c1 int primary key auto_increment, c2 datetime, c3 datetime on update now(), c4 char(4))",
		"CREATE TABLE dz.t ( c1 ENUM('a','b','c') NOT NULL, c2 SET('a','b','c') NULL)",
		"ALTER TABLE dz.t ADD COLUMN c3 VARCHAR(22) DEFAULT 'x' COMMENT 'three'",
		"RENAME TABLE dz.t TO dz.t2",
		"DROP TABLE dz.t1, dz.t2",
		"DROP DATABASE dz",
	}
	srv.Exec(t, stmts...)
	out := stRead(t, srv, "--ddl", "--format", "debezium")
	var recs []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not JSON: %v: %s", err, line)
		}
		if m["databaseName"] == "dz" {
			recs = append(recs, m)
		}
	}
	// DROP TABLE of two tables: one record each, as Debezium's
	// TableDroppedEvents.
	if len(recs) != len(stmts)+1 {
		t.Fatalf("%d schema change records, want %d:\n%s", len(recs), len(stmts)+1, out)
	}
	wantKeys := []string{"databaseName", "ddl", "schemaName", "source", "tableChanges", "ts_ms"}
	colKeys := []string{"autoIncremented", "charsetName", "comment", "defaultValueExpression", "enumValues", "generated", "jdbcType",
		"length", "name", "nativeType", "optional", "position", "scale", "typeExpression", "typeName"}
	type change struct {
		typ, id string
		cols    []map[string]any // nil: "table" is null
	}
	t1 := []map[string]any{
		dbzCol("c1", "INT", 4, -1, false, true, true, 1),
		dbzCol("c2", "DATETIME", 93, -1, true, false, false, 2),
		dbzCol("c3", "DATETIME", 93, -1, true, true, true, 3),
		dbzCol("c4", "CHAR", 1, 4, true, false, false, 4),
	}
	tt := []map[string]any{
		dbzCol("c1", "ENUM", 1, 1, false, false, false, 1),
		dbzCol("c2", "SET", 1, 5, true, false, false, 2),
	}
	c3 := dbzCol("c3", "VARCHAR", 12, 22, true, false, false, 3)
	// comment: null, as Debezium's default include.schema.comments=false
	// leaves COMMENT clauses out.
	c3["defaultValueExpression"], c3["comment"] = "x", nil
	want := []struct {
		ddl string
		tc  []change
	}{
		{stmts[0], nil},
		{stmts[1], []change{{"CREATE", `"dz"."t1"`, t1}}},
		{stmts[2], []change{{"CREATE", `"dz"."t"`, tt}}},
		{stmts[3], []change{{"ALTER", `"dz"."t"`, append(slices.Clone(tt), c3)}}},
		{stmts[4], []change{{"ALTER", `"dz"."t2"`, append(slices.Clone(tt), c3)}}},
		{"DROP TABLE", []change{{"DROP", `"dz"."t1"`, nil}}},
		{"DROP TABLE", []change{{"DROP", `"dz"."t2"`, nil}}},
		{stmts[6], nil},
	}
	for i, w := range want {
		r := recs[i]
		var keys []string
		for k := range r {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !slices.Equal(keys, wantKeys) {
			t.Errorf("record %d: keys %v, want %v", i, keys, wantKeys)
		}
		if ddl, _ := r["ddl"].(string); !strings.HasPrefix(ddl, w.ddl) {
			t.Errorf("record %d: ddl %q, want %q", i, ddl, w.ddl)
		}
		if r["schemaName"] != nil {
			t.Errorf("record %d: schemaName %v, want null", i, r["schemaName"])
		}
		src, _ := r["source"].(map[string]any)
		if src["connector"] != "mysql" || src["db"] != "dz" {
			t.Errorf("record %d: source %v", i, src)
		}
		tcs, _ := r["tableChanges"].([]any)
		if len(tcs) != len(w.tc) {
			t.Errorf("record %d: %d table changes, want %d: %v", i, len(tcs), len(w.tc), tcs)
			continue
		}
		for j, wc := range w.tc {
			tc := tcs[j].(map[string]any)
			if tc["type"] != wc.typ || tc["id"] != wc.id {
				t.Errorf("record %d: change %v %v, want %s %s", i, tc["type"], tc["id"], wc.typ, wc.id)
			}
			if wc.cols == nil {
				if tc["table"] != nil {
					t.Errorf("record %d: %s has a table: %v", i, wc.typ, tc["table"])
				}
				continue
			}
			tab, _ := tc["table"].(map[string]any)
			cols, _ := tab["columns"].([]any)
			if len(cols) != len(wc.cols) {
				t.Errorf("record %d: %d columns, want %d: %v", i, len(cols), len(wc.cols), tab)
				continue
			}
			for k, wcol := range wc.cols {
				col := cols[k].(map[string]any)
				var ks []string
				for kk := range col {
					ks = append(ks, kk)
				}
				slices.Sort(ks)
				if !slices.Equal(ks, colKeys) {
					t.Errorf("record %d column %d: keys %v, want %v", i, k, ks, colKeys)
				}
				for kk, v := range wcol {
					if !reflect.DeepEqual(col[kk], v) {
						t.Errorf("record %d column %v: %s = %v, want %v", i, col["name"], kk, col[kk], v)
					}
				}
			}
		}
	}
	// --with-schema: each record is {"schema":…,"payload":…} (the
	// schema: sink/envelope TestDebeziumSchemaChangeSchema), the payload
	// the record without it.
	ws := stRead(t, srv, "--ddl", "--format", "debezium", "--with-schema")
	var payloads []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(ws), []byte("\n")) {
		var m struct {
			Schema  struct{ Name string }
			Payload map[string]any
		}
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not JSON: %v: %s", err, line)
		}
		if m.Payload["databaseName"] == "dz" {
			if m.Schema.Name != "io.debezium.connector.mysql.SchemaChangeValue" {
				t.Errorf("schema %q: %.300s", m.Schema.Name, line)
			}
			payloads = append(payloads, m.Payload)
		}
	}
	if len(payloads) != len(recs) {
		t.Fatalf("--with-schema: %d schema change records, want %d", len(payloads), len(recs))
	}
	for i := range recs {
		delete(recs[i], "ts_ms") // the time of the run
		delete(payloads[i], "ts_ms")
		if !reflect.DeepEqual(payloads[i], recs[i]) {
			t.Errorf("--with-schema record %d:\n got  %v\n want %v", i, payloads[i], recs[i])
		}
	}
}

// TestDebeziumDDLStreamRestart: after a restart from the checkpoint, the
// schema history (restored with it) still describes the table an ALTER
// TABLE changes; the table has no character column until the ALTER adds
// one without a character set (the default of the CREATE's session).
func TestDebeziumDDLStreamRestart(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	b, _ := ddlRestart(t, srv, "debezium",
		[]string{"CREATE DATABASE dzr", "CREATE TABLE dzr.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, d DECIMAL(8,3) DEFAULT 1.5)"},
		[]string{"ALTER TABLE dzr.t ADD COLUMN s VARCHAR(7) NOT NULL"}, `"type":"CREATE"`, `"type":"ALTER"`)
	var last map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if bytes.Contains(line, []byte(`"type":"ALTER"`)) {
			if err := json.Unmarshal(line, &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	tc := last["tableChanges"].([]any)[0].(map[string]any)
	tab, _ := tc["table"].(map[string]any)
	if tab == nil {
		t.Fatalf("the ALTER after the restart has no table: %v", last)
	}
	cols := tab["columns"].([]any)
	want := []map[string]any{
		dbzCol("id", "BIGINT", -5, -1, false, true, true, 1),
		dbzCol("d", "DECIMAL", 3, 8, true, false, false, 2),
		dbzCol("s", "VARCHAR", 12, 7, false, false, false, 3),
	}
	want[1]["scale"], want[1]["defaultValueExpression"] = float64(3), "1.5"
	if len(cols) != len(want) {
		t.Fatalf("columns %v", cols)
	}
	for i, w := range want {
		for k, v := range w {
			if got := cols[i].(map[string]any)[k]; !reflect.DeepEqual(got, v) {
				t.Errorf("column %d: %s = %v, want %v", i, k, got, v)
			}
		}
	}
	cs := *srv.QueryStrings(t, "SELECT @@character_set_server")[0][0]
	if got := cols[2].(map[string]any)["charsetName"]; got != cs {
		t.Errorf("s: charsetName %v, want %s", got, cs)
	}
	if pk, _ := tab["primaryKeyColumnNames"].([]any); len(pk) != 1 || pk[0] != "id" {
		t.Errorf("primaryKeyColumnNames %v", tab["primaryKeyColumnNames"])
	}
}

// TestDebeziumDDLDeclaredTypes: the columns are named, typed and sized
// as Debezium's DDL parser reads the statement (the type as declared,
// which the schema history keeps), not as the binlog logs them; the
// expectations are Debezium's parser tests' (sink/envelope
// TestDebeziumDeclaredTypes names them) and its data type table for
// BOOL, REAL and NUMERIC.
func TestDebeziumDDLDeclaredTypes(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE dt",
		"CREATE TABLE dt.t (a INTEGER, b INT(11) UNSIGNED, c BOOL, d DEC, e NUMERIC(5,2), f CHARACTER VARYING(10), g DOUBLE PRECISION, "+
			"h REAL, i SERIAL, j LONG VARCHAR, k TINYINT(3) UNSIGNED ZEROFILL, l CHAR(60) BINARY, m BIT, n DATETIME(0), o TEXT(20))")
	out := stRead(t, srv, "--ddl", "--format", "debezium")
	var cols []any
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not JSON: %v: %s", err, line)
		}
		if tcs, _ := m["tableChanges"].([]any); m["databaseName"] == "dt" && len(tcs) == 1 {
			tab, _ := tcs[0].(map[string]any)["table"].(map[string]any)
			cols, _ = tab["columns"].([]any)
		}
	}
	num := func(n int) any {
		if n < 0 {
			return nil
		}
		return float64(n)
	}
	want := []struct {
		typeName      string
		jdbc          int
		length, scale int
	}{
		{"INTEGER", 4, -1, -1}, {"INT UNSIGNED", 4, 11, -1}, {"BOOL", 16, -1, -1}, {"DEC", 3, 10, 0}, {"NUMERIC", 2, 5, 2},
		{"CHARACTER VARYING", 12, 10, -1}, {"DOUBLE PRECISION", 8, -1, -1}, {"REAL", 7, -1, -1}, {"BIGINT UNSIGNED", -5, -1, -1},
		{"LONG VARCHAR", 12, -1, -1}, {"TINYINT UNSIGNED ZEROFILL", -6, 3, -1}, {"CHAR BINARY", 1, 60, -1}, {"BIT", -7, 1, -1},
		{"DATETIME", 93, 0, -1}, {"TEXT", 12, 20, -1},
	}
	if len(cols) != len(want) {
		t.Fatalf("columns %v", cols)
	}
	for i, w := range want {
		col := cols[i].(map[string]any)
		got := []any{col["typeName"], col["typeExpression"], col["jdbcType"], col["length"], col["scale"]}
		exp := []any{w.typeName, w.typeName, float64(w.jdbc), num(w.length), num(w.scale)}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("column %v: %v, want %v", col["name"], got, exp)
		}
	}
	if i := cols[8].(map[string]any); i["autoIncremented"] != true || i["generated"] != true || i["optional"] != false {
		t.Errorf("SERIAL column: %v", i)
	}
}
