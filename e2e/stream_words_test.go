package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestStreamSQLStopIsClean (issue 27): stream --format sql stopped by
// SIGTERM exits 0, and its summary says what it wrote, not that it
// "stopped with an error".
func TestStreamSQLStopIsClean(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE ws", "CREATE TABLE ws.t (id INT PRIMARY KEY, v VARCHAR(20))")
	dir := t.TempDir()
	r := stStart(t, dir, "sql", nil, "--source", src.DSN(), "--from", "now", "--format", "sql")
	stPoll(t, time.Minute, r, "the connection", r.ready)
	src.Exec(t, "INSERT INTO ws.t VALUES (1, 'one')")
	stPoll(t, time.Minute, r, "the INSERT on stdout", func() bool { return strings.Contains(string(r.outBytes()), "'one'") })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d after SIGTERM:\n%s", code, r.errText())
	}
	if e := r.errText(); strings.Contains(e, "error") || !strings.Contains(e, "binlogcdc: wrote SQL for 1 rows of 1 transactions") {
		t.Errorf("a clean stop's summary, want \"wrote SQL for 1 rows of 1 transactions\" and no error:\n%s", e)
	}
}

// TestReplayConflictSaidOnce (issue 27): a replay conflict is printed
// once on stderr, by read --to and by stream --to, not once when hit and
// again after the summary.
func TestReplayConflictSaidOnce(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE wc", "CREATE TABLE wc.t (id INT PRIMARY KEY, v VARCHAR(20))")
	dst.Exec(t, "CREATE DATABASE wc", "CREATE TABLE wc.t (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO wc.t VALUES (1, 'in the way')")
	file, off := stMasterPos(t, src)
	start := fmt.Sprintf("%s:%d", file, off)
	src.Exec(t, "INSERT INTO wc.t VALUES (1, 'one')")
	check := func(what, stderr string) {
		t.Helper()
		if n := strings.Count(stderr, "duplicate"); n != 1 || !strings.Contains(stderr, "conflict: insert of `wc`.`t`") {
			t.Errorf("%s: the conflict is said %d times, want once:\n%s", what, n, stderr)
		}
	}
	_, errs, code := runCLI(t, nil, "read", src.BinlogIndex(), "--start-position", start, "--to", dst.DSN()+"/", "--replica-name", "read")
	if code == 0 {
		t.Fatalf("read --to: exit 0 despite the conflict:\n%s", errs)
	}
	check("read --to", errs)
	_, errs, code = runCLI(t, nil, "read", src.BinlogIndex(), "--start-position", start, "--to", dst.DSN()+"/", "--replica-name", "par", "--parallel", "2")
	if code == 0 {
		t.Fatalf("read --to --parallel 2: exit 0 despite the conflict:\n%s", errs)
	}
	check("read --to --parallel 2", errs)
	r := stStart(t, t.TempDir(), "to", nil, "--source", src.DSN(), "--start-position", start, "--to", dst.DSN()+"/", "--replica-name", "stream")
	if code := r.wait(time.Minute); code == 0 {
		t.Fatalf("stream --to: exit 0 despite the conflict:\n%s", r.errText())
	}
	check("stream --to", r.errText())
}
