package e2e

// binlogcdc archive: the archived files are the server's, byte for byte.

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// arWrite writes n transactions into db.t (created if needed), rotating
// the binlog every rotate transactions (0: never).
func arWrite(t testing.TB, srv *testserver.Server, from, n, rotate int) {
	t.Helper()
	srv.Exec(t, "CREATE DATABASE IF NOT EXISTS db", "CREATE TABLE IF NOT EXISTS db.t (id INT PRIMARY KEY, v VARCHAR(200), b BLOB)")
	for i := from; i < from+n; i++ {
		srv.Exec(t, fmt.Sprintf("INSERT INTO db.t VALUES (%d, REPEAT('x', %d), REPEAT('y', %d))", i, i%200, (i*37)%3000),
			fmt.Sprintf("UPDATE db.t SET v = 'u%d' WHERE id = %d", i, i/2))
		if rotate > 0 && i%rotate == rotate-1 {
			srv.FlushLogs(t)
		}
	}
}

// TestArchiveFromEarliest archives a server's binlogs from the oldest
// while a workload writes and rotates them; every closed file is the
// server's byte for byte, and the open one too once the archiver caught
// up; SIGTERM stops it with exit 0.
func TestArchiveFromEarliest(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	arWrite(t, srv, 0, 30, 10)
	tmp := t.TempDir()
	dir := tmp + "/arch"
	r := arStart(t, tmp, "a", "--source", srv.DSN(), "--dir", dir, "--from", "earliest", "--heartbeat", "1s")
	arWrite(t, srv, 30, 60, 15)
	arWaitWhole(t, r, srv, dir)
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, r.errText())
	}
	if d := arDiff(srv, dir, true, nil); d != "" {
		t.Fatal(d)
	}
	m := arReadManifest(t, dir)
	for i, f := range m.Files {
		last := i == len(m.Files)-1
		if f.Complete == last || (!last && (f.SHA256 == "" || f.End != "rotate")) {
			t.Errorf("manifest entry %d: %+v", i, f)
		}
	}
	t.Logf("stderr:\n%s", r.errText())
}
