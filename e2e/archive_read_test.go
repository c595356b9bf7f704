package e2e

// binlogcdc read ARCHIVE: an archive directory as input, its files picked
// from the manifest, checked, and refused when damaged or incomplete.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// arReadSetup archives (--stop-at-end) a server's binlogs holding row
// changes and DDL over several files; the last archived file is still
// open on the server.
func arReadSetup(t *testing.T) (*testserver.Server, string) {
	t.Helper()
	srv := testserver.Start(t, testserver.Options{})
	arWrite(t, srv, 0, 20, 8)
	srv.Exec(t, "ALTER TABLE db.t MODIFY v VARCHAR(300)", "CREATE TABLE db.u (id INT PRIMARY KEY)", "INSERT INTO db.u VALUES (1), (2)")
	srv.FlushLogs(t)
	arWrite(t, srv, 20, 15, 0)
	srv.Exec(t, "DROP TABLE db.u")
	arWrite(t, srv, 35, 5, 0)
	dir := filepath.Join(t.TempDir(), "arch")
	if _, stderr, code := runCLI(t, nil, "archive", "--source", srv.DSN(), "--dir", dir, "--from", "earliest", "--stop-at-end"); code != 0 {
		t.Fatalf("archive: exit %d\n%s", code, stderr)
	}
	m := arReadManifest(t, dir)
	if len(m.Files) < 3 || m.Files[len(m.Files)-1].Complete {
		t.Fatalf("want several files, the last open: %+v", m.Files)
	}
	return srv, dir
}

// TestArchiveRead reads an archive as the server's own files read, from
// its start, from a GTID (the files before it not even checked), and
// lists its DDL with where each transaction starts.
func TestArchiveRead(t *testing.T) {
	srv, dir := arReadSetup(t)
	want := stRead(t, srv)
	got, stderr, code := runCLI(t, nil, "read", dir)
	if code != 0 {
		t.Fatalf("read %s: exit %d\n%s", dir, code, stderr)
	}
	stSameOutput(t, "read ARCHIVE", got, want)
	if !strings.Contains(stderr, "the last is still being written") {
		t.Errorf("stderr does not say the last file is open:\n%s", stderr)
	}

	// --format sql and --flashback: as from the server's files.
	for _, f := range [][]string{{"--format", "sql"}, {"--flashback"}} {
		want := stRead(t, srv, f...)
		got, stderr, code := runCLI(t, nil, append([]string{"read", dir}, f...)...)
		if code != 0 {
			t.Fatalf("read ARCHIVE %v: exit %d\n%s", f, code, stderr)
		}
		stSameOutput(t, fmt.Sprintf("read ARCHIVE %v", f), got, want)
	}

	// A complete file archived compressed (binlog.000002.zst, as
	// --compress zstd writes it; the manifest keeps its plain name and
	// SHA-256): read the same.
	zdir := filepath.Join(t.TempDir(), "z")
	if out, err := exec.Command("cp", "-a", dir, zdir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	zname := filepath.Join(zdir, arReadManifest(t, dir).Files[1].Name)
	plain, _ := os.ReadFile(zname)
	enc, _ := zstd.NewWriter(nil)
	os.WriteFile(zname+".zst", enc.EncodeAll(plain, nil), 0o644)
	os.Remove(zname)
	got, stderr, code = runCLI(t, nil, "read", zdir)
	if code != 0 {
		t.Fatalf("read of an archive with a .zst file: exit %d\n%s", code, stderr)
	}
	stSameOutput(t, "read ARCHIVE with a .zst file", got, want)

	// A torn event at the end of the open file (the archiver killed
	// while writing it) is not read: the same output.
	m0 := arReadManifest(t, dir)
	f, err := os.OpenFile(filepath.Join(dir, m0.Files[len(m0.Files)-1].Name), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{1, 2, 3, 4, 5, 6, 7})
	f.Close()
	got, stderr, code = runCLI(t, nil, "read", dir)
	if code != 0 {
		t.Fatalf("read with a torn tail: exit %d\n%s", code, stderr)
	}
	stSameOutput(t, "read ARCHIVE with a torn tail", got, want)

	// --find DDL: one line per schema change, at its transaction's start.
	list, stderr, code := runCLI(t, nil, "read", dir, "--find", "DDL")
	if code != 0 {
		t.Fatalf("--find: exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(list)), "\n")
	var drop []string
	for _, l := range lines {
		if strings.Contains(l, "DROP TABLE") {
			drop = strings.Split(l, "\t")
		}
	}
	if len(lines) < 5 || !strings.Contains(string(list), "ALTER TABLE") || len(drop) != 4 || !strings.Contains(drop[3], "DROP TABLE") {
		t.Fatalf("--find DDL listed:\n%s", list)
	}
	// Reading from the listed start gives that transaction first.
	from, _, code := runCLI(t, nil, "read", dir, "--ddl", "--start-position", drop[0])
	if code != 0 || !strings.Contains(firstLine(from), `"gtid":"`+drop[1]+`"`) || !strings.Contains(firstLine(from), "DROP TABLE") {
		t.Fatalf("read --start-position %s: exit %d, first line %s", drop[0], code, firstLine(from))
	}

	// --stop-before-gtid and --stop-before stop where --stop-position at
	// the listed start does.
	upTo := stRead(t, srv, "--ddl", "--stop-position", drop[0])
	for _, stop := range [][]string{{"--stop-before-gtid", drop[1]}, {"--stop-before", "DROP TABLE db.u"}} {
		got, stderr, code := runCLI(t, nil, append([]string{"read", dir, "--ddl"}, stop...)...)
		if code != 0 || !strings.Contains(stderr, "stopping before the transaction at "+drop[0]+" (GTID "+drop[1]) {
			t.Fatalf("%v: exit %d\n%s", stop, code, stderr)
		}
		stSameOutput(t, fmt.Sprint(stop), got, upTo)
	}

	// --start-datetime after every transaction: only the last file is
	// picked (its predecessors all ended before), and nothing is printed.
	got, stderr, code = runCLI(t, nil, "read", dir, "--start-datetime", "2099-01-01 00:00:00")
	if m := arReadManifest(t, dir); code != 0 || len(got) != 0 || !strings.Contains(stderr, ": "+m.Files[len(m.Files)-1].Name+" (the last is still") {
		t.Fatalf("--start-datetime 2099: exit %d, %d bytes\n%s", code, len(got), stderr)
	}

	// --start-gtid: what follows the GTID, the same as read gives; the
	// first file (before the GTID's) damaged does not matter: it is not
	// read, nor checked.
	m := arReadManifest(t, dir)
	gtid := m.Files[1].LastGTID
	os.WriteFile(filepath.Join(dir, m.Files[0].Name), []byte("not read"), 0o644)
	got, stderr, code = runCLI(t, nil, "read", dir, "--start-gtid", gtid)
	if code != 0 {
		t.Fatalf("--start-gtid %s: exit %d\n%s", gtid, code, stderr)
	}
	_, after, ok := strings.Cut(string(want), `"gtid":"`+gtid+`"}`+"\n")
	for ok && strings.Contains(after, `"gtid":"`+gtid+`"`) { // the transaction's other rows
		_, after, ok = strings.Cut(after, `"gtid":"`+gtid+`"}`+"\n")
	}
	stSameOutput(t, "read ARCHIVE --start-gtid", got, []byte(after))
	if strings.Contains(stderr, m.Files[0].Name) {
		t.Errorf("--start-gtid %s read %s:\n%s", gtid, m.Files[0].Name, stderr)
	}
}

func firstLine(b []byte) string {
	l, _, _ := strings.Cut(string(b), "\n")
	return l
}

// TestArchiveReadRefuse: what is not a good archive, or a stop that does
// not match, is a clear error before anything is written.
func TestArchiveReadRefuse(t *testing.T) {
	_, dir := arReadSetup(t)
	m := arReadManifest(t, dir)
	tmp := t.TempDir()
	copyArchive := func(name string) string {
		d := filepath.Join(tmp, name)
		if out, err := exec.Command("cp", "-a", dir, d).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
		return d
	}
	damaged := copyArchive("damaged")
	p := filepath.Join(damaged, m.Files[1].Name)
	b, _ := os.ReadFile(p)
	b[len(b)/2] ^= 0x40
	os.WriteFile(p, b, 0o644)
	missing := copyArchive("missing")
	os.Remove(filepath.Join(missing, m.Files[1].Name))
	empty := filepath.Join(tmp, "empty")
	os.Mkdir(empty, 0o755)
	out := filepath.Join(tmp, "out.sql")

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not an archive", []string{"read", empty}, "is a directory, not a binlog file, nor an archive of binlogcdc (it has no binlogcdc-archive.json)"},
		{"damaged", []string{"read", damaged, "--format", "sql", "-o", out}, fmt.Sprintf("%s is damaged: its XXH3-64 is", m.Files[1].Name)},
		{"missing", []string{"read", missing, "--format", "sql", "-o", out}, "lacks " + m.Files[1].Name + ", which its manifest lists"},
		{"never matched", []string{"read", dir, "--format", "sql", "-o", out, "--stop-before", "DROP TABLE db.nosuch"}, "no transaction of the input (read from its start to its end or stop bound) matches: nothing was written"},
		{"gtid never matched", []string{"read", dir, "--format", "sql", "-o", out, "--stop-before-gtid", "0-1-99999"}, "--stop-before-gtid 0-1-99999: no transaction"},
		{"gtid not in archive", []string{"read", dir, "--format", "sql", "-o", out, "--start-gtid", "0-1-99999"}, "--start-gtid 0-1-99999 is not in the archive"},
		{"gtid other domain", []string{"read", dir, "--start-gtid", "7-1-5"}, "it says nothing of domain 0"},
		{"output inside", []string{"read", dir, "-o", filepath.Join(dir, "out.json")}, "is inside the archive"},
		{"recover damaged", []string{"recover", "--table", "db.u", damaged}, "is damaged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, nil, tc.args...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant %q", code, stderr, tc.want)
			}
			if len(stdout) > 0 {
				t.Errorf("wrote %d bytes to stdout", len(stdout))
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was written", out)
			}
			if _, err := os.Stat(filepath.Join(dir, "out.json")); err == nil {
				t.Errorf("wrote into the archive")
			}
		})
	}
	// recover reads an archive too: the table dropped in it.
	sql, stderr, code := runCLI(t, nil, "recover", "--table", "db.u", dir)
	if code != 0 || !strings.Contains(string(sql), "INSERT INTO") {
		t.Fatalf("recover ARCHIVE: exit %d\n%s\n%s", code, sql, stderr)
	}
	// --start-datetime before everything changes nothing; --stop-datetime
	// before everything leaves nothing to recover.
	same, stderr, code := runCLI(t, nil, "recover", "--table", "db.u", "--start-datetime", "2000-01-01 00:00:00", dir)
	if code != 0 || string(same) != string(sql) {
		t.Fatalf("recover --start-datetime 2000: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, nil, "recover", "--table", "db.u", "--stop-datetime", "2000-01-01 00:00:00", dir); code == 0 {
		t.Fatalf("recover --stop-datetime 2000: exit 0\n%s", stderr)
	}
}
