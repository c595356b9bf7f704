package ddl

import (
	"strings"
	"testing"
)

// FuzzParse: any statement text parses without a panic, and Redact never
// leaves a string literal of an account statement in place.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"DROP TABLE a, b", "RENAME TABLE a TO b, c TO d", "ALTER TABLE a RENAME TO b, EXCHANGE PARTITION p WITH TABLE c",
		"CREATE DEFINER=`u`@`h` TRIGGER t BEFORE INSERT ON x FOR EACH ROW SET NEW.a = 1",
		"CREATE USER 'u'@'%' IDENTIFIED BY 'pw'", "SET PASSWORD = PASSWORD('x')", "CREATE TABLE x (LIKE y)",
		"ALTER DATABASE CHARACTER SET utf8", "CREATE ALGORITHM = MERGE", "DELETE FROM", "LOAD DATA INTO TABLE",
		"/*!40000 ALTER TABLE `t` DISABLE KEYS */", "CREATE OR REPLACE", "DROP", "`", "'", "GRANT",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		st := Parse(sql, "db")
		_ = Parse(sql, "")
		DMLTarget(sql, "db")
		out, changed := Redact(sql)
		if st.Kind != Account && (changed || out != sql) {
			t.Fatalf("Redact changed a %v statement", st.Kind)
		}
		if st.Kind == Table && len(st.Tables) == 0 {
			t.Fatalf("a table statement without tables: %q", sql)
		}
		if changed && !strings.Contains(out, Redacted) {
			t.Fatalf("changed without %s", Redacted)
		}
	})
}
