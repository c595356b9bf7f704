package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

// TestSumsOfEitherAlgorithm: a manifest may hold files hashed with
// SHA-256 (the "sha256" field, as every manifest before --hash had it)
// and with XXH3-64 ("sum": "xxh3-64:HEX"); the check at the start
// verifies each with its own algorithm and names it when one is damaged.
func TestSumsOfEitherAlgorithm(t *testing.T) {
	tmp := t.TempDir()
	a, b := []byte("first file"), []byte("second file")
	os.WriteFile(filepath.Join(tmp, "binlog.000001"), a, 0o644)
	os.WriteFile(filepath.Join(tmp, "binlog.000002"), b, 0o644)
	sa := sha256.Sum256(a)
	e1 := &FileEntry{Name: "binlog.000001", Complete: true, SHA256: hex.EncodeToString(sa[:])}
	e2 := &FileEntry{Name: "binlog.000002", Complete: true}
	e2.setSums(fmt.Sprintf("xxh3-64:%016x", xxh3.Hash(b)), "")
	if e2.SHA256 != "" || !strings.HasPrefix(e2.Sum, "xxh3-64:") || e1.plainSum() != "sha256:"+e1.SHA256 {
		t.Fatalf("entries %+v %+v", e1, e2)
	}
	d := &dir{path: tmp, m: &Manifest{Format: 1, Files: []*FileEntry{e1, e2}}}
	if err := d.verifySums(true); err != nil {
		t.Fatal(err)
	}
	// --hash sha256 writes the "sha256" field, not "sum".
	e3 := &FileEntry{}
	e3.setSums("sha256:"+e1.SHA256, "xxh3-64:00")
	if e3.SHA256 != e1.SHA256 || e3.Sum != "" || e3.StoredSum != "xxh3-64:00" || e3.StoredSHA256 != "" {
		t.Errorf("setSums: %+v", e3)
	}
	for _, c := range []struct {
		name, want string
	}{{"binlog.000002", "its XXH3-64 is"}, {"binlog.000001", "its SHA-256 is"}} {
		os.WriteFile(filepath.Join(tmp, c.name), []byte("damaged!!!"), 0o644)
		err := d.verifySums(true)
		if err == nil || !strings.Contains(err.Error(), "is damaged: "+c.want) {
			t.Errorf("%s damaged: %v, want %q", c.name, err, c.want)
		}
		os.WriteFile(filepath.Join(tmp, "binlog.000002"), b, 0o644)
	}
	e2.setSums("md5:00", "")
	if err := d.verifySums(false); err == nil || !strings.Contains(err.Error(), `the hash algorithm "md5"`) {
		t.Errorf("unknown algorithm: %v", err)
	}
}
