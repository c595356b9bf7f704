package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestStreamMaxwellRowQuery: stream --format maxwell
// --maxwell-output-row-query asks MariaDB for its ANNOTATE_ROWS events
// (which it sends a replica only when asked) and writes each row's
// statement in "query", as Maxwell's output_row_query does.
func TestStreamMaxwellRowQuery(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE q", "CREATE TABLE q.t (id INT PRIMARY KEY)")
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	r := stStart(t, dir, "rowquery", nil, "--source", srv.DSN(), "--from", "earliest", "--format", "maxwell",
		"--maxwell-output-row-query", "--output", out, "--checkpoint", filepath.Join(dir, "cp.json"))
	stPoll(t, time.Minute, r, "connected", r.ready)
	srv.Exec(t, "INSERT INTO q.t VALUES (1), (2) /* two rows */", "UPDATE q.t SET id = 3 WHERE id = 2")
	last := stLastGTID(t, srv)
	stPoll(t, time.Minute, r, "transaction "+last, func() bool { return hasGTID(out, last) })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d: %s", code, r.errText())
	}
	b, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{
		`{"database":"q","table":"t","query":"INSERT INTO q.t VALUES (1), (2) /* two rows */","type":"insert",`,
		`{"database":"q","table":"t","query":"INSERT INTO q.t VALUES (1), (2) /* two rows */","type":"insert",`,
		`{"database":"q","table":"t","query":"UPDATE q.t SET id = 3 WHERE id = 2","type":"update",`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: %s\nwant it to start with %s", i, lines[i], w)
		}
	}
}
