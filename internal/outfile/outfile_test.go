package outfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// entries lists dir's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestAbortKeepsTheOldContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.sql")
	os.WriteFile(p, []byte("the old recovery\n"), 0o640)
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("CREATE TABLE half")
	if got, _ := os.ReadFile(p); string(got) != "the old recovery\n" {
		t.Fatalf("while writing, the path holds %q", got)
	}
	f.Abort()
	f.Abort()
	if got, _ := os.ReadFile(p); string(got) != "the old recovery\n" {
		t.Fatalf("after Abort the path holds %q", got)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("after Abort the directory holds %v", names)
	}
}

func TestCommitReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.sql")
	os.WriteFile(p, []byte("old"), 0o640)
	os.Chmod(p, 0o640)
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new whole")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // deferred after Commit: nothing
	if got, _ := os.ReadFile(p); string(got) != "new whole" {
		t.Fatalf("after Commit the path holds %q", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("the file's permissions became %v, want 0640 as before", fi.Mode().Perm())
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("after Commit the directory holds %v", names)
	}
}

func TestNewFileGetsTheUmasksMode(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "new.sql")
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("a new file got %v, want 0640 (0666 less the umask 027, as os.Create)", fi.Mode().Perm())
	}
}

// A symbolic link keeps pointing at the file, which gets the content.
func TestSymlinkIsFollowed(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.sql")
	link := filepath.Join(dir, "link.sql")
	os.WriteFile(real, []byte("old"), 0o644)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	f, err := Create(link)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	if got, _ := os.ReadFile(real); string(got) != "new" {
		t.Fatalf("the linked file holds %q", got)
	}
}

// /dev/null is written in place, never renamed over.
func TestDeviceIsWrittenInPlace(t *testing.T) {
	f, err := Create(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if f.tmp != "" {
		t.Fatalf("a temporary file %s for %s", f.tmp, os.DevNull)
	}
	f.WriteString("x")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device: %v %v", os.DevNull, fi, err)
	}
}

func TestUnwritableDirectorySaysWhy(t *testing.T) {
	if os.Geteuid() == 0 {
		// root writes anywhere: a missing directory instead.
		_, err := Create(filepath.Join(t.TempDir(), "no", "such", "t.sql"))
		if err == nil {
			t.Fatal("no error for a missing directory")
		}
		return
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o555)
	defer os.Chmod(dir, 0o755)
	if _, err := Create(filepath.Join(dir, "t.sql")); err == nil {
		t.Fatal("no error for an unwritable directory")
	}
}
