package e2e

// binlogcdc archive faults: a full disk, an event larger than
// max_allowed_packet.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestArchiveDiskFull: the disk fills (a test hook: writing the open
// file past 5000 bytes writes what fits, then fails with ENOSPC) in the
// middle of an event: the archiver stops with exit 1, naming the file and
// the error, with a hint; restarted with room, it cuts the torn event
// back and the archive becomes the server's binlog, byte for byte.
func TestArchiveDiskFull(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	arWrite(t, srv, 0, 30, 0)
	dir := filepath.Join(t.TempDir(), "arch")
	args := []string{"archive", "--source", srv.DSN(), "--dir", dir, "--stop-at-end"}
	_, errs, code := runCLI(t, []string{"BINLOGCDC_TEST_ARCHIVE_DISK_FULL=5000"}, args...)
	if code != 1 || !strings.Contains(errs, "cannot write "+filepath.Join(dir, "binlog.000001")) || !strings.Contains(errs, "no space left on device") ||
		!strings.Contains(errs, "hint: make room or fix the disk, then start binlogcdc archive again") {
		t.Fatalf("exit %d; stderr:\n%s", code, errs)
	}
	if fi, err := os.Stat(filepath.Join(dir, "binlog.000001")); err != nil || fi.Size() != 5000 {
		t.Fatalf("binlog.000001 after the full disk: %v %v", fi, err)
	}
	_, errs, code = runCLI(t, nil, args...)
	if code != 0 || !strings.Contains(errs, "cut back ") {
		t.Fatalf("exit %d; stderr:\n%s", code, errs)
	}
	if d := arDiffEnd(srv, dir); d != "" {
		t.Fatal(d)
	}
}

// TestArchiveLargeEvent: a 70 MiB row event, over the test servers'
// default max_allowed_packet (64 MiB) and the client library's, is
// archived byte for byte (the archiver's own dump reader takes events up
// to binlog.MaxEventSize, the most a server can write), with the peak
// RSS bounded by a few copies of the event (227 MB seen).
func TestArchiveLargeEvent(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{ExtraArgs: []string{"--max-allowed-packet=512M"}})
	srv.Exec(t, "CREATE DATABASE big", "CREATE TABLE big.t (id INT PRIMARY KEY, b LONGBLOB)",
		fmt.Sprintf("INSERT INTO big.t VALUES (1, REPEAT(UNHEX('00FF7F80E2'), %d))", bigRowBytes/5),
		"INSERT INTO big.t VALUES (2, 'after')")
	dir := filepath.Join(t.TempDir(), "arch")
	_, errs, code, peak := runPeak(t, "archive", "--source", srv.DSN(), "--dir", dir, "--stop-at-end")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errs)
	}
	if d := arDiffEnd(srv, dir); d != "" {
		t.Fatal(d)
	}
	t.Logf("peak RSS %d MB for a %d MB event", peak>>20, bigRowBytes>>20)
	if peak > 5*bigRowBytes {
		t.Errorf("peak RSS %d MB, over five copies of the event", peak>>20)
	}
}
