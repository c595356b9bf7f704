package main

// What the formats' consumers require of each record, written from their
// decoders: Kafka Connect's JsonConverter (connect/json JsonConverter,
// schemas.enable), Flink's debezium-json, maxwell-json and canal-json
// (flink-formats/flink-json: DebeziumJsonDeserializationSchema,
// MaxwellJsonDeserializationSchema, CanalJsonDeserializationSchema,
// JsonToRowDataConverters). See /work/shared/notes/formats.md.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strconv"
	"testing"
)

func decodeLine(t *testing.T, line []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, line)
	}
	return m
}

func isInt(v any, bits uint) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	_, err := strconv.ParseInt(string(n), 10, int(bits))
	return err == nil
}

// checkDebeziumEnvelope: the envelope fields Debezium consumers read.
func checkDebeziumEnvelope(t *testing.T, line []byte) {
	t.Helper()
	m := decodeLine(t, line)
	checkDebeziumPayload(t, m, line)
}

func checkDebeziumPayload(t *testing.T, m map[string]any, line []byte) {
	t.Helper()
	for _, f := range []string{"before", "after", "source", "op", "ts_ms", "ts_us", "ts_ns", "transaction"} {
		if _, ok := m[f]; !ok {
			t.Errorf("no %q: %s", f, line)
		}
	}
	op, _ := m["op"].(string)
	switch op {
	case "c", "r":
		if m["before"] != nil || m["after"] == nil {
			t.Errorf("op %s: want before null, after set: %s", op, line)
		}
	case "u":
		// Flink's debezium-json needs before for updates.
		if m["before"] == nil || m["after"] == nil {
			t.Errorf("op u: want before and after: %s", line)
		}
	case "d":
		if m["before"] == nil || m["after"] != nil {
			t.Errorf("op d: want before set, after null: %s", line)
		}
	default:
		t.Errorf("op %q is not c, u, d or r: %s", op, line)
	}
	src, _ := m["source"].(map[string]any)
	if src == nil {
		t.Fatalf("no source: %s", line)
	}
	if src["connector"] != "mysql" || src["snapshot"] != "false" {
		t.Errorf("source.connector/snapshot: %s", line)
	}
	for _, f := range []string{"ts_ms", "server_id", "pos", "row"} {
		if !isInt(src[f], 64) {
			t.Errorf("source.%s is not an integer: %s", f, line)
		}
	}
	for _, f := range []string{"name", "db", "table", "file", "version"} {
		if _, ok := src[f].(string); !ok {
			t.Errorf("source.%s is not a string: %s", f, line)
		}
	}
	if !isInt(m["ts_ms"], 64) {
		t.Errorf("ts_ms: %s", line)
	}
}

// checkConnectSchema: JsonConverter with schemas.enable=true reads
// {"schema","payload"} and converts the payload by the schema
// (JsonConverter.convertToConnect): every field present, non-optional
// ones non-null, each value of its type.
func checkConnectSchema(t *testing.T, line []byte) {
	t.Helper()
	m := decodeLine(t, line)
	schema, _ := m["schema"].(map[string]any)
	payload, _ := m["payload"].(map[string]any)
	if schema == nil || payload == nil || len(m) != 2 {
		t.Fatalf("want {schema, payload}: %s", line)
	}
	if err := connectValue(schema, payload); err != "" {
		t.Errorf("payload does not match its schema: %s: %s", err, line)
	}
	checkDebeziumPayload(t, payload, line)
}

func connectValue(s map[string]any, v any) string {
	if v == nil {
		if s["optional"] == true {
			return ""
		}
		if _, ok := s["default"]; ok {
			return ""
		}
		return "null in a required field " + str(s["field"])
	}
	typ, _ := s["type"].(string)
	ok := true
	switch typ {
	case "int8":
		ok = isInt(v, 8)
	case "int16":
		ok = isInt(v, 16)
	case "int32":
		ok = isInt(v, 32)
	case "int64":
		ok = isInt(v, 64)
	case "float", "double":
		_, ok = v.(json.Number)
	case "boolean":
		_, ok = v.(bool)
	case "string":
		_, ok = v.(string)
	case "bytes":
		var b64 string
		if b64, ok = v.(string); ok {
			_, err := base64.StdEncoding.DecodeString(b64)
			ok = err == nil
		}
	case "array":
		arr, isArr := v.([]any)
		items, _ := s["items"].(map[string]any)
		if !isArr || items == nil {
			return "array field " + str(s["field"])
		}
		for _, e := range arr {
			if err := connectValue(items, e); err != "" {
				return err
			}
		}
	case "struct":
		obj, isObj := v.(map[string]any)
		if !isObj {
			return "struct field " + str(s["field"]) + " is not an object"
		}
		fields, _ := s["fields"].([]any)
		if len(fields) != len(obj) {
			return "struct " + str(s["name"]) + ": " + strconv.Itoa(len(obj)) + " members for " + strconv.Itoa(len(fields)) + " fields"
		}
		for _, f := range fields {
			fs := f.(map[string]any)
			fv, present := obj[str(fs["field"])]
			if !present {
				return "missing field " + str(fs["field"])
			}
			if err := connectValue(fs, fv); err != "" {
				return err
			}
		}
	default:
		return "unknown schema type " + typ
	}
	if !ok {
		return "field " + str(s["field"]) + " is not a " + typ
	}
	return ""
}

func str(v any) string { s, _ := v.(string); return s }

var (
	decimalText = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	isoLTZ      = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$`)
)

// checkFlinkDebezium: Flink's debezium-json (schema-include=true reads
// the payload) converts each value to the column's Flink type with
// JsonToRowDataConverters: DECIMAL from a number or a numeric string
// only (Debezium's precise bytes fail), TIMESTAMP_LTZ from ISO-8601 with
// Z, BYTES from base64; DATE/TIME/DATETIME arrive as epoch numbers and
// are declared INT/BIGINT.
func checkFlinkDebezium(t *testing.T, line []byte) {
	t.Helper()
	checkConnectSchema(t, line)
	m := decodeLine(t, line)
	schema := m["schema"].(map[string]any)
	payload := m["payload"].(map[string]any)
	for _, f := range schema["fields"].([]any) {
		fs := f.(map[string]any)
		name := str(fs["field"])
		if name != "before" && name != "after" {
			continue
		}
		row, _ := payload[name].(map[string]any)
		for _, cf := range fs["fields"].([]any) {
			cs := cf.(map[string]any)
			v := row[str(cs["field"])]
			if v == nil {
				continue
			}
			switch str(cs["name"]) {
			case "org.apache.kafka.connect.data.Decimal":
				t.Errorf("column %s: Flink cannot read DECIMAL as Kafka Connect Decimal bytes: %s", str(cs["field"]), line)
			case "io.debezium.time.ZonedTimestamp":
				if !isoLTZ.MatchString(str(v)) {
					t.Errorf("column %s: %v is not ISO-8601 UTC for TIMESTAMP_LTZ", str(cs["field"]), v)
				}
			case "io.debezium.time.Date", "io.debezium.time.MicroTime", "io.debezium.time.Timestamp", "io.debezium.time.MicroTimestamp", "io.debezium.time.Year":
				if !isInt(v, 64) {
					t.Errorf("column %s: %v is not an integer (Flink INT/BIGINT)", str(cs["field"]), v)
				}
			}
		}
	}
}

// checkFlinkMaxwell: Flink's maxwell-json reads type (insert, update,
// delete only), data, and old (required for updates: before = old over
// data).
func checkFlinkMaxwell(t *testing.T, line []byte) {
	t.Helper()
	m := decodeLine(t, line)
	typ := str(m["type"])
	if typ != "insert" && typ != "update" && typ != "delete" {
		t.Errorf("type %q: %s", typ, line)
	}
	if _, ok := m["data"].(map[string]any); !ok {
		t.Errorf("no data object: %s", line)
	}
	if _, ok := m["old"].(map[string]any); typ == "update" && !ok {
		t.Errorf("update without an old object: %s", line)
	} else if typ != "update" && m["old"] != nil {
		t.Errorf("%s with old: %s", typ, line)
	}
	if str(m["database"]) == "" || str(m["table"]) == "" || !isInt(m["ts"], 64) || !isInt(m["server_id"], 64) {
		t.Errorf("database, table, ts, server_id: %s", line)
	}
	if x, ok := m["xid"]; ok && !isInt(x, 64) {
		t.Errorf("xid: %s", line)
	}
	if c, ok := m["commit"]; ok && c != true {
		t.Errorf("commit: %s", line)
	}
	if p := str(m["position"]); !regexp.MustCompile(`^[^:]+:\d+$`).MatchString(p) {
		t.Errorf("position %q: %s", p, line)
	}
}

// checkFlinkCanal: Flink's canal-json reads data (an array), old (for
// UPDATE an array at least as long as data), type, database, table; all
// values are strings or null.
func checkFlinkCanal(t *testing.T, line []byte) {
	t.Helper()
	m := decodeLine(t, line)
	for _, f := range []string{"data", "database", "es", "id", "isDdl", "mysqlType", "old", "pkNames", "sql", "sqlType", "table", "ts", "type"} {
		if _, ok := m[f]; !ok {
			t.Errorf("no %q: %s", f, line)
		}
	}
	if !isInt(m["es"], 64) || !isInt(m["ts"], 64) || !isInt(m["id"], 64) {
		t.Errorf("es, ts, id: %s", line)
	}
	if m["isDdl"] == true {
		if m["data"] != nil || str(m["sql"]) == "" {
			t.Errorf("DDL: %s", line)
		}
		return
	}
	typ := str(m["type"])
	data, _ := m["data"].([]any)
	if len(data) == 0 {
		t.Errorf("no data rows: %s", line)
	}
	for _, r := range data {
		for k, v := range r.(map[string]any) {
			if _, ok := v.(string); v != nil && !ok {
				t.Errorf("data.%s is not a string: %s", k, line)
			}
		}
	}
	switch typ {
	case "INSERT", "DELETE":
		if m["old"] != nil {
			t.Errorf("%s with old: %s", typ, line)
		}
	case "UPDATE":
		old, _ := m["old"].([]any)
		if len(old) < len(data) {
			t.Errorf("UPDATE: old has fewer rows than data: %s", line)
		}
	default:
		t.Errorf("type %q: %s", typ, line)
	}
	types, _ := m["mysqlType"].(map[string]any)
	sqlTypes, _ := m["sqlType"].(map[string]any)
	if len(types) == 0 || len(types) != len(sqlTypes) {
		t.Errorf("mysqlType/sqlType: %s", line)
	}
	for k, v := range sqlTypes {
		if !isInt(v, 32) {
			t.Errorf("sqlType.%s: %s", k, line)
		}
	}
}
