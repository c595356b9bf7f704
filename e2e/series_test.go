package e2e

// Series of binlogs in a directory, plain and compressed (issue 27 items
// 1 and 2): a ROTATE is followed into the next file whatever its form
// (binlog.000003, .gz, .zst), never left in silence when it cannot be,
// and no output may land on a file of the input's series in any form.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// seriesLog is a MariaDB's binlog series, as it left them when stopped.
type seriesLog struct {
	stem  string
	names []string // stem.000001, …, oldest first
	data  [][]byte
	want  [][]byte // read's lines of each file (ts aside), from the plain files
}

// writeSeries runs a MariaDB whose binlogs are named stem.NNNNNN with
// one insert in each of n files, stops it (its last file ends with a
// STOP event, every other with a ROTATE), and reads the plain files.
func writeSeries(t *testing.T, stem string, n int) *seriesLog {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{ExtraArgs: []string{"--log-bin=" + stem, "--log-bin-index=" + stem + ".index"}})
	srv.Exec(t, "CREATE DATABASE s", "CREATE TABLE s.t (id INT PRIMARY KEY, v VARCHAR(20))")
	for i := 1; i <= n; i++ {
		srv.Exec(t, fmt.Sprintf("INSERT INTO s.t VALUES (%d, '%s-%d')", i, stem, i))
		if i < n {
			srv.FlushLogs(t)
		}
	}
	files := srv.BinlogFiles(t)
	srv.Stop(t)
	if len(files) != n {
		t.Fatalf("%s: %d binlog files, want %d", stem, len(files), n)
	}
	s := &seriesLog{stem: stem}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s.names, s.data = append(s.names, filepath.Base(f)), append(s.data, b)
	}
	// What the plain files give, file by file.
	dir := t.TempDir()
	s.place(t, dir, nil)
	out, _ := rpRun(t, 0, "read", filepath.Join(dir, s.names[0]))
	s.want = make([][]byte, n)
	for _, l := range bytes.SplitAfter(out, []byte("\n")) {
		for i, name := range s.names {
			if bytes.Contains(l, []byte(`"file":"`+name+`"`)) {
				s.want[i] = append(s.want[i], l...)
			}
		}
	}
	for i := range s.want {
		if bytes.Count(s.want[i], []byte("\n")) != 1 {
			t.Fatalf("%s: the plain read gave %q for %s, want its one insert", stem, s.want[i], s.names[i])
		}
	}
	return s
}

// place writes the series into dir, file i in the form forms[i] ("",
// ".gz" or ".zst"; nil: all plain; "-": left out), and returns the paths.
func (s *seriesLog) place(t *testing.T, dir string, forms []string) []string {
	t.Helper()
	paths := make([]string, len(s.names))
	for i, name := range s.names {
		form := ""
		if forms != nil {
			form = forms[i]
		}
		if form == "-" {
			continue
		}
		data := s.data[i]
		switch form {
		case ".gz":
			data = gzipped(t, data)
		case ".zst":
			enc, _ := zstd.NewWriter(nil)
			data = enc.EncodeAll(data, nil)
		}
		paths[i] = filepath.Join(dir, name+form)
		if err := os.WriteFile(paths[i], data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// from is the lines of files i to j (inclusive).
func (s *seriesLog) from(i, j int) []byte {
	return bytes.Join(s.want[i:j+1], nil)
}

// twoSeries is two servers' series, for several series in one directory.
func twoSeries(t *testing.T) (a, b *seriesLog) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a = writeSeries(t, "mysql-bin", 6) }()
	go func() { defer wg.Done(); b = writeSeries(t, "binlog", 3) }()
	wg.Wait()
	if a == nil || b == nil {
		t.FailNow()
	}
	return a, b
}

// TestCompressedSeriesFollowsRotate: reading a file of a series follows
// the ROTATE at its end into the next file beside it, whether the files
// are gzip, zstd, plain or a mix, with another server's series in the
// same directory, and says nothing is missing.
func TestCompressedSeriesFollowsRotate(t *testing.T) {
	t.Parallel()
	a, b := twoSeries(t)
	for name, forms := range map[string][]string{
		"gzip":   {".gz", ".gz", ".gz", ".gz", ".gz", ".gz"},
		"zstd":   {".zst", ".zst", ".zst", ".zst", ".zst", ".zst"},
		"mixed":  {"", ".gz", "", ".zst", ".gz", ""},
		"mixed2": {".gz", ".zst", ".zst", "", ".gz", ".zst"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			pa := a.place(t, dir, forms)
			pb := b.place(t, dir, []string{".gz", ".zst", ""})
			for _, c := range []struct {
				arg  string
				want []byte
			}{
				{pa[1], a.from(1, 5)}, // the issue's: read gz/mysql-bin.000002.gz
				{pa[0], a.from(0, 5)},
				{pa[4], a.from(4, 5)},
				{pb[0], b.from(0, 2)},
			} {
				out, errText, code := runCLI(t, nil, "read", c.arg)
				if code != 0 || !bytes.Equal(out, c.want) || errText != "" {
					t.Errorf("read %s: exit %d, stderr %q; got\n%s\nwant\n%s", c.arg, code, errText, out, c.want)
				}
			}
			// Given with the file after it: the same, read once.
			if out, errText, code := runCLI(t, nil, "read", pa[3], pa[2]); code != 0 || !bytes.Equal(out, a.from(2, 5)) {
				t.Errorf("read %s %s: exit %d, %s\n%s", pa[3], pa[2], code, errText, out)
			}
			// recover reads the same series (more than once).
			if out, errText, code := runCLI(t, nil, "recover", "--table", "s.t", "--incarnation", "1", pa[0]); code != 0 || !bytes.Contains(out, []byte("'mysql-bin-1'")) || !bytes.Contains(out, []byte("'mysql-bin-6'")) {
				t.Errorf("recover --table s.t %s: exit %d, %s\n%s", pa[0], code, errText, out)
			}
		})
	}
}

// TestCompressedSeriesCannotFollow: a ROTATE whose file is not there is
// never passed over in silence. A gap in the series (a later file is
// there) stops the run with exit code 4 after the files before the gap;
// a series that ends there (a file copied alone, stdin) ends with a
// warning naming the file; a next file there in two forms is refused.
func TestCompressedSeriesCannotFollow(t *testing.T) {
	t.Parallel()
	a := writeSeries(t, "mysql-bin", 6)
	for _, form := range []string{".gz", ".zst"} {
		t.Run(form, func(t *testing.T) {
			// A gap: mysql-bin.000004 is missing, .000005 is there.
			dir := t.TempDir()
			p := a.place(t, dir, []string{form, form, form, "-", form, form})
			out, errText, code := runCLI(t, nil, "read", p[1])
			if code != 4 || !bytes.Equal(out, a.from(1, 2)) || !strings.Contains(errText, "ROTATE to mysql-bin.000004") ||
				!strings.Contains(errText, "mysql-bin.000005"+form) || !strings.Contains(errText, "missing") {
				t.Errorf("read %s with mysql-bin.000004 missing: exit %d, stderr %q; got\n%s\nwant exit 4 after\n%s", p[1], code, errText, out, a.from(1, 2))
			}
			// The files given with the gap: refused before reading (usage).
			if out, errText, code := runCLI(t, nil, "read", p[2], p[4]); code != 2 || len(out) != 0 || !strings.Contains(errText, "skip mysql-bin.000004") {
				t.Errorf("read %s %s: exit %d, stderr %q, stdout %q", p[2], p[4], code, errText, out)
			}

			// The end of what is there: a warning, exit 0.
			dir = t.TempDir()
			p = a.place(t, dir, []string{"", form, form, "-", "-", "-"})
			out, errText, code = runCLI(t, nil, "read", p[1])
			if code != 0 || !bytes.Equal(out, a.from(1, 2)) || !strings.Contains(errText, "warning: "+p[2]+" ends with a ROTATE to mysql-bin.000004, which is not in "+dir) {
				t.Errorf("read %s, the series ending at mysql-bin.000003: exit %d, stderr %q; got\n%s", p[1], code, errText, out)
			}

			// Two forms of the next file: which one? Refused.
			os.WriteFile(filepath.Join(dir, "mysql-bin.000003"), a.data[2], 0o644)
			out, errText, code = runCLI(t, nil, "read", p[1])
			if code != 1 || !bytes.Equal(out, a.from(1, 1)) || !strings.Contains(errText, "cannot tell which to read") {
				t.Errorf("read %s, mysql-bin.000003 there twice: exit %d, stderr %q; got\n%s", p[1], code, errText, out)
			}
			// Given by name, the form given is read.
			if out, errText, code := runCLI(t, nil, "read", p[1], p[2]); code != 0 || !bytes.Equal(out, a.from(1, 2)) {
				t.Errorf("read %s %s: exit %d, stderr %q", p[1], p[2], code, errText)
			}
		})
	}
}

// TestOutputInCompressedSeries: an output (-o, --cpuprofile, --memprofile
// of read and recover) that is a file of the input's series in its
// directory, in any form or with any suffix, or its index, is refused
// with exit code 2 before anything is written; the files are intact.
func TestOutputInCompressedSeries(t *testing.T) {
	t.Parallel()
	a, b := twoSeries(t)
	dir := t.TempDir()
	pa := a.place(t, dir, []string{".gz", ".gz", ".zst", "", ".zst", ".gz"})
	b.place(t, dir, []string{".gz", ".gz", ".gz"})
	index := filepath.Join(dir, "mysql-bin.index")
	if err := os.WriteFile(index, []byte("./mysql-bin.000001\n./mysql-bin.000002\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		before[e.Name()], _ = os.ReadFile(filepath.Join(dir, e.Name()))
	}
	outputs := []string{
		pa[2], // the issue's: -o gz/mysql-bin.000003.gz (here .zst)
		filepath.Join(dir, "mysql-bin.000003.gz"), // not there in that form
		filepath.Join(dir, "mysql-bin.000003"),
		pa[3], // plain, beside compressed ones
		filepath.Join(dir, "mysql-bin.000009.zst"),
		filepath.Join(dir, "mysql-bin.000002.jsonl"),
		pa[1], // the input itself
		index,
	}
	for _, in := range []string{pa[1], pa[3], index} {
		for _, out := range outputs {
			for _, c := range [][]string{
				{"read", "-o", out, in},
				{"read", "--cpuprofile", out, in},
				{"read", "--memprofile=" + out, in},
				{"recover", "--table", "s.t", "-o", out, in},
				{"recover", "--table", "s.t", "--cpuprofile", out, in},
			} {
				stdout, errText, code := runCLI(t, nil, c...)
				if code != 2 || len(stdout) != 0 || !strings.Contains(errText, "is an input file") {
					t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and 'is an input file'", c, code, stdout, errText)
				}
			}
		}
	}
	ents, _ = os.ReadDir(dir)
	if len(ents) != len(before) {
		t.Errorf("%d files in the directory after, %d before", len(ents), len(before))
	}
	for name, data := range before {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s was changed (%v)", name, err)
		}
	}
	// Another series' name, or another name, is fine.
	for _, out := range []string{filepath.Join(dir, "changes.jsonl"), filepath.Join(dir, "mysql-bin.jsonl")} {
		if stdout, errText, code := runCLI(t, nil, "read", "-o", out, pa[4]); code != 0 || len(stdout) != 0 {
			t.Errorf("read -o %s: exit %d, %s", out, code, errText)
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, a.from(4, 5)) {
			t.Errorf("read -o %s wrote\n%s\nwant\n%s", out, got, a.from(4, 5))
		}
	}
}
