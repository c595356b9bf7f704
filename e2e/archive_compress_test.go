package e2e

// binlogcdc archive --compress zstd: complete files stored compressed,
// crash-safe at every step.

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// arZstFiles checks that every complete file of the archive in dir is
// stored as NAME.zst alone, decompressing to the server's file, with the
// manifest's sizes and hashes; it returns how many.
func arZstFiles(t *testing.T, srv *testserver.Server, dir string) int {
	t.Helper()
	var m struct {
		Files []struct {
			Name         string `json:"name"`
			Stored       string `json:"stored"`
			SHA256       string `json:"sha256"`
			StoredSHA256 string `json:"stored_sha256"`
			Sum          string `json:"sum"`
			StoredSum    string `json:"stored_sum"`
			Size         uint64 `json:"size"`
			StoredSize   uint64 `json:"stored_size"`
			Complete     bool   `json:"complete"`
		} `json:"files"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "binlogcdc-archive.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range m.Files {
		if !f.Complete {
			continue
		}
		n++
		if f.Stored != f.Name+".zst" {
			t.Errorf("%s is stored as %q", f.Name, f.Stored)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, f.Name)); !os.IsNotExist(err) {
			t.Errorf("the plain %s is still there (%v)", f.Name, err)
		}
		for _, tmp := range []string{f.Name + ".zst.tmp"} {
			if _, err := os.Stat(filepath.Join(dir, tmp)); !os.IsNotExist(err) {
				t.Errorf("%s is left (%v)", tmp, err)
			}
		}
		z, _ := os.ReadFile(filepath.Join(dir, f.Stored))
		if !arSumOK(z, f.StoredSHA256, f.StoredSum) || uint64(len(z)) != f.StoredSize {
			t.Errorf("%s: %d bytes, want %d, or another checksum", f.Stored, len(z), f.StoredSize)
		}
		d, err := zstd.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(d)
		d.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Stored, err)
		}
		want, _ := os.ReadFile(filepath.Join(srv.Dir, f.Name))
		if !bytes.Equal(plain, want) || !arSumOK(plain, f.SHA256, f.Sum) || uint64(len(plain)) != f.Size {
			t.Errorf("%s decompresses to %d bytes, not the server's %d or not the manifest's hash", f.Stored, len(plain), len(want))
		}
	}
	return n
}

// TestArchiveCompress archives with --compress zstd: every complete file
// is NAME.zst, the server's file once decompressed, and 'binlogcdc read
// DIR/binlog.index' reads the archive as the server's binlog. Then each
// point a kill can leave a compression at is made by hand, and a restart
// finishes it: a compressed copy written but not in the manifest (and a
// torn temporary one), the manifest naming the copy with the plain file
// still there.
func TestArchiveCompress(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	arWrite(t, srv, 0, 30, 8)
	dir := filepath.Join(t.TempDir(), "arch")
	args := []string{"--source", srv.DSN(), "--dir", dir, "--stop-at-end"}
	// --hash sha256: the manifest's sums are SHA-256, as sha256sum has them.
	arRefused(t, 0, nil, append(args, "--compress", "zstd", "--hash", "sha256")...)
	if n := arZstFiles(t, srv, dir); n < 3 {
		t.Fatalf("%d complete files", n)
	}
	for _, f := range arReadManifest(t, dir).Files {
		if f.Complete && (f.SHA256 == "" || f.Sum != "") {
			t.Errorf("%s: sha256 %q, sum %q with --hash sha256", f.Name, f.SHA256, f.Sum)
		}
	}
	want := stRead(t, srv)
	got, errs, code := runCLI(t, nil, "read", filepath.Join(dir, "binlog.index"))
	if code != 0 {
		t.Fatalf("read: exit %d: %s", code, errs)
	}
	stSameOutput(t, "read DIR/binlog.index", got, want)
	arRefused(t, 2, []string{"--compress: want zstd"}, append(args, "--compress", "lz4")...)

	// Half-done compressions, as a kill leaves them.
	plain := filepath.Join(t.TempDir(), "plain")
	arWrite(t, srv, 30, 20, 6)
	arRefused(t, 0, nil, "--source", srv.DSN(), "--dir", plain, "--stop-at-end")
	// binlog.000001: a torn temporary copy; binlog.000002: a whole copy
	// renamed, the manifest not updated yet.
	os.WriteFile(filepath.Join(plain, "binlog.000001.zst.tmp"), []byte("(\xb5/\xfdtorn"), 0o644)
	b2, _ := os.ReadFile(filepath.Join(plain, "binlog.000002"))
	os.WriteFile(filepath.Join(plain, "binlog.000002.zst"), b2[:len(b2)/2], 0o644)
	arRefused(t, 0, nil, "--source", srv.DSN(), "--dir", plain, "--stop-at-end", "--compress", "zstd")
	arZstFiles(t, srv, plain)
	// The manifest names the copy, the plain file is still there.
	b3, _ := os.ReadFile(filepath.Join(srv.Dir, "binlog.000003"))
	os.WriteFile(filepath.Join(plain, "binlog.000003"), b3, 0o644)
	errs = arRefused(t, 0, nil, "--source", srv.DSN(), "--dir", plain, "--stop-at-end")
	if !strings.Contains(errs, "binlog.000003: its compressed copy binlog.000003.zst is in the manifest; removing the plain file") {
		t.Errorf("no note of the plain file removed:\n%s", errs)
	}
	arZstFiles(t, srv, plain)
	// A damaged compressed file is found by its size or checksum.
	z1 := filepath.Join(plain, "binlog.000001.zst")
	zb, _ := os.ReadFile(z1)
	zb[len(zb)/2] ^= 1
	os.WriteFile(z1, zb, 0o644)
	arRefused(t, 1, []string{"the archive's " + z1 + " is damaged: its XXH3-64 is"}, "--source", srv.DSN(), "--dir", plain, "--stop-at-end", "--verify-all")
}
