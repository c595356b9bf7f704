package envelope

import "testing"

// Column defaults from the schema history, in the schema as Debezium
// gives them: literals of plain types only.
func TestDebeziumDefault(t *testing.T) {
	for _, c := range []struct {
		typ, name, sql, want string
		ok                   bool
	}{
		{"int32", "", "5", "5", true},
		{"int32", "", "'-7'", "-7", true},
		{"int8", "", "300", "", false},
		{"int64", "", "current_timestamp()", "", false},
		{"double", "", "1.5", "1.5", true},
		{"boolean", "", "b'1'", "true", true},
		{"string", "", "'it''s'", `"it's"`, true},
		{"string", "", `'a\\b'`, "", false},
		{"string", "", "NULL", "", false},
		{"string", "", "uuid()", "", false},
		{"int32", "io.debezium.time.Date", "'2024-01-01'", "", false},
		{"string", "", "", "", false},
	} {
		got, ok := defaultJSON(&fieldSchema{typ: c.typ, name: c.name}, c.sql)
		if got != c.want || ok != c.ok {
			t.Errorf("%s %s: got %q %v, want %q %v", c.typ, c.sql, got, ok, c.want, c.ok)
		}
	}
}
