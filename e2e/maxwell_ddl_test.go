package e2e

// Maxwell's DDL records (issue 24 section 2): 'read --ddl --format
// maxwell' and 'stream --ddl --format maxwell --checkpoint', compared with
// the records Maxwell's own serialization tests expect
// (zendesk/maxwell src/test/resources/sql/serialization: create_database,
// create_table, alter_table, drop_table, transcribed below; "utf8" there
// is their server's default character set, here the test server's).

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// mxDDLCase is one statement and the record Maxwell's tests expect for
// it, with CS standing for the server's default character set. A
// statement that only sets the stage there (no assertion) is expected
// with the fields Maxwell's ResolvedSchemaChange gives it.
type mxDDLCase struct{ sql, want string }

var mxDDLCases = []mxDDLCase{
	// create_database
	{"CREATE database `ser_d1` charset 'latin1'", `{"type":"database-create","database":"ser_d1","charset":"latin1"}`},
	{"CREATE database if not exists `ser_d2`", `{"type":"database-create","database":"ser_d2","charset":"CS"}`},
	{"ALTER database `ser_d1` charset 'utf8'", `{"type":"database-alter","database":"ser_d1","charset":"utf8"}`},
	{"DROP database `ser_d2`", `{"type":"database-drop","database":"ser_d2"}`},
	{"DROP database if exists `ser_d1`", `{"type":"database-drop","database":"ser_d1"}`},
	// create_table
	{"CREATE database `ser1`", `{"type":"database-create","database":"ser1","charset":"CS"}`},
	{"CREATE table `ser1`.`tbl1` ( id mediumint, `a` varchar(255) character set latin1, `b` mediumtext, `c` enum('a','b'), primary KEY(id) )",
		`{"type":"table-create","database":"ser1","table":"tbl1","def":{"database":"ser1","table":"tbl1","columns":[
		{"name":"id","type":"mediumint","signed":true},{"name":"a","type":"varchar","charset":"latin1"},
		{"name":"b","type":"mediumtext","charset":"CS"},{"name":"c","type":"enum","enum-values":["a","b"]}],
		"primary-key":["id"],"charset":"CS"}}`},
	{"CREATE table `ser1`.`tbl2` ( id int unsigned, `a` BIT, primary key (id, a))",
		`{"type":"table-create","database":"ser1","table":"tbl2","def":{"database":"ser1","table":"tbl2","columns":[
		{"name":"id","type":"int","signed":false},{"name":"a","type":"bit"}],"primary-key":["id","a"],"charset":"CS"}}`},
	{"CREATE table `ser1`.`tbl3` ( id int, `dt` datetime(6), `ts` timestamp(3), `t` time(6), primary key (id))",
		`{"type":"table-create","database":"ser1","table":"tbl3","def":{"database":"ser1","table":"tbl3","columns":[
		{"name":"id","type":"int","signed":true},{"name":"dt","type":"datetime","column-length":6},
		{"name":"ts","type":"timestamp","column-length":3},{"name":"t","type":"time","column-length":6}],"primary-key":["id"],"charset":"CS"}}`},
	{"CREATE database `ser1like`", `{"type":"database-create","database":"ser1like","charset":"CS"}`},
	{"CREATE table `ser1like`.`tbllike` LIKE `ser1`.`tbl2`",
		`{"type":"table-create","database":"ser1like","table":"tbllike","def":{"database":"ser1like","table":"tbllike","columns":[
		{"name":"id","type":"int","signed":false},{"name":"a","type":"bit"}],"primary-key":["id","a"],"charset":"CS"}}`},
	// alter_table
	{"CREATE database `ser3`", `{"type":"database-create","database":"ser3","charset":"CS"}`},
	{"CREATE table `ser3`.`tbl` ( id mediumint, `a` varchar(255) character set latin1, `b` mediumtext, `c` enum('a','b'), primary KEY(id) )",
		`{"type":"table-create","database":"ser3","table":"tbl"}`},
	{"ALTER table `ser3`.`tbl` add column `d` blob not null after `b`",
		`{"type":"table-alter","database":"ser3","table":"tbl",
		"old":{"database":"ser3","table":"tbl","charset":"CS","primary-key":["id"],"columns":[
		{"name":"id","type":"mediumint","signed":true},{"name":"a","type":"varchar","charset":"latin1"},
		{"name":"b","type":"mediumtext","charset":"CS"},{"name":"c","type":"enum","enum-values":["a","b"]}]},
		"def":{"database":"ser3","table":"tbl","charset":"CS","primary-key":["id"],"columns":[
		{"name":"id","type":"mediumint","signed":true},{"name":"a","type":"varchar","charset":"latin1"},
		{"name":"b","type":"mediumtext","charset":"CS"},{"name":"d","type":"blob","charset":"binary"},
		{"name":"c","type":"enum","enum-values":["a","b"]}]}}`},
	// Not in Maxwell's serialization tests: RENAME TABLE is a
	// table-alter whose def has the new name (ResolvedTableAlter).
	{"RENAME TABLE `ser1`.`tbl2` TO `ser1`.`tbl2b`",
		`{"type":"table-alter","database":"ser1","table":"tbl2",
		"old":{"database":"ser1","table":"tbl2","columns":[{"name":"id","type":"int","signed":false},{"name":"a","type":"bit"}],"primary-key":["id","a"],"charset":"CS"},
		"def":{"database":"ser1","table":"tbl2b","columns":[{"name":"id","type":"int","signed":false},{"name":"a","type":"bit"}],"primary-key":["id","a"],"charset":"CS"}}`},
	// drop_table
	{"CREATE database `serdrop`", `{"type":"database-create","database":"serdrop","charset":"CS"}`},
	{"CREATE table `serdrop`.`tbl` ( id int )", `{"type":"table-create","database":"serdrop","table":"tbl","def":{"database":"serdrop","table":"tbl",
		"columns":[{"name":"id","type":"int","signed":true}],"primary-key":[],"charset":"CS"}}`},
	{"DROP table `serdrop`.`tbl`", `{"type":"table-drop","database":"serdrop","table":"tbl"}`},
}

// mxDDLRecords decodes the DDL records of out (Maxwell JSON lines) about
// the databases named with prefix.
func mxDDLRecords(t testing.TB, out []byte, prefix string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not JSON: %v: %s", err, line)
		}
		typ, _ := m["type"].(string)
		db, _ := m["database"].(string)
		if strings.HasPrefix(typ, "table-") || strings.HasPrefix(typ, "database-") {
			if strings.HasPrefix(db, prefix) {
				recs = append(recs, m)
			}
		}
	}
	return recs
}

// mxDDLCheck compares a record with the expected one: the fields it
// lists, whole; ts, sql and position must be there.
func mxDDLCheck(t testing.TB, got map[string]any, want, cs string) {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(want, `"CS"`, `"`+cs+`"`)), &w); err != nil {
		t.Fatalf("expectation: %v: %s", err, want)
	}
	for k, v := range w {
		if !reflect.DeepEqual(got[k], v) {
			g, _ := json.Marshal(got[k])
			e, _ := json.Marshal(v)
			t.Errorf("%s: %q:\n got  %s\n want %s", w["type"], k, g, e)
		}
	}
	for _, k := range []string{"ts", "sql", "position"} {
		if _, ok := got[k]; !ok {
			t.Errorf("%s: no %q: %v", w["type"], k, got)
		}
	}
}

func TestMaxwellDDLRead(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	cs := *srv.QueryStrings(t, "SELECT @@character_set_server")[0][0]
	want := mxDDLCases
	for _, c := range want {
		srv.Exec(t, c.sql)
	}
	out := stRead(t, srv, "--ddl", "--format", "maxwell")
	got := mxDDLRecords(t, out, "ser")
	if len(got) != len(want) {
		t.Fatalf("%d DDL records, want %d:\n%s", len(got), len(want), out)
	}
	for i, c := range want {
		mxDDLCheck(t, got[i], c.want, cs)
		// MariaDB logs DROP TABLE rewritten ("DROP TABLE … /* generated
		// by server */").
		if sql, _ := got[i]["sql"].(string); !strings.HasPrefix(strings.ToLower(sql), strings.ToLower(c.sql)) {
			t.Errorf("record %d: sql %q, want %q", i, got[i]["sql"], c.sql)
		}
	}
}

// ddlRestart runs 'stream --ddl --format format --checkpoint' over the
// statements create (then SIGTERM once seen is in the output), and,
// restarted from the checkpoint, over alter, written while no stream
// ran (until seen2); it returns the output and the start position.
func ddlRestart(t *testing.T, srv *testserver.Server, format string, create, alter []string, seen, seen2 string) ([]byte, string) {
	t.Helper()
	dir := t.TempDir()
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	srv.Exec(t, "FLUSH BINARY LOGS")
	file, off := stMasterPos(t, srv)
	start := file + ":" + strconv.FormatUint(off, 10)
	args := []string{"--source", srv.DSN(), "--start-position", start, "--ddl", "--format", format, "--output", out, "--checkpoint", cp}
	has := func(s string) func() bool {
		return func() bool { b, _ := os.ReadFile(out); return bytes.Contains(b, []byte(s)) }
	}
	r := stStart(t, dir, "run1", nil, args...)
	srv.Exec(t, create...)
	stPoll(t, time.Minute, r, seen, has(seen))
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit %d: %s", code, r.errText())
	}
	srv.Exec(t, alter...) // while no stream runs
	r = stStart(t, dir, "run2", nil, args...)
	stPoll(t, time.Minute, r, seen2, has(seen2))
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit %d: %s", code, r.errText())
	}
	b, _ := os.ReadFile(out)
	return b, start
}

// TestMaxwellDDLStreamRestart: the schema history is restored from the
// checkpoint, so the "old" of an ALTER TABLE read after a restart is the
// table as the first run left it.
func TestMaxwellDDLStreamRestart(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	b, start := ddlRestart(t, srv, "maxwell",
		[]string{"CREATE DATABASE mxr", "CREATE TABLE mxr.t (id INT UNSIGNED PRIMARY KEY, v VARCHAR(10) CHARACTER SET latin1)"},
		[]string{"ALTER TABLE mxr.t ADD COLUMN n BIGINT NOT NULL, DROP PRIMARY KEY"}, `"type":"table-create"`, `"type":"table-alter"`)
	recs := mxDDLRecords(t, b, "mxr")
	if len(recs) != 3 {
		t.Fatalf("%d records, want database-create, table-create, table-alter:\n%s", len(recs), b)
	}
	def := `{"database":"mxr","table":"t","charset":"CS","columns":[{"name":"id","type":"int","signed":false},{"name":"v","type":"varchar","charset":"latin1"}],"primary-key":["id"]}`
	def2 := `{"database":"mxr","table":"t","charset":"CS","columns":[{"name":"id","type":"int","signed":false},{"name":"v","type":"varchar","charset":"latin1"},{"name":"n","type":"bigint","signed":true}],"primary-key":[]}`
	cs := *srv.QueryStrings(t, "SELECT @@character_set_server")[0][0]
	mxDDLCheck(t, recs[1], `{"type":"table-create","database":"mxr","table":"t","def":`+def+`}`, cs)
	mxDDLCheck(t, recs[2], `{"type":"table-alter","database":"mxr","table":"t","old":`+def+`,"def":`+def2+`}`, cs)
	// The same records as 'read' makes of the binlogs (from the same
	// start).
	want := stRead(t, srv, "--ddl", "--format", "maxwell", "--start-position", start)
	norm := func(b []byte) []byte {
		var keep [][]byte
		for _, l := range bytes.Split(b, []byte("\n")) {
			if bytes.Contains(l, []byte(`"database":"mxr"`)) {
				keep = append(keep, l)
			}
		}
		return bytes.Join(keep, []byte("\n"))
	}
	stSameOutput(t, "stream --ddl --format maxwell", norm(b), norm(want))
}
