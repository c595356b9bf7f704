package e2e

// binlogcdc archive across a failover: the source replaced by its
// promoted replica; the archive goes on by GTID in DIR/history-2.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/archive"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// arReadArchive reads the archive in dir as archive.ReadList says, one
// 'binlogcdc read --ddl' per server history, and returns the outputs
// one after the other.
func arReadArchive(t *testing.T, dir string) []byte {
	t.Helper()
	segs, err := archive.ReadList(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for i := 0; i < len(segs); {
		j := i
		for j+1 < len(segs) && segs[j+1].History == segs[i].History {
			j++
		}
		args := []string{"read", "--ddl", segs[i].Path}
		if segs[i].From > 4 {
			args = append(args, "--start-position", fmt.Sprintf("%s:%d", segs[i].Name, segs[i].From))
		}
		if segs[j].To > 0 {
			args = append(args, "--stop-position", fmt.Sprintf("%s:%d", segs[j].Name, segs[j].To))
		}
		b, errs, code := runCLI(t, nil, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		t.Logf("%v: %d bytes", args, len(b))
		out = append(out, b...)
		i = j + 1
	}
	return out
}

// TestArchiveFailover archives a primary A while its replica R follows
// it; the archiver is killed, A logs more, R catches up, A dies and R is
// promoted and logs transactions of its own. The archiver, restarted
// with --source R, checks that R has the archive's last transaction (the
// same changes), goes on in DIR/history-2 from R's file holding it, is
// killed and restarted there once more; reading the archive as
// archive.ReadList says gives every transaction of R's binlog (A's, then
// R's own) once, in order, and so does 'read DIR' in one run (and a
// replay: arCrossFailover). A server with another server_id that logged
// other changes under the same GTIDs is refused, the archive untouched.
func TestArchiveFailover(t *testing.T) {
	a, r := foPair(t, true)
	arWrite(t, a, 0, 20, 7)
	// db.u lives across the failover (dropped on R): recover DIR finds it.
	a.Exec(t, "CREATE TABLE db.u (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO db.u VALUES (1, 'a'), (2, 'b')", "UPDATE db.u SET v = 'c' WHERE id = 1")
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "arch")
	run := arStart(t, tmp, "a", "--source", a.DSN(), "--dir", dir, "--heartbeat", "1s")
	arWaitWhole(t, run, a, dir)
	run.kill9()
	arWrite(t, a, 20, 15, 6) // not archived before A dies
	foCatchUp(t, a, r)
	foPromote(t, a, r)
	arWrite(t, r, 35, 10, 4)

	t.Run("unrelated server refused", func(t *testing.T) {
		u := testserver.Start(t, testserver.Options{ExtraArgs: []string{"--server-id=3"}})
		u.Exec(t, "SET GLOBAL server_id = 1") // A's GTIDs, other changes
		arWrite(t, u, 1000, 45, 0)
		u.Exec(t, "SET GLOBAL server_id = 3")
		before := arDirState(t, dir)
		arRefused(t, 1, []string{"(server_id 3) logged 0-1-", "with other changes than the archive holds", "is not a replica that had every transaction of the archive",
			"hint: point --source at the promoted replica"}, "--source", u.DSN(), "--dir", dir, "--stop-at-end")
		if after := arDirState(t, dir); after != before {
			t.Errorf("the archive changed:\n%s\nbecame\n%s", before, after)
		}
	})

	h2 := filepath.Join(dir, "history-2")
	run = arStart(t, tmp, "r", "--source", r.DSN(), "--dir", dir, "--heartbeat", "1s")
	arWaitWhole(t, run, r, h2)
	if !strings.Contains(run.errText(), "is server_id 2, not 1: it has the archive's last transaction 0-1-") {
		t.Errorf("no note of the failover:\n%s", run.errText())
	}
	run.kill9()
	r.Exec(t, "INSERT INTO db.u VALUES (3, 'd')", "DELETE FROM db.u WHERE id = 2", "DROP TABLE db.u")
	arWrite(t, r, 45, 10, 4)
	run = arStart(t, tmp, "r2", "--source", r.DSN(), "--dir", dir, "--heartbeat", "1s")
	arWaitWhole(t, run, r, h2)
	run.signal(syscall.SIGTERM)
	if code := run.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, run.errText())
	}
	if d := arDiffEnd(r, h2); d != "" {
		t.Fatal(d)
	}
	top := arReadManifest(t, dir)
	if last := top.Files[len(top.Files)-1]; !last.Complete || last.End != "failover" {
		t.Errorf("A's last archived file: %+v", last)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "binlogcdc-archive.json"))
	if !strings.Contains(string(b), `"next": "history-2"`) {
		t.Errorf("the manifest names no next history:\n%s", b)
	}
	b, _ = os.ReadFile(filepath.Join(h2, "binlogcdc-archive.json"))
	if !strings.Contains(string(b), `"switch": {`) || !strings.Contains(string(b), `"server_id": 2`) {
		t.Errorf("history-2's manifest:\n%s", b)
	}
	t.Logf("history-2 manifest:\n%s", b)

	foSame(t, "the archive read across the failover", arReadArchive(t, dir), stRead(t, r, "--ddl"))
	arCrossFailover(t, r, dir, true) // archive_failover_read_test.go
}

// TestArchiveFailoverBehind: the promoted replica had not replicated the
// archive's last transactions (its replication was stopped while the
// primary went on): the archive is not continued on it (that would lose
// them), with an error naming the missing GTID; DIR stays as it was.
func TestArchiveFailoverBehind(t *testing.T) {
	a, r := foPair(t, true)
	arWrite(t, a, 0, 5, 0)
	foCatchUp(t, a, r)
	r.Exec(t, "STOP SLAVE")
	arWrite(t, a, 5, 5, 0)
	dir := filepath.Join(t.TempDir(), "arch")
	arRefused(t, 0, nil, "--source", a.DSN(), "--dir", dir, "--stop-at-end")
	foPromote(t, a, r)
	arWrite(t, r, 100, 3, 0)
	before := arDirState(t, dir)
	arRefused(t, 1, []string{"(server_id 2) has not logged 0-1-", "is not a replica that had every transaction of the archive", "hint: point --source at the promoted replica"},
		"--source", r.DSN(), "--dir", dir, "--stop-at-end")
	if after := arDirState(t, dir); after != before {
		t.Errorf("the archive changed:\n%s\nbecame\n%s", before, after)
	}
}

// TestArchiveFailoverContinuing: the archiver keeps running while its
// --source (a proxy standing for a virtual IP) moves from the dead
// primary to the promoted replica: it reconnects, finds another server
// that has its last transaction, and goes on in DIR/history-2; the
// archive read across the switch is the replica's binlog, each
// transaction once.
func TestArchiveFailoverContinuing(t *testing.T) {
	a, r := foPair(t, false)
	arWrite(t, a, 0, 12, 5)
	p := stStartProxy(t, a.Addr())
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "arch")
	run := arStart(t, tmp, "a", "--source", p.dsn(), "--dir", dir, "--heartbeat", "1s")
	arWaitWhole(t, run, a, dir)
	foCatchUp(t, a, r)
	foPromote(t, a, r)
	p.retarget(r.Addr())
	arWrite(t, r, 12, 8, 3)
	arWaitWhole(t, run, r, filepath.Join(dir, "history-2"))
	run.signal(syscall.SIGTERM)
	if code := run.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, run.errText())
	}
	if !strings.Contains(run.errText(), "is server_id 2, not 1") {
		t.Errorf("no note of the failover:\n%s", run.errText())
	}
	foSame(t, "the archive read across the failover", arReadArchive(t, dir), stRead(t, r, "--ddl"))
	arCrossFailover(t, r, dir, false) // archive_failover_read_test.go
}
