package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// cli runs 'binlogcdc args...' in-process.
func cli(args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return out.String(), errb.String(), code
}

// outLine is the part of a JSON line these tests look at.
type outLine struct {
	raw   string
	Op    string `json:"op"`
	DB    string `json:"db"`
	Table string `json:"table"`
	TS    string `json:"ts"`
	GTID  string `json:"gtid"`
	Pos   struct {
		File   string `json:"file"`
		Offset uint64 `json:"offset"`
	} `json:"pos"`
}

func parseOut(t testing.TB, out string) []outLine {
	t.Helper()
	if out == "" {
		return nil
	}
	if !strings.HasSuffix(out, "\n") {
		t.Fatalf("output does not end with a newline: ...%q", out[max(0, len(out)-100):])
	}
	var ls []outLine
	for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var o outLine
		dec := json.NewDecoder(strings.NewReader(l))
		dec.UseNumber()
		if err := dec.Decode(&o); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i+1, err, l)
		}
		o.raw = l
		ls = append(ls, o)
	}
	return ls
}

// join turns lines back into output text.
func join(ls []outLine) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.raw)
		b.WriteByte('\n')
	}
	return b.String()
}

func filterLines(ls []outLine, keep func(outLine) bool) string {
	var out []outLine
	for _, l := range ls {
		if keep(l) {
			out = append(out, l)
		}
	}
	return join(out)
}

// gtidOrder lists the GTIDs of lines in order of appearance.
func gtidOrder(ls []outLine) []string {
	var g []string
	for _, l := range ls {
		if len(g) == 0 || g[len(g)-1] != l.GTID {
			g = append(g, l.GTID)
		}
	}
	return g
}

func sameOutput(t testing.TB, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s: output differs\n got (%d lines):\n%s\nwant (%d lines):\n%s", what,
			strings.Count(got, "\n"), got, strings.Count(want, "\n"), want)
	}
}

// binlogEvent is one row of SHOW BINLOG EVENTS.
type binlogEvent struct {
	file      string
	pos, end  uint64
	typ, info string
}

func showEvents(t testing.TB, srv *testserver.Server, file string) []binlogEvent {
	t.Helper()
	var evs []binlogEvent
	for _, r := range srv.QueryStrings(t, fmt.Sprintf("SHOW BINLOG EVENTS IN '%s'", file)) {
		pos, _ := strconv.ParseUint(*r[1], 10, 64)
		end, _ := strconv.ParseUint(*r[4], 10, 64)
		evs = append(evs, binlogEvent{file: *r[0], pos: pos, end: end, typ: *r[2], info: *r[5]})
	}
	return evs
}

func TestReadUsage(t *testing.T) {
	dir := t.TempDir()
	notBinlog := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notBinlog, []byte("hello, not a binlog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "binlog.000001")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "binlog.index")
	if err := os.WriteFile(index, []byte("./binlog.000001\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shop := "../../testdata/shop.binlog"
	copied := filepath.Join(dir, "copy.binlog")
	if b, err := os.ReadFile(shop); err != nil || os.WriteFile(copied, b, 0o644) != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		code   int
		stderr string // substring
		stdout string // substring
	}{
		{nil, exitUsage, "Usage:", ""},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`, ""},
		{[]string{"read"}, exitUsage, "no binlog files given", ""},
		{[]string{"read", "--no-such-flag", shop}, exitUsage, "unknown flag", ""},
		{[]string{"read", "--start-position", "binlog.000001", shop}, exitUsage, "--start-position", ""},
		{[]string{"read", "--start-position", "binlog.000001:x", shop}, exitUsage, "offset is not a number", ""},
		{[]string{"read", "--stop-position", ":4", shop}, exitUsage, "--stop-position", ""},
		{[]string{"read", "--start-datetime", "yesterday", shop}, exitUsage, "--start-datetime", ""},
		{[]string{"read", "--stop-datetime", "2024-13-45", shop}, exitUsage, "--stop-datetime", ""},
		{[]string{"read", "--tables", "nodot", shop}, exitUsage, "want db.table", ""},
		{[]string{"read", "--exclude-tables", "db.[", shop}, exitUsage, "db.[", ""},
		{[]string{"read", "--help"}, exitOK, "--start-position", ""},
		{[]string{"version"}, exitOK, "", "binlogcdc "},
		// Which files were named is part of the command line: exit 2.
		{[]string{"read", filepath.Join(dir, "missing.000001")}, exitUsage, filepath.Join(dir, "missing.000001") + ": no such file", ""},
		{[]string{"read", dir}, exitUsage, dir + ": is a directory", ""},
		{[]string{"read", "-", shop}, exitUsage, "must be the only file", ""},
		{[]string{"read", index, empty}, exitUsage, "given with other files", ""},
		{[]string{"read", shop, copied}, exitUsage, "has no sequence number", ""},
		{[]string{"read", "--start-position", "other.000009:4", shop}, exitUsage, "not among the files given", ""},
		// A file message names the path as given.
		{[]string{"read", notBinlog}, exitCorrupt, notBinlog + ":0: not a binlog file", ""},
		{[]string{"read", empty}, exitCorrupt, empty + ":0: not a binlog file: it is empty", ""},
		{[]string{"read", "--start-position", "shop.binlog:999999", shop}, exitCorrupt, "past the end of the file", ""},
		{[]string{"read", "-o", filepath.Join(dir, "no-such-dir", "out.jsonl"), shop}, exitError, "no-such-dir", ""},
		{[]string{"read", shop}, exitOK, "", `"op":"insert"`},
	} {
		stdout, stderr, code := cli(c.args...)
		if code != c.code || !strings.Contains(stderr, c.stderr) || !strings.Contains(stdout, c.stdout) {
			t.Errorf("binlogcdc %q: exit %d, want %d; stderr %q (want %q); stdout %.200q (want %q)",
				c.args, code, c.code, stderr, c.stderr, stdout, c.stdout)
		}
		if c.code != exitOK && stdout != "" && c.args != nil && c.args[0] == "read" {
			t.Errorf("binlogcdc %q failed but wrote to stdout: %q", c.args, stdout)
		}
	}
}

// TestReadMissingMetadata: servers with binlog_row_metadata MINIMAL and
// NO_LOG. A transaction logged while the setting was FULL decodes; the
// first TABLE_MAP of a selected table without column names stops the run
// with exit 3 and a message naming the table, the file and offset, the
// server version and the fix. Only transactions that committed before it
// are printed, not the FULL part of the transaction it is in. Tables
// excluded by --tables/--exclude-tables never raise the error.
func TestReadMissingMetadata(t *testing.T) {
	t.Parallel()
	for _, level := range []string{"MINIMAL", "NO_LOG"} {
		t.Run(level, func(t *testing.T) {
			t.Parallel()
			srv := testserver.Start(t, testserver.Options{RowMetadata: level})
			srv.Exec(t, "CREATE DATABASE m", "USE m",
				"CREATE TABLE good (id INT PRIMARY KEY, v INT)",
				"CREATE TABLE bad (id INT PRIMARY KEY, v INT)",
				// binlog_row_metadata is global and read when a TABLE_MAP
				// is written.
				"SET GLOBAL binlog_row_metadata = FULL",
				"INSERT INTO good VALUES (1, 1)",
				"BEGIN",
				"INSERT INTO good VALUES (2, 2)",
				"SET GLOBAL binlog_row_metadata = "+level,
				"INSERT INTO bad VALUES (1, 1)",
				"COMMIT",
				"SET GLOBAL binlog_row_metadata = FULL",
				"INSERT INTO good VALUES (3, 3)",
				"INSERT INTO bad VALUES (2, 2)",
			)
			file := filepath.Base(srv.BinlogFiles(t)[0])
			// The oracle: where the server says the bad TABLE_MAP is.
			var badAt uint64
			for _, ev := range showEvents(t, srv, file) {
				if ev.typ == "Table_map" && strings.Contains(ev.info, "(m.bad)") {
					badAt = ev.pos
					break
				}
			}
			if badAt == 0 {
				t.Fatal("no Table_map for m.bad in SHOW BINLOG EVENTS")
			}
			version := strings.TrimSuffix(srv.Version(), "-log")

			stdout, stderr, code := cli("read", srv.BinlogIndex())
			if code != exitMetadata {
				t.Fatalf("exit %d, want %d; stderr: %s", code, exitMetadata, stderr)
			}
			for _, want := range []string{"m.bad", fmt.Sprintf("%s:%d", file, badAt), version, "SET GLOBAL binlog_row_metadata = FULL"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			got := parseOut(t, stdout)
			if len(got) != 1 || got[0].Table != "good" || !strings.Contains(got[0].raw, `"after":{"id":1,"v":1}`) {
				t.Errorf("stdout must hold only the first transaction (good id 1), got:\n%s", stdout)
			}

			// Excluding the table: exit 0, every good row.
			for _, args := range [][]string{
				{"read", "--exclude-tables", "m.bad", srv.BinlogIndex()},
				{"read", "--tables", "m.good", srv.BinlogIndex()},
				{"read", "--tables", "m.*", "--exclude-tables", "*.bad", srv.BinlogIndex()},
			} {
				stdout, stderr, code := cli(args...)
				if code != exitOK {
					t.Errorf("%q: exit %d: %s", args, code, stderr)
					continue
				}
				ls := parseOut(t, stdout)
				var ids []string
				for _, l := range ls {
					if l.Table != "good" {
						t.Errorf("%q: line for %s", args, l.Table)
					}
					ids = append(ids, l.raw[strings.Index(l.raw, `"id":`)+5:][:1])
				}
				if strings.Join(ids, ",") != "1,2,3" {
					t.Errorf("%q: good ids %v, want 1,2,3:\n%s", args, ids, stdout)
				}
			}
			// A filter that still selects the table fails the same way.
			if _, _, code := cli("read", "--tables", "m.*", srv.BinlogIndex()); code != exitMetadata {
				t.Errorf("--tables m.*: exit %d, want %d", code, exitMetadata)
			}
		})
	}
}

// multiFileServer writes five transactions over three binlog files, each
// at its own fixed time (SET TIMESTAMP):
//
//	binlog.000001: DDL (09:00), tx1 a+1 (10:00)
//	binlog.000002: tx2 b+1 (11:00), tx3 a+2 b+2 (12:00)
//	binlog.000003: tx4 a~1 (13:00), tx5 b-1 (14:00)
func multiFileServer(t *testing.T) *testserver.Server {
	srv := testserver.Start(t, testserver.Options{})
	at := func(hm string) string { return "SET TIMESTAMP = UNIX_TIMESTAMP('2024-06-15 " + hm + ":00')" }
	srv.Exec(t, at("09:00"), "CREATE DATABASE mf", "USE mf",
		"CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(10))",
		"CREATE TABLE b (id INT PRIMARY KEY, v VARCHAR(10))",
		at("10:00"), "INSERT INTO a VALUES (1, 'a1')")
	srv.FlushLogs(t)
	srv.Exec(t, at("11:00"), "INSERT INTO b VALUES (1, 'b1')",
		at("12:00"), "BEGIN", "INSERT INTO a VALUES (2, 'a2')", "INSERT INTO b VALUES (2, 'b2')", "COMMIT")
	srv.FlushLogs(t)
	srv.Exec(t, at("13:00"), "UPDATE a SET v = 'a1x' WHERE id = 1",
		at("14:00"), "DELETE FROM b WHERE id = 1", "SET TIMESTAMP = DEFAULT")
	waitCheckpoint(t, srv)
	return srv
}

// waitCheckpoint waits until MariaDB has written, in its current binlog,
// the Binlog_checkpoint event naming that file: its binlog background
// thread appends it some time after a rotation (up to a second), after
// the transactions that follow. Until then the file grows under a reader;
// after it, with no more statements, it stays as it is.
func waitCheckpoint(t testing.TB, srv *testserver.Server) {
	t.Helper()
	files := srv.BinlogFiles(t)
	last := filepath.Base(files[len(files)-1])
	deadline := time.Now().Add(2 * time.Minute) // a guard against a hang, not a timing assertion
	for {
		evs := showEvents(t, srv, last)
		for _, ev := range evs {
			if ev.typ == "Binlog_checkpoint" && ev.info == last {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Binlog_checkpoint for %s in it after 2 minutes: %+v", last, evs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReadMultiFile: following ROTATEs across files, the .index file, and
// the selection flags, on three binlog files of one server.
func TestReadMultiFile(t *testing.T) {
	t.Parallel()
	srv := multiFileServer(t)
	files := srv.BinlogFiles(t)
	if len(files) != 3 {
		t.Fatalf("%d binlog files, want 3", len(files))
	}
	stdout, stderr, code := cli("read", srv.BinlogIndex())
	if code != exitOK {
		t.Fatalf("read index: exit %d: %s", code, stderr)
	}
	ref := parseOut(t, stdout)
	g := gtidOrder(ref)
	if len(g) != 5 || len(ref) != 6 {
		t.Fatalf("%d lines in %d transactions, want 6 in 5:\n%s", len(ref), len(g), stdout)
	}
	// Each transaction at its time, in its file.
	for i, want := range []struct{ ts, file string }{
		{"10:00", "binlog.000001"}, {"11:00", "binlog.000002"}, {"12:00", "binlog.000002"}, {"13:00", "binlog.000003"}, {"14:00", "binlog.000003"},
	} {
		for _, l := range ref {
			if l.GTID == g[i] && (l.TS != "2024-06-15T"+want.ts+":00Z" || l.Pos.File != want.file) {
				t.Errorf("tx%d: ts %s in %s, want %s in %s", i+1, l.TS, l.Pos.File, want.ts, want.file)
			}
		}
	}
	txs := func(idx ...int) string {
		return filterLines(ref, func(l outLine) bool {
			for _, i := range idx {
				if l.GTID == g[i-1] {
					return true
				}
			}
			return false
		})
	}
	all := join(ref)
	// The GTID event offsets of tx3 and tx5, from the server.
	gtidAt := func(file string, n int) uint64 {
		k := 0
		for _, ev := range showEvents(t, srv, file) {
			if ev.typ == "Gtid" && strings.HasPrefix(ev.info, "BEGIN") {
				k++
				if k == n {
					return ev.pos
				}
			}
		}
		t.Fatalf("no transaction %d in %s", n, file)
		return 0
	}
	tx3 := gtidAt("binlog.000002", 2)
	tx5 := gtidAt("binlog.000003", 2)
	var tx3Map uint64
	for _, ev := range showEvents(t, srv, "binlog.000002") {
		if ev.pos > tx3 && ev.typ == "Table_map" {
			tx3Map = ev.pos
			break
		}
	}

	onlyFirst := t.TempDir()
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(onlyFirst, "binlog.000001"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(t.TempDir(), "out.jsonl")

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"first file follows ROTATEs", []string{files[0]}, all},
		{"all files", files, all},
		{"files given twice", []string{files[0], files[1], files[1], files[2]}, all},
		{"second file follows on", []string{files[1]}, txs(2, 3, 4, 5)},
		{"last file", []string{files[2]}, txs(4, 5)},
		{"first file alone in its dir", []string{filepath.Join(onlyFirst, "binlog.000001")}, txs(1)},
		{"start-position", []string{"--start-position", fmt.Sprintf("binlog.000002:%d", tx3), srv.BinlogIndex()}, txs(3, 4, 5)},
		{"start-position with the file only", []string{"--start-position", fmt.Sprintf("%s:%d", files[1], tx3), files[1]}, txs(3, 4, 5)},
		{"start-position at the end of a closed file", []string{"--start-position", fmt.Sprintf("binlog.000001:%d", len(data)), srv.BinlogIndex()}, txs(2, 3, 4, 5)},
		{"start-position at 4", []string{"--start-position", "binlog.000003:4", srv.BinlogIndex()}, txs(4, 5)},
		{"stop-position", []string{"--stop-position", fmt.Sprintf("binlog.000003:%d", tx5), srv.BinlogIndex()}, txs(1, 2, 3, 4)},
		{"stop-position inside tx3", []string{"--stop-position", fmt.Sprintf("binlog.000002:%d", tx3Map), srv.BinlogIndex()}, txs(1, 2, 3)},
		{"stop-position at tx3", []string{"--stop-position", fmt.Sprintf("binlog.000002:%d", tx3), srv.BinlogIndex()}, txs(1, 2)},
		{"start and stop position", []string{"--start-position", fmt.Sprintf("binlog.000002:%d", tx3), "--stop-position", fmt.Sprintf("binlog.000003:%d", tx5), srv.BinlogIndex()}, txs(3, 4)},
		{"start-datetime", []string{"--start-datetime", "2024-06-15 11:00:00", srv.BinlogIndex()}, txs(2, 3, 4, 5)},
		{"start-datetime RFC 3339", []string{"--start-datetime", "2024-06-15T11:00:01Z", srv.BinlogIndex()}, txs(3, 4, 5)},
		{"start-datetime in another zone", []string{"--start-datetime", "2024-06-15T14:00:00+02:00", srv.BinlogIndex()}, txs(3, 4, 5)},
		{"stop-datetime", []string{"--stop-datetime", "2024-06-15 13:00:00", srv.BinlogIndex()}, txs(1, 2, 3)},
		{"start and stop datetime", []string{"--start-datetime", "2024-06-15 10:30:00", "--stop-datetime", "2024-06-15 12:59:59", srv.BinlogIndex()}, txs(2, 3)},
		{"stop-datetime before everything", []string{"--stop-datetime", "2024-06-15 08:00:00", srv.BinlogIndex()}, ""},
		{"tables", []string{"--tables", "mf.a", srv.BinlogIndex()}, filterLines(ref, func(l outLine) bool { return l.Table == "a" })},
		{"tables glob", []string{"--tables", "mf.*", srv.BinlogIndex()}, all},
		{"tables repeated", []string{"--tables", "mf.a", "--tables", "mf.b", srv.BinlogIndex()}, all},
		{"exclude wins", []string{"--tables", "mf.*", "--exclude-tables", "mf.b", srv.BinlogIndex()}, filterLines(ref, func(l outLine) bool { return l.Table == "a" })},
		{"exclude glob", []string{"--exclude-tables", "*.a", srv.BinlogIndex()}, filterLines(ref, func(l outLine) bool { return l.Table == "b" })},
		{"tables matching nothing", []string{"--tables", "other.*", srv.BinlogIndex()}, ""},
		{"output file", []string{"--output", outFile, srv.BinlogIndex()}, ""},
	} {
		stdout, stderr, code := cli(append([]string{"read"}, c.args...)...)
		if code != exitOK {
			t.Errorf("%s: exit %d: %s", c.name, code, stderr)
			continue
		}
		sameOutput(t, c.name, stdout, c.want)
	}
	written, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	sameOutput(t, "--output file contents", string(written), all)

	// --ddl adds the DDL records, in binlog order, at their time.
	stdout, stderr, code = cli("read", "--ddl", "-o", outFile, files[0])
	if code != exitOK || stdout != "" {
		t.Fatalf("--ddl -o: exit %d, stdout %q: %s", code, stdout, stderr)
	}
	written, _ = os.ReadFile(outFile)
	ddl := parseOut(t, string(written))
	var ops []string
	for _, l := range ddl {
		ops = append(ops, l.Op)
		if l.Op == "ddl" && (l.TS != "2024-06-15T09:00:00Z" || l.DB == "") {
			t.Errorf("ddl record: %s", l.raw)
		}
	}
	if strings.Join(ops, ",") != "ddl,ddl,ddl,insert,insert,insert,insert,update,delete" {
		t.Errorf("--ddl ops %v", ops)
	}
	sameOutput(t, "--ddl without the DDL", filterLines(ddl, func(l outLine) bool { return l.Op != "ddl" }), all)
}
