package e2e

// Input that is wrong but well-formed, and command-line mistakes (issue 12
// items 7, 9, 11): files given out of order or with a gap, an output that
// is an input, paths that are not binlogs.

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// inSeries writes three binlog files on a server (a change in each) and
// copies them into a fresh directory; it returns their paths, oldest first.
func inSeries(t *testing.T, src *testserver.Server) []string {
	t.Helper()
	src.Exec(t, "CREATE DATABASE s", "CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO s.t VALUES (1, 'one'), (2, 'two'), (3, 'three')")
	src.FlushLogs(t)
	src.Exec(t, "UPDATE s.t SET v = CONCAT(v, '+') WHERE id >= 2", "INSERT INTO s.t VALUES (4, 'four')")
	src.FlushLogs(t)
	src.Exec(t, "DELETE FROM s.t WHERE id = 2", "UPDATE s.t SET v = 'last' WHERE id = 4")
	src.FlushLogs(t)
	dir := t.TempDir()
	var files []string
	for _, f := range src.BinlogFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	return files[:len(files)-1] // the last one is empty (after the last flush)
}

// TestFilesOutOfOrder: files given out of order are read in sequence
// order, by read and by read --to; a gap in the sequence is refused before
// anything is read or applied.
func TestFilesOutOfOrder(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	files := inSeries(t, src)
	if len(files) != 3 {
		t.Fatalf("want 3 files, have %v", files)
	}
	f1, f2, f3 := files[0], files[1], files[2]
	want, _ := rpRun(t, 0, "read", f1, f2, f3)
	if n := bytes.Count(want, []byte("\n")); n != 8 {
		t.Fatalf("in order: %d lines, want 8:\n%s", n, want)
	}
	for _, order := range [][]string{{f3, f2, f1}, {f2, f1, f3}, {f1, f3, f2}} {
		got, _ := rpRun(t, 0, append([]string{"read"}, order...)...)
		if !bytes.Equal(got, want) {
			t.Errorf("read %v: output differs from reading in order:\n%s\nwant:\n%s", order, got, want)
		}
	}

	// A gap: refused, nothing printed.
	out, errText, code := runCLI(t, nil, "read", f3, f1)
	if code != 1 || len(out) != 0 || !strings.Contains(errText, "skip binlog.000002") {
		t.Errorf("read with a gap: exit %d, stdout %q, stderr %q; want exit 1, nothing on stdout, and the missing file named", code, out, errText)
	}

	// --to with the files backwards: the target ends equal to the source.
	dst := testserver.Start(t, testserver.Options{})
	rpRun(t, 0, "read", "--to", dst.DSN()+"/", f3, f1, f2)
	rpSame(t, "read --to, files backwards", rpSnapshot(t, dst), rpSnapshot(t, src))

	// --to with a gap: refused before anything is applied.
	dst2 := testserver.Start(t, testserver.Options{})
	_, errText, code = runCLI(t, nil, "read", "--to", dst2.DSN()+"/", f1, f3)
	if code != 1 || !strings.Contains(errText, "skip binlog.000002") {
		t.Errorf("read --to with a gap: exit %d, stderr %q", code, errText)
	}
	if n := dst2.QueryStrings(t, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN ('s', 'binlogcdc')"); *n[0][0] != "0" {
		t.Errorf("read --to with a gap changed the target")
	}
}

// TestOutputIsInput: -o naming an input (itself, through a symlink or a
// hard link, the next file of its series, its index) is refused before
// anything is written, and the input is left intact.
func TestOutputIsInput(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	files := inSeries(t, src)
	f1 := files[0]
	dir := filepath.Dir(f1)
	orig, err := os.ReadFile(f1)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Symlink(f1, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(t.TempDir(), "hard.jsonl")
	if err := os.Link(f1, hard); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "binlog.index")
	if err := os.WriteFile(index, []byte("./binlog.000001\n./binlog.000002\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{
		{"read", "-o", f1, f1},
		{"read", "--output=" + link, f1},
		{"read", "-o", hard, f1},
		{"read", "-o", filepath.Join(dir, "binlog.000002"), f1}, // the ROTATE at its end leads there
		{"read", "-o", filepath.Join(dir, "binlog.000002"), index},
		{"read", "-o", index, f1},
		{"read", "--format", "sql", "-o", f1, f1},
		{"read", "--flashback", "-o", f1, f1},
		{"recover", "--table", "s.t", "-o", f1, f1},
	} {
		out, errText, code := runCLI(t, nil, c...)
		if code != 2 || len(out) != 0 || !strings.Contains(errText, "is an input file") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and 'is an input file'", c, code, out, errText)
		}
		for _, f := range files {
			if b, err := os.ReadFile(f); err != nil || f == f1 && !bytes.Equal(b, orig) {
				t.Fatalf("%q: the input %s was changed (%v)", c, f, err)
			}
		}
	}
	// Another file in the same directory is fine.
	out := filepath.Join(dir, "changes.jsonl")
	rpRun(t, 0, "read", "-o", out, f1)
	if b, err := os.ReadFile(out); err != nil || bytes.Count(b, []byte("\n")) != 8 {
		t.Errorf("-o %s: %v\n%s", out, err, b)
	}
}

// TestNotABinlog: a directory, a gzip file, an empty file, a text file,
// stdin and a missing file each get their own message, and nothing is
// printed.
func TestNotABinlog(t *testing.T) {
	dir := t.TempDir()
	shop, err := os.ReadFile("../testdata/shop.binlog")
	if err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(dir, "shop.binlog.gz")
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(shop)
	w.Close()
	empty := filepath.Join(dir, "binlog.000009")
	text := filepath.Join(dir, "notes.txt")
	for p, data := range map[string][]byte{gz: b.Bytes(), empty: nil, text: []byte("hello\n")} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		arg  string
		code int
		want string
	}{
		{dir, 1, "is a directory, not a binlog file"},
		{gz, 1, "gzip-compressed"},
		{empty, 4, "empty (0 bytes)"},
		{text, 4, "does not start with the binlog magic bytes"},
		{"-", 1, "cannot read a binlog from stdin"},
		{filepath.Join(dir, "binlog.000001"), 1, "no such file"},
	} {
		out, errText, code := runCLI(t, nil, "read", c.arg)
		if code != c.code || len(out) != 0 || !strings.Contains(errText, c.want) || !strings.Contains(errText, "hint:") {
			t.Errorf("read %s: exit %d, stdout %q, stderr %q; want exit %d and %q with a hint", c.arg, code, out, errText, c.code, c.want)
		}
	}
}
