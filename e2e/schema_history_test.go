package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/schemahist"
)

// shStop stops a stream with SIGTERM and waits for a clean exit: the
// schema history file is read only after that (never while the stream
// may replace it).
func shStop(t *testing.T, r *stRun) {
	t.Helper()
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d, want 0; stderr:\n%s", code, r.errText())
	}
	if strings.Contains(r.errText(), "schema history") {
		t.Errorf("a schema history warning:\n%s", r.errText())
	}
}

// shLoad reads the schema history saved beside checkpoint cp, checking
// that the checkpoint names it.
func shLoad(t *testing.T, cp string) *schemahist.History {
	t.Helper()
	c := stLoadCP(t, cp)
	data, warn, err := checkpoint.LoadHistory(cp, c)
	if err != nil || warn != "" || data == nil {
		t.Fatalf("schema history beside %s: %v %s (nil: %v)", cp, err, warn, data == nil)
	}
	h, err := schemahist.Decode(data, cp+checkpoint.HistorySuffix)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func shCols(t *schemahist.Table) string {
	if t == nil {
		return "<unknown>"
	}
	var out []string
	for _, c := range t.Columns {
		s := c.Name
		if c.Generated != "" {
			s += ":" + c.Generated
		}
		if c.HasDefault {
			s += "=" + c.Default
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// TestStreamSchemaHistory: the history follows the DDL of a checkpointed
// stream, is saved beside its checkpoint, and goes on after a restart
// (the ALTER after the restart applies to the table created before it).
func TestStreamSchemaHistory(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	args := []string{"--source", srv.DSN(), "--from", "now", "--output", out, "--checkpoint", cp}
	r := stStart(t, dir, "s1", nil, args...)
	stPoll(t, time.Minute, r, "connected", r.ready)
	srv.Exec(t,
		"CREATE DATABASE sh",
		"CREATE TABLE sh.t (id INT PRIMARY KEY, a INT DEFAULT 4, g INT AS (a * 2) VIRTUAL, s INT AS (a + 1) PERSISTENT) DEFAULT CHARSET=utf8mb4",
		"CREATE TABLE sh.gone (x INT)",
		"RENAME TABLE sh.gone TO sh.moved",
		"INSERT INTO sh.t (id, a) VALUES (1, 10)",
	)
	g := stLastGTID(t, srv)
	stPoll(t, time.Minute, r, "the first transactions", func() bool { return stHasGTID(out, g) })
	shStop(t, r)
	h := shLoad(t, cp)
	if got, want := shCols(h.Table("sh", "t")), "id a=4 g:VIRTUAL s:STORED"; got != want {
		t.Errorf("after the first run: sh.t is %s, want %s", got, want)
	}
	if h.Table("sh", "gone") != nil || shCols(h.Table("sh", "moved")) != "x" {
		t.Errorf("RENAME TABLE not followed: gone %v, moved %s", h.Table("sh", "gone"), shCols(h.Table("sh", "moved")))
	}

	r = stStart(t, dir, "s2", nil, args...)
	stPoll(t, time.Minute, r, "connected", r.ready)
	srv.Exec(t,
		"ALTER TABLE sh.t ADD COLUMN b VARCHAR(5) DEFAULT 'z' AFTER a, DROP COLUMN s",
		"DROP TABLE sh.moved",
		"INSERT INTO sh.t (id, a, b) VALUES (2, 20, 'y')",
	)
	g = stLastGTID(t, srv)
	stPoll(t, time.Minute, r, "the second run's transactions", func() bool { return stHasGTID(out, g) })
	shStop(t, r)
	h = shLoad(t, cp)
	if got, want := shCols(h.Table("sh", "t")), "id a=4 b='z' g:VIRTUAL"; got != want {
		t.Errorf("after the restart: sh.t is %s, want %s", got, want)
	}
	if h.Table("sh", "moved") != nil {
		t.Error("DROP TABLE not followed")
	}
}

// TestStreamSchemaHistoryFormatSQL: --format sql leaves out the generated
// columns the history knows, so the statements apply on a replica.
func TestStreamSchemaHistoryFormatSQL(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	out := filepath.Join(dir, "out.sql")
	r := stStart(t, dir, "s", nil, "--source", srv.DSN(), "--from", "now", "--format", "sql", "--output", out)
	stPoll(t, time.Minute, r, "connected", r.ready)
	ddl := "CREATE TABLE gs.t (id INT PRIMARY KEY, a INT, g INT AS (a * 2) VIRTUAL, s INT GENERATED ALWAYS AS (a + 1) STORED, z INT)"
	srv.Exec(t, "CREATE DATABASE gs", ddl,
		"INSERT INTO gs.t (id, a, z) VALUES (1, 10, 100), (2, 20, 200)",
		"UPDATE gs.t SET a = 11 WHERE id = 1",
		"DELETE FROM gs.t WHERE id = 2",
	)
	stPoll(t, time.Minute, r, "the DELETE", func() bool {
		b, _ := os.ReadFile(out)
		return strings.Contains(string(b), "DELETE")
	})
	shStop(t, r)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	ins := regexp.MustCompile("(?m)^INSERT INTO[^\n]*").FindString(text)
	upd := regexp.MustCompile("(?m)^UPDATE[^\n]*").FindString(text)
	if ins == "" || upd == "" {
		t.Fatalf("no INSERT or UPDATE in:\n%s", text)
	}
	for _, s := range []string{ins, upd} {
		if set := strings.SplitN(s, "WHERE", 2)[0]; strings.Contains(set, "`g`") || strings.Contains(set, "`s`") {
			t.Errorf("writes a generated column: %s", s)
		}
	}
	// The statements apply on a replica of the table.
	dst.Exec(t, "CREATE DATABASE gs", ddl)
	var stmts []string
	for _, s := range strings.Split(text, ";\n") {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "INSERT") || strings.HasPrefix(s, "UPDATE") || strings.HasPrefix(s, "DELETE") {
			stmts = append(stmts, s)
		}
	}
	dst.Exec(t, stmts...)
	if got := stVal(t, dst, "SELECT CONCAT(COUNT(*), ':', SUM(a), ':', SUM(g), ':', SUM(s)) FROM gs.t"); got != "1:11:22:12" {
		t.Errorf("replica holds %s, want 1:11:22:12", got)
	}
}

// TestStreamSchemaHistorySnapshot: --snapshot seeds the history with the
// tables' SHOW CREATE TABLE, so a table older than the stream is known,
// and the DDL after the snapshot goes on from there.
func TestStreamSchemaHistorySnapshot(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	srv.Exec(t, "CREATE DATABASE ss",
		"CREATE TABLE ss.old (id INT PRIMARY KEY, a INT NOT NULL DEFAULT 1, v INT AS (a + id) VIRTUAL, c VARCHAR(10) CHARACTER SET latin1)",
		"INSERT INTO ss.old (id, a, c) VALUES (1, 2, 'x')",
	)
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	r := stStart(t, dir, "s", nil, "--source", srv.DSN(), "--snapshot", "--output", out, "--checkpoint", cp)
	stPoll(t, time.Minute, r, "the snapshot", func() bool { return strings.Contains(r.errText(), "snapshot: 1 rows") })
	srv.Exec(t, "ALTER TABLE ss.old ADD COLUMN n INT DEFAULT 9", "INSERT INTO ss.old (id, a, c, n) VALUES (2, 3, 'y', 4)")
	g := stLastGTID(t, srv)
	stPoll(t, time.Minute, r, "the insert after the snapshot", func() bool { return stHasGTID(out, g) })
	shStop(t, r)
	h := shLoad(t, cp)
	if got, want := shCols(h.Table("ss", "old")), "id a=1 v:VIRTUAL c=NULL n=9"; got != want {
		t.Errorf("ss.old is %s, want %s", got, want)
	}
}

// TestStreamSchemaHistoryTarget: with --to mysql:// the history is kept
// in the target's binlogcdc.schema_history, saved with the checkpoint,
// loaded on restart, and left out of verify's comparison.
func TestStreamSchemaHistoryTarget(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	args := []string{"--source", srv.DSN(), "--from", "earliest", "--to", dst.DSN() + "/", "--group-time", "20ms"}
	load := func() *schemahist.History {
		t.Helper()
		data := stVal(t, dst, "SELECT history FROM binlogcdc.schema_history")
		h, err := schemahist.Decode([]byte(data), "binlogcdc.schema_history")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	r := stStart(t, dir, "s1", nil, args...)
	stPoll(t, time.Minute, r, "connected", r.ready)
	srv.Exec(t, "CREATE DATABASE tg",
		"CREATE TABLE tg.t (id INT PRIMARY KEY, a INT DEFAULT 5, g INT AS (a * 2) VIRTUAL)",
		"INSERT INTO tg.t (id, a) VALUES (1, 1)")
	stPoll(t, time.Minute, r, "the row on the target", func() bool {
		rows := dst.QueryStrings(t, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'tg'")
		return *rows[0][0] == "1" && stVal(t, dst, "SELECT COUNT(*) FROM tg.t") == "1"
	})
	shStop(t, r)
	if got, want := shCols(load().Table("tg", "t")), "id a=5 g:VIRTUAL"; got != want {
		t.Errorf("first run: tg.t is %s, want %s", got, want)
	}

	r = stStart(t, dir, "s2", nil, args...)
	stPoll(t, time.Minute, r, "connected", r.ready)
	srv.Exec(t, "ALTER TABLE tg.t ADD COLUMN b INT DEFAULT 6", "INSERT INTO tg.t (id, a) VALUES (2, 2)")
	stPoll(t, time.Minute, r, "the second row on the target", func() bool { return stVal(t, dst, "SELECT COUNT(*) FROM tg.t") == "2" })
	shStop(t, r)
	if got, want := shCols(load().Table("tg", "t")), "id a=5 g:VIRTUAL b=6"; got != want {
		t.Errorf("after the restart: tg.t is %s, want %s", got, want)
	}
	// verify compares the tables, not binlogcdc's bookkeeping.
	if _, errs, code := runCLI(t, nil, "verify", "--source", srv.DSN(), "--to", dst.DSN()+"/"); code != 0 {
		t.Errorf("verify: exit %d: %s", code, errs)
	}
}

// TestStreamSchemaHistoryDebeziumDefault: --format debezium --with-schema
// gives a column's DEFAULT, which the history knows (a TABLE_MAP does not).
func TestStreamSchemaHistoryDebeziumDefault(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	r := stStart(t, dir, "s", nil, "--source", srv.DSN(), "--from", "now", "--format", "debezium", "--with-schema", "--output", out)
	stPoll(t, time.Minute, r, "connected", r.ready)
	srv.Exec(t, "CREATE DATABASE dd",
		"CREATE TABLE dd.t (id INT PRIMARY KEY, n INT NOT NULL DEFAULT 5, s VARCHAR(9) DEFAULT 'it''s', ts TIMESTAMP DEFAULT CURRENT_TIMESTAMP)",
		"INSERT INTO dd.t (id) VALUES (1)")
	stPoll(t, time.Minute, r, "the insert", func() bool {
		b, _ := os.ReadFile(out)
		return strings.Contains(string(b), `"op":"c"`)
	})
	shStop(t, r)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"type":"int32","optional":false,"default":5,"field":"n"}`, `{"type":"string","optional":true,"default":"it's","field":"s"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("no %s in:\n%s", want, b)
		}
	}
}

// TestReadSchemaHistoryParallel: read --to mysql:// keeps the history
// on the target as stream does, with --parallel 2 too: each worker in
// its own row of binlogcdc.schema_history, as of its checkpoint; the
// next run loads the one of the checkpoint it resumes from, so the DDL
// after it applies to the tables known before, as with one connection
// (the same history), and the copies verify.
func TestReadSchemaHistoryParallel(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	one := testserver.Start(t, testserver.Options{})
	load := func(dst *testserver.Server, replica string) *schemahist.History {
		t.Helper()
		data := stVal(t, dst, "SELECT history FROM binlogcdc.schema_history WHERE replica = '"+replica+"'")
		h, err := schemahist.Decode([]byte(data), "binlogcdc.schema_history")
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	insert := func(from, to int) string {
		return fmt.Sprintf("INSERT INTO tp.u (id, a) SELECT seq * 300, seq FROM seq_%d_to_%d", from, to)
	}
	read := func(what string) {
		t.Helper()
		for _, c := range []struct {
			dst  *testserver.Server
			args []string
		}{{dst, []string{"--parallel", "2"}}, {one, nil}} {
			_, errs := rpRun(t, 0, append([]string{"read", srv.BinlogIndex(), "--to", c.dst.DSN() + "/"}, c.args...)...)
			if strings.Contains(errs, "schema history") {
				t.Errorf("%s %v: a schema history warning:\n%s", what, c.args, errs)
			}
		}
		// Both workers' rows agree after the run: each moved to the last
		// transaction end, with the history as of there, the one a
		// single connection keeps.
		if n := stVal(t, dst, "SELECT COUNT(*) FROM binlogcdc.schema_history"); n != "2" {
			t.Fatalf("%s: %s rows in binlogcdc.schema_history, want one per worker", what, n)
		}
		for _, q := range []string{"SELECT COUNT(DISTINCT history) FROM binlogcdc.schema_history", "SELECT COUNT(DISTINCT history) FROM binlogcdc.schema_history WHERE replica = 'default'"} {
			if n := stVal(t, dst, q); n != "1" {
				t.Errorf("%s: the workers' histories differ", what)
			}
		}
		if p, s := load(dst, "default"), load(one, "default"); shCols(p.Table("tp", "u")) != shCols(s.Table("tp", "u")) {
			t.Errorf("%s: tp.u is %s with --parallel 2, %s with one connection", what, shCols(p.Table("tp", "u")), shCols(s.Table("tp", "u")))
		}
		for _, d := range []*testserver.Server{dst, one} {
			if _, errs, code := runCLI(t, nil, "verify", "--source", srv.DSN(), "--to", d.DSN()+"/"); code != 0 {
				t.Errorf("%s: verify: exit %d: %s", what, code, errs)
			}
		}
	}

	srv.Exec(t, "CREATE DATABASE tp",
		"CREATE TABLE tp.t (id INT PRIMARY KEY, a INT DEFAULT 5, g INT AS (a * 2) VIRTUAL)",
		"RENAME TABLE tp.t TO tp.u",
		"USE tp", insert(1, 10), "INSERT INTO tp.u (id) VALUES (1)", insert(11, 20))
	read("first run")
	if got, want := shCols(load(dst, "default").Table("tp", "u")), "id a=5 g:VIRTUAL"; got != want {
		t.Errorf("first run: tp.u is %s, want %s", got, want)
	}

	srv.Exec(t, "ALTER TABLE tp.u ADD COLUMN b INT DEFAULT 6", "USE tp", insert(21, 30),
		"ALTER TABLE tp.u ALTER COLUMN b SET DEFAULT 7", "CREATE TABLE tp.x (id INT PRIMARY KEY)", "DROP TABLE tp.x",
		"ALTER TABLE tp.u ADD COLUMN c VARCHAR(3) DEFAULT 'c' AFTER a", "USE tp", insert(31, 40))
	read("second run")
	h := load(dst, "default")
	if got, want := shCols(h.Table("tp", "u")), "id a=5 c='c' g:VIRTUAL b=7"; got != want {
		t.Errorf("after the second run: tp.u is %s, want %s", got, want)
	}
	if h.Table("tp", "x") != nil || h.Table("tp", "t") != nil {
		t.Error("DROP TABLE or RENAME TABLE not followed")
	}

	// Workers left apart by a crash: worker 1 before an ALTER, worker 0
	// after it. The restart resumes at worker 1's checkpoint with worker
	// 1's history (worker 0's would see the ALTER twice), reads the
	// ALTER again into it, and worker 0 skips it.
	dst.Exec(t, "CREATE DATABASE bk",
		"CREATE TABLE bk.cp AS SELECT * FROM binlogcdc.checkpoint WHERE replica = 'default#1'",
		"CREATE TABLE bk.sh AS SELECT * FROM binlogcdc.schema_history WHERE replica = 'default#1'")
	srv.Exec(t, "ALTER TABLE tp.u ADD COLUMN d INT DEFAULT 8")
	rpRun(t, 0, "read", srv.BinlogIndex(), "--to", dst.DSN()+"/", "--parallel", "2")
	dst.Exec(t, "REPLACE INTO binlogcdc.checkpoint SELECT * FROM bk.cp", "REPLACE INTO binlogcdc.schema_history SELECT * FROM bk.sh", "DROP DATABASE bk")
	srv.Exec(t, "USE tp", insert(41, 50))
	read("after workers left apart")
	if got, want := shCols(load(dst, "default").Table("tp", "u")), "id a=5 c='c' g:VIRTUAL b=7 d=8"; got != want {
		t.Errorf("after workers left apart: tp.u is %s, want %s", got, want)
	}
}
