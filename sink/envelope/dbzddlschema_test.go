package envelope

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Debezium's schema change schemas, transcribed field by field from its
// SchemaFactory (debezium/debezium aad55199: schemaHistoryConnectorValueSchema,
// schemaHistoryConnectorKeySchema, schemaHistoryChangeSchema,
// schemaHistoryTableSchema, schemaHistoryColumnSchema,
// sourceInfoSchemaBuilder) and BinlogSourceInfoStructMaker: each row is
// "path type optional [name version]"; [] is an array's items.
var dbzSchemaChangeValueFacts = []string{
	". struct false io.debezium.connector.mysql.SchemaChangeValue 1",
	"source struct false io.debezium.connector.mysql.Source 1",
	"source.version string false",
	"source.connector string false",
	"source.name string false",
	"source.ts_ms int64 false",
	"source.snapshot string true io.debezium.data.Enum 1",
	"source.db string false",
	"source.sequence string true",
	"source.ts_us int64 true",
	"source.ts_ns int64 true",
	"source.table string true",
	"source.server_id int64 false",
	"source.gtid string true",
	"source.file string false",
	"source.pos int64 false",
	"source.row int32 false",
	"source.thread int64 true",
	"source.query string true",
	"ts_ms int64 false",
	"databaseName string true",
	"schemaName string true",
	"ddl string true",
	"tableChanges array false",
	"tableChanges[] struct false io.debezium.connector.schema.Change 1",
	"tableChanges[].type string false",
	"tableChanges[].id string false",
	"tableChanges[].table struct true io.debezium.connector.schema.Table 1",
	"tableChanges[].table.defaultCharsetName string true",
	"tableChanges[].table.primaryKeyColumnNames array true",
	"tableChanges[].table.primaryKeyColumnNames[] string false",
	"tableChanges[].table.columns array false",
	"tableChanges[].table.columns[] struct false io.debezium.connector.schema.Column 1",
	"tableChanges[].table.columns[].name string false",
	"tableChanges[].table.columns[].jdbcType int32 false",
	"tableChanges[].table.columns[].nativeType int32 true",
	"tableChanges[].table.columns[].typeName string false",
	"tableChanges[].table.columns[].typeExpression string true",
	"tableChanges[].table.columns[].charsetName string true",
	"tableChanges[].table.columns[].length int32 true",
	"tableChanges[].table.columns[].scale int32 true",
	"tableChanges[].table.columns[].position int32 false",
	"tableChanges[].table.columns[].optional boolean true",
	"tableChanges[].table.columns[].autoIncremented boolean true",
	"tableChanges[].table.columns[].generated boolean true",
	"tableChanges[].table.columns[].comment string true",
	"tableChanges[].table.columns[].defaultValueExpression string true",
	"tableChanges[].table.columns[].enumValues array true",
	"tableChanges[].table.columns[].enumValues[] string false",
	"tableChanges[].table.comment string true",
}

var dbzSchemaChangeKeyFacts = []string{
	". struct false io.debezium.connector.mysql.SchemaChangeKey 1",
	"databaseName string false",
}

// schemaFacts flattens a JsonConverter schema into the rows above.
func schemaFacts(t *testing.T, s map[string]any, path string, out []string) []string {
	t.Helper()
	row := fmt.Sprintf("%s %v %v", path, s["type"], s["optional"])
	if name, ok := s["name"].(string); ok {
		row += fmt.Sprintf(" %s %v", name, s["version"])
	}
	out = append(out, row)
	prefix := path + "."
	if path == "." {
		prefix = ""
	}
	switch s["type"] {
	case "struct":
		for _, f := range s["fields"].([]any) {
			fs := f.(map[string]any)
			out = schemaFacts(t, fs, prefix+fs["field"].(string), out)
		}
	case "array":
		out = schemaFacts(t, s["items"].(map[string]any), path+"[]", out)
	}
	return out
}

func ddlChange() *change.Change {
	tbl := &tablemap.Table{DB: "d", Name: "t", PrimaryKey: []int{0}, PKNames: []string{"id"}, Columns: []tablemap.Column{
		{Name: "id", Type: mysql.MYSQL_TYPE_LONG},
		{Name: "e", Type: mysql.MYSQL_TYPE_ENUM, EnumValues: []string{"a", "b"}, Nullable: true},
	}}
	def := &change.TableDef{Table: tbl, Charset: "utf8mb4", Columns: []change.ColumnDef{{AutoIncrement: true}, {Default: "'a'", HasDefault: true, Comment: "c"}}}
	return &change.Change{Op: change.DDL, DB: "d", SQL: "CREATE TABLE t (…)", Time: time.Unix(5, 0), ServerID: 1,
		Pos:    change.Position{File: "binlog.000001", Offset: 4},
		Schema: []change.SchemaChange{{Kind: change.TableCreate, DB: "d", Table: "t", New: def}}}
}

// TestDebeziumSchemaChangeSchema: with --with-schema a schema change
// record's value and key are {"schema":…,"payload":…}, the schemas
// Debezium's field for field, the payloads those without the schema.
func TestDebeziumSchemaChangeSchema(t *testing.T) {
	now := func() time.Time { return time.Unix(9, 0) }
	plain, err := New(Options{Format: "debezium", Name: "p", Now: now})
	if err != nil {
		t.Fatal(err)
	}
	withSchema, err := New(Options{Format: "debezium", Name: "p", Now: now, WithSchema: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*change.Change{ddlChange(), {Op: change.DDL, DB: "d", SQL: "CREATE DATABASE d", Time: time.Unix(5, 0)}} {
		for _, part := range []struct {
			name  string
			facts []string
			enc   func(Encoder) ([]byte, error)
		}{
			{"value", dbzSchemaChangeValueFacts, func(e Encoder) ([]byte, error) { return e.AppendValue(nil, c) }},
			{"key", dbzSchemaChangeKeyFacts, func(e Encoder) ([]byte, error) { b, _ := e.AppendKey(nil, c); return b, nil }},
		} {
			want, err := part.enc(plain)
			if err != nil {
				t.Fatal(err)
			}
			got, err := part.enc(withSchema)
			if err != nil {
				t.Fatalf("%s: %v", part.name, err)
			}
			var m struct {
				Schema  map[string]any
				Payload json.RawMessage
			}
			dec := json.NewDecoder(bytes.NewReader(got))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&m); err != nil {
				t.Fatalf("%s: %v: %s", part.name, err, got)
			}
			if !bytes.Equal(m.Payload, want) {
				t.Errorf("%s payload\n got  %s\n want %s", part.name, m.Payload, want)
			}
			if facts := schemaFacts(t, m.Schema, ".", nil); !slices.Equal(facts, part.facts) {
				t.Errorf("%s schema:\n got  %s\n want %s", part.name, strings.Join(facts, "\n      "), strings.Join(part.facts, "\n      "))
			}
		}
	}
}
