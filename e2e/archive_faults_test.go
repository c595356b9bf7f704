package e2e

// binlogcdc archive faults: a full disk.

import (
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
