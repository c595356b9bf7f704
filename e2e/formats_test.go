package e2e

// --format debezium|maxwell|canal with 'binlogcdc stream' (issue 14): a
// stream stopped and resumed from its checkpoint writes what one 'read'
// of the same binlogs writes in that format.

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// processingTime matches the times at which binlogcdc wrote a record
// (Debezium's top-level ts_ms/ts_us/ts_ns, Canal's ts), which differ
// between runs.
var processingTime = regexp.MustCompile(`"ts_ms":\d+,"ts_us":\d+,"ts_ns":\d+,"transaction"|"ts":\d+,"type"`)

func TestStreamFormats(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t,
		"CREATE DATABASE f",
		"CREATE TABLE f.t (id INT PRIMARY KEY, v VARCHAR(20), d DECIMAL(10,2), ts TIMESTAMP(3) NULL, s SET('a','b'))",
		"INSERT INTO f.t VALUES (1, 'one', 1.50, '2024-06-15 12:00:00.125', 'a'), (2, 'two', -2.25, NULL, '')",
	)
	second := []string{
		"BEGIN",
		"UPDATE f.t SET v = 'uno', s = 'a,b' WHERE id = 1",
		"INSERT INTO f.t VALUES (3, 'three', 0, NULL, NULL)",
		"DELETE FROM f.t WHERE id = 2",
		"COMMIT",
		"UPDATE f.t SET id = 10 WHERE id = 3",
		"FLUSH BINARY LOGS",
		"INSERT INTO f.t (id, v) VALUES (4, 'four')",
	}
	for _, format := range []string{"maxwell", "debezium", "canal"} {
		dir := t.TempDir()
		out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
		args := []string{"--source", srv.DSN(), "--from", "earliest", "--format", format, "--output", out, "--checkpoint", cp}
		// First run: up to the current end, then SIGTERM.
		r := stStart(t, dir, format+"1", nil, args...)
		g := stLastGTID(t, srv)
		stPoll(t, time.Minute, r, "transaction "+g, func() bool { return hasGTID(out, g) })
		r.signal(syscall.SIGTERM)
		if code := r.wait(time.Minute); code != 0 {
			t.Fatalf("%s: SIGTERM: exit %d: %s", format, code, r.errText())
		}
		if format == "maxwell" {
			srv.Exec(t, second...) // written while no stream runs
		}
		// Second run: resumes from the checkpoint.
		r = stStart(t, dir, format+"2", nil, args...)
		if format != "maxwell" {
			stPoll(t, time.Minute, r, "connected", r.ready)
		}
		last := stLastGTID(t, srv)
		stPoll(t, time.Minute, r, "transaction "+last, func() bool { return hasGTID(out, last) })
		r.signal(syscall.SIGTERM)
		if code := r.wait(time.Minute); code != 0 {
			t.Fatalf("%s: SIGTERM: exit %d: %s", format, code, r.errText())
		}
		got, _ := os.ReadFile(out)
		want := stRead(t, srv, "--format", format)
		norm := func(b []byte) []byte { return processingTime.ReplaceAll(b, []byte("TIME")) }
		stSameOutput(t, "stream --format "+format, norm(got), norm(want))
		if format == "maxwell" && !bytes.Contains(got, []byte(`"type":"delete"`)) {
			t.Fatalf("maxwell: the second part is missing: %s", got)
		}
	}
}

// hasGTID reports whether a line of transaction gtid is in file (in any
// of the formats).
func hasGTID(file, gtid string) bool {
	b, _ := os.ReadFile(file)
	return bytes.Contains(b, []byte(`"gtid":"`+gtid+`"`))
}
