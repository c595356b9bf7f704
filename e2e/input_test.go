package e2e

// Input that is wrong but well-formed, and command-line mistakes (issue 12
// items 7, 9, 11): files given out of order or with a gap, an output that
// is an input, paths that are not binlogs.

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

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

	// The index among the files (binlog.* in a datadir): refused.
	index := filepath.Join(filepath.Dir(f1), "binlog.index")
	if err := os.WriteFile(index, []byte("./binlog.000001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errText, code := runCLI(t, nil, "read", index, f1, f2); code != 2 || len(out) != 0 || !strings.Contains(errText, "give the index alone") {
		t.Errorf("read INDEX FILES: exit %d, stderr %q", code, errText)
	}
	os.Remove(index)

	// A gap: refused, nothing printed.
	out, errText, code := runCLI(t, nil, "read", f3, f1)
	if code != 2 || len(out) != 0 || !strings.Contains(errText, "skip binlog.000002") {
		t.Errorf("read with a gap: exit %d, stdout %q, stderr %q; want exit 2, nothing on stdout, and the missing file named", code, out, errText)
	}

	// --to with the files backwards: the target ends equal to the source.
	dst := testserver.Start(t, testserver.Options{})
	rpRun(t, 0, "read", "--to", dst.DSN()+"/", f3, f1, f2)
	rpSame(t, "read --to, files backwards", rpSnapshot(t, dst), rpSnapshot(t, src))

	// --to with a gap: refused before anything is applied.
	dst2 := testserver.Start(t, testserver.Options{})
	_, errText, code = runCLI(t, nil, "read", "--to", dst2.DSN()+"/", f1, f3)
	if code != 2 || !strings.Contains(errText, "skip binlog.000002") {
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

// TestNotABinlog: a directory, an empty file, a text file, a damaged
// gzip archive and a missing file each get their own message naming the
// path as given, and nothing is printed. A path that is not a file (a
// directory, nothing there) is a mistake on the command line: exit code
// 2; a damaged archive 1; a file that is not a binlog 4.
func TestNotABinlog(t *testing.T) {
	dir := t.TempDir()
	shop, err := os.ReadFile("../testdata/shop.binlog")
	if err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(dir, "binlog.000007.gz")
	empty := filepath.Join(dir, "binlog.000009")
	emptyGz := filepath.Join(dir, "binlog.000010.gz")
	text := filepath.Join(dir, "notes.txt")
	for p, data := range map[string][]byte{gz: gzipped(t, shop)[:300], empty: nil, emptyGz: gzipped(t, nil), text: []byte("hello\n")} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		arg  string
		code int
		want string
	}{
		{dir, 2, "is a directory, not a binlog file"},
		{gz, 1, "is gzip-compressed, but cannot be decompressed"},
		{empty, 4, "empty (0 bytes)"},
		{emptyGz, 4, "empty (0 bytes)"},
		{text, 4, "does not start with the binlog magic bytes"},
		{filepath.Join(dir, "binlog.000001"), 2, "no such file"},
	} {
		out, errText, code := runCLI(t, nil, "read", c.arg)
		if code != c.code || len(out) != 0 || !strings.Contains(errText, c.want) || !strings.Contains(errText, "hint:") ||
			!strings.HasPrefix(errText, "binlogcdc: "+c.arg+":") {
			t.Errorf("read %s: exit %d, stdout %q, stderr %q; want exit %d and %q with a hint", c.arg, code, out, errText, c.code, c.want)
		}
	}
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestCompressedAndStdin: .gz and .zst binlogs, and a binlog on stdin
// (plain or compressed), read as the plain file does; positions name the
// file without its suffix (stdin: "stdin"); a series of compressed files
// is ordered and followed like plain ones; -o may not be the archive.
func TestCompressedAndStdin(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	files := inSeries(t, src)
	want, _ := rpRun(t, 0, append([]string{"read"}, files...)...)
	dir := t.TempDir()
	var gzs []string
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(f)+".gz")
		data := gzipped(t, b)
		if i == 1 {
			p = filepath.Join(dir, filepath.Base(f)+".zst")
			enc, _ := zstd.NewWriter(nil)
			data = enc.EncodeAll(b, nil)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		gzs = append(gzs, p)
	}
	got, _ := rpRun(t, 0, "read", gzs[2], gzs[0], gzs[1])
	if !bytes.Equal(got, want) {
		t.Errorf("compressed files: output differs from the plain files':\n%s\nwant:\n%s", got, want)
	}
	if _, errText, code := runCLI(t, nil, "read", "-o", gzs[0], gzs[0]); code != 2 || !strings.Contains(errText, "is an input file") {
		t.Errorf("-o naming the archive: exit %d, %s", code, errText)
	}

	// stdin: the first file alone (its ROTATE leads nowhere).
	var one []byte
	for _, l := range bytes.SplitAfter(want, []byte("\n")) {
		if bytes.Contains(l, []byte(`"file":"binlog.000001"`)) {
			one = append(one, bytes.ReplaceAll(l, []byte(`"file":"binlog.000001"`), []byte(`"file":"stdin"`))...)
		}
	}
	raw, _ := os.ReadFile(files[0])
	for what, in := range map[string][]byte{"plain": raw, "gzip": gzipped(t, raw)} {
		cmd := exec.Command(cliBinary(t), "read", "-")
		cmd.Stdin = bytes.NewReader(in)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || !bytes.Equal(out.Bytes(), one) {
			t.Errorf("read - (%s): %v: %s\n%s\nwant:\n%s", what, err, errb.String(), out.Bytes(), one)
		}
	}
	if _, errText, code := runCLI(t, nil, "read", "-", files[0]); code != 2 || !strings.Contains(errText, "must be the only file") {
		t.Errorf("read - FILE: exit %d, %s", code, errText)
	}
	// No copy is left behind in TMPDIR.
	tmp := t.TempDir()
	rpRunEnv(t, []string{"TMPDIR=" + tmp}, "read", gzs[0])
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the decompressed copies were left in TMPDIR: %v", left)
	}
}

func rpRunEnv(t *testing.T, env []string, args ...string) {
	t.Helper()
	if _, errText, code := runCLI(t, env, args...); code != 0 {
		t.Fatalf("binlogcdc %q: exit %d: %s", args, code, errText)
	}
}
