package e2e

// binlogcdc archive: the archived files are the server's, byte for byte.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	if d := arDiffEnd(srv, dir); d != "" {
		t.Fatal(d)
	}
	m := arReadManifest(t, dir)
	for i, f := range m.Files {
		last := i == len(m.Files)-1
		if f.Complete == last || (!last && (f.SHA256 == "" && f.Sum == "" || f.End != "rotate")) {
			t.Errorf("manifest entry %d: %+v", i, f)
		}
	}
	t.Logf("stderr:\n%s", r.errText())
}

// TestArchiveKillLoop kills the archiver (kill -9) again and again while a
// workload writes and rotates the binlog, and kills (once with kill -9,
// once with SIGTERM) and restarts the server: after each kill the archive is a prefix of the server's
// binlog, and in the end every file is the server's, byte for byte:
// nothing written twice, nothing skipped, the file the server was
// killed in (no ROTATE, the in-use flag left set) and the one it stopped
// in (a STOP event) included.
func TestArchiveKillLoop(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	arWrite(t, srv, 0, 10, 0)
	tmp := t.TempDir()
	dir := tmp + "/arch"
	next := 10
	prev := ""
	for i := 0; i < 8; i++ {
		r := arStart(t, tmp, fmt.Sprintf("a%d", i), "--source", srv.DSN(), "--dir", dir, "--heartbeat", "1s")
		stPoll(t, time.Minute, r, "the archiver to connect", r.ready)
		n := 20 + 7*i
		arWrite(t, srv, next, n, 9+i)
		next += n
		switch i {
		case 2, 5:
			// The server dies with the archiver attached (kill -9, then a
			// clean shutdown), and comes back.
			if i == 2 {
				srv.Kill(t)
			}
			srv.Restart(t)
			arWrite(t, srv, next, 5, 0)
			next += 5
			stPoll(t, time.Minute, r, "the archiver to reconnect", func() bool {
				return strings.Count(r.errText(), "binlogcdc: connected to ") >= 2
			})
		}
		r.kill9()
		if d := arDiff(srv, dir, false, nil); d != "" {
			prevErr := prev
			for _, n := range arServerFiles(t, srv) {
				a, _ := os.ReadFile(filepath.Join(dir, n))
				b, _ := os.ReadFile(filepath.Join(srv.Dir, n))
				t.Logf("%s: archive %x\nserver %x", n, a[:min(len(a), 40)], b[:min(len(b), 40)])
			}
			m, _ := os.ReadFile(filepath.Join(dir, "binlogcdc-archive.json"))
			t.Fatalf("after kill %d: %s\nstderr:\n%s\nprevious stderr: %s\nmanifest %s", i, d, r.errText(), prevErr, m)
		}
		prev = r.errText()
	}
	r := arStart(t, tmp, "last", "--source", srv.DSN(), "--dir", dir, "--heartbeat", "1s")
	stPoll(t, time.Minute, r, "the archiver to connect", r.ready)
	arWaitWhole(t, r, srv, dir)
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, r.errText())
	}
	m := arReadManifest(t, dir)
	ends := map[string]int{}
	for _, f := range m.Files {
		ends[f.End]++
	}
	if ends["crash"] != 1 || ends["stop"] != 1 {
		t.Errorf("want one file ended by the server's crash and one by its shutdown, got %v", ends)
		b, _ := os.ReadFile(filepath.Join(dir, "binlogcdc-archive.json"))
		t.Logf("%s", b)
	}
}

// TestArchiveTornTail: a torn event at the end of the open file (a crash
// inside a write) is cut back on restart, with a note, and fetched again.
func TestArchiveTornTail(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	arWrite(t, srv, 0, 20, 0)
	tmp := t.TempDir()
	dir := tmp + "/arch"
	if _, stderr, code := runCLI(t, nil, "archive", "--source", srv.DSN(), "--dir", dir, "--stop-at-end"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if d := arDiffEnd(srv, dir); d != "" {
		t.Fatal(d)
	}
	arWrite(t, srv, 20, 10, 0)
	// Half of the server's next event, as a crash inside the write leaves it.
	name := arServerFiles(t, srv)[0]
	got, _ := os.ReadFile(filepath.Join(dir, name))
	srvb, _ := os.ReadFile(filepath.Join(srv.Dir, name))
	torn := srvb[len(got) : len(got)+30]
	torn = append(bytes.Clone(torn[:13]), 0xff, 0xff, 0xff, 0x7f) // and a damaged size: not the server's bytes
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(torn)
	f.Close()
	_, stderr, code := runCLI(t, nil, "archive", "--source", srv.DSN(), "--dir", dir, "--stop-at-end")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, fmt.Sprintf("cut back %d bytes of a torn event at the end of", len(torn))) {
		t.Errorf("no note of the cut:\n%s", stderr)
	}
	if d := arDiffEnd(srv, dir); d != "" {
		t.Fatal(d)
	}
}

// TestArchiveStartPoints: a new archive starts at the beginning of the
// file that --from now, --start-position and --start-gtid name.
func TestArchiveStartPoints(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	arWrite(t, srv, 0, 12, 4) // binlog.000001 … binlog.000004
	gtid := stVal(t, srv, "SELECT BINLOG_GTID_POS('binlog.000002', 4)")
	tmp := t.TempDir()
	for _, c := range []struct {
		args  []string
		first string
	}{
		{[]string{"--from", "now"}, "binlog.000004"},
		{[]string{"--start-position", "binlog.000002:400"}, "binlog.000002"},
		{[]string{"--start-gtid", gtid}, "binlog.000002"},
		{nil, "binlog.000001"},
	} {
		dir := filepath.Join(tmp, fmt.Sprint(len(c.args), c.first))
		args := append([]string{"archive", "--source", srv.DSN(), "--dir", dir, "--stop-at-end"}, c.args...)
		if _, stderr, code := runCLI(t, nil, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		if m := arReadManifest(t, dir); m.Files[0].Name != c.first {
			t.Errorf("%v: the archive starts with %s, want %s", c.args, m.Files[0].Name, c.first)
		}
		if d := arDiffEnd(srv, dir); d != "" {
			t.Errorf("%v: %s", c.args, d)
		}
	}
}

// TestArchiveConnectionCut: the server ends the archiver's dump (KILL of
// its connection, as a network cut or a proxy restart would); the
// archiver reconnects and goes on, nothing twice, nothing skipped.
func TestArchiveConnectionCut(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	arWrite(t, srv, 0, 10, 0)
	tmp := t.TempDir()
	dir := tmp + "/arch"
	r := arStart(t, tmp, "a", "--source", srv.DSN(), "--dir", dir, "--heartbeat", "1s")
	stPoll(t, time.Minute, r, "the archiver to connect", r.ready)
	next := 10
	id := "0"
	for cut := 1; cut <= 3; cut++ {
		stPoll(t, time.Minute, r, "the dump thread", func() bool {
			// Not the one killed before, which may linger a moment.
			rows := srv.QueryStrings(t, "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump' AND ID > "+id)
			if len(rows) == 1 && rows[0][0] != nil {
				id = *rows[0][0]
				return true
			}
			return false
		})
		srv.Exec(t, "KILL CONNECTION "+id)
		arWrite(t, srv, next, 15, 7)
		next += 15
		stPoll(t, time.Minute, r, "the archiver to reconnect", func() bool {
			return strings.Count(r.errText(), "binlogcdc: connected to ") > cut
		})
	}
	arWaitWhole(t, r, srv, dir)
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, r.errText())
	}
	if d := arDiffEnd(srv, dir); d != "" {
		t.Fatal(d)
	}
	if !strings.Contains(r.errText(), "reconnecting in") {
		t.Errorf("no note of the lost connection:\n%s", r.errText())
	}
}
