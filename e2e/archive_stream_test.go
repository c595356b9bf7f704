package e2e

// Reading an archive's compressed files as they decompress.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestArchiveReadCompressedStreaming: a complete file of tens of MB
// archived with --compress zstd is read by 'read DIR' as it
// decompresses, never copied: with TMPDIR naming a directory that does
// not exist (no temporary copy could be made), the output is the
// server's files', and the peak RSS (VmHWM) stays within about the zstd
// decoder's window of reading the plain files; so does a read from a
// --start-position inside the file to a --stop-position.
func TestArchiveReadCompressedStreaming(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE db", "CREATE TABLE db.t (id INT PRIMARY KEY, b LONGBLOB)")
	for i := 0; i < 64; i++ { // 64 KiB a row, 1 MiB a transaction: a binlog of 64 MiB
		q := "INSERT INTO db.t VALUES "
		for j := 0; j < 16; j++ {
			q += fmt.Sprintf("%s(%d, REPEAT(MD5(%d), 2048))", map[bool]string{true: ", "}[j > 0], 16*i+j, 16*i+j)
		}
		srv.Exec(t, q)
	}
	srv.FlushLogs(t)
	srv.Exec(t, "INSERT INTO db.t VALUES (100000, 'after')")
	dir := filepath.Join(t.TempDir(), "arch")
	if _, stderr, code := runCLI(t, nil, "archive", "--source", srv.DSN(), "--dir", dir, "--stop-at-end", "--compress", "zstd"); code != 0 {
		t.Fatalf("archive: exit %d\n%s", code, stderr)
	}
	if n := arZstFiles(t, srv, dir); n == 0 {
		t.Fatal("no file was compressed")
	}
	big := int64(0)
	for _, f := range srv.BinlogFiles(t) {
		if fi, err := os.Stat(f); err == nil && fi.Size() > big {
			big = fi.Size()
		}
	}
	if big < 32<<20 {
		t.Fatalf("the largest binlog has %d bytes", big)
	}
	want := stRead(t, srv)
	got, errs, code, peak := runPeakEnv(t, []string{"TMPDIR=" + filepath.Join(t.TempDir(), "does-not-exist")}, "read", dir)
	if code != 0 {
		t.Fatalf("read DIR: exit %d\n%s", code, errs)
	}
	_, _, _, plain := runPeak(t, "read", srv.BinlogIndex())
	t.Logf("read DIR: a %d MiB binlog stored zstd-compressed, %d MiB of JSON, peak RSS %d MiB (the server's plain files: %d MiB)", big>>20, len(got)>>20, peak>>20, plain>>20)
	stSameOutput(t, "read DIR (compressed files)", got, want)
	if peak > plain+32<<20 {
		t.Errorf("peak RSS %d MiB for a %d MiB file (%d MiB for the plain files): it was held in memory", peak>>20, big>>20, plain>>20)
	}
	// Start and stop inside the compressed file, at the 11th and 21st
	// transaction ('--find' lists where each starts): transactions 10 to
	// 19, 16 lines each.
	env := []string{"TMPDIR=/nonexistent-binlogcdc"}
	found, errs, code := runCLI(t, env, "read", dir, "--find", "INSERT db.t")
	txs := strings.Split(strings.TrimSpace(string(found)), "\n")
	if code != 0 || len(txs) < 21 {
		t.Fatalf("--find: exit %d, %d lines\n%s", code, len(txs), errs)
	}
	at := func(i int) string { return strings.Fields(txs[i])[0] }
	got, errs, code = runCLI(t, env, "read", dir, "--start-position", at(10), "--stop-position", at(20))
	lines := strings.SplitAfter(string(want), "\n")
	if code != 0 {
		t.Fatalf("read %s … %s: exit %d\n%s", at(10), at(20), code, errs)
	}
	stSameOutput(t, "read DIR --start-position --stop-position in a compressed file", got, []byte(strings.Join(lines[160:320], "")))
}
