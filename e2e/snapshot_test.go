package e2e

// binlogcdc snapshot: value parity with read. The same rows are inserted
// (so they are in the binlog) and then both read back from the binlog
// with 'read' and copied with 'snapshot': every snapshot line's "after"
// must be byte for byte the insert's "after".

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// spTables are column types and values for the parity test.
var spTables = []struct {
	create string
	rows   []string
}{
	{"CREATE TABLE sp.nums (id INT PRIMARY KEY, t TINYINT, tu TINYINT UNSIGNED, s SMALLINT, su SMALLINT UNSIGNED, m MEDIUMINT, mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, b BIGINT, bu BIGINT UNSIGNED, y YEAR, b1 BIT(1), b13 BIT(13), b64 BIT(64), f FLOAT, d DOUBLE, f2 FLOAT(7,3), dec1 DECIMAL(10,2), dec2 DECIMAL(65,30), dec3 DECIMAL(5,0) UNSIGNED, dec4 DECIMAL(38,38))",
		[]string{
			"(1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615, 1901, b'1', b'1010101010101', b'1111111111111111111111111111111111111111111111111111111111111111', 123456789, 1.7976931348623157e308, 1234.567, -12345678.91, 1.000000000000000000000000000001, 99999, -0.12345678901234567890123456789012345678)",
			"(2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, b'0', b'0', b'0', 1.1, 0.1, -0.001, 0, 0, 0, 0)",
			"(3, 127, 1, 32767, 1, 8388607, 1, 2147483647, 1, 9223372036854775807, 1, 2155, b'1', b'1', b'1', -3.4028234e38, -2.2250738585072014e-308, 9999.999, -0.01, -12345678901234567890123456789012345.678901234567890123456789012345, 1, 0.00000000000000000000000000000000000001)",
			"(4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
			"(5, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, 1999, b'1', b'111', b'1000000000000000000000000000000000000000000000000000000000000001', 1e-38, 5e-324, 0.5, 1.5, 3.14159265358979323846264338327950288419, 5, -0.5)",
		}},
	{"CREATE TABLE sp.times (id INT PRIMARY KEY, d DATE, dt DATETIME, dt3 DATETIME(3), dt6 DATETIME(6), ts TIMESTAMP NULL, ts2 TIMESTAMP(2) NULL, ts6 TIMESTAMP(6) NULL, tm TIME, tm1 TIME(1), tm6 TIME(6))",
		[]string{
			"(1, '2024-02-29', '2024-02-29 23:59:59', '2024-02-29 23:59:59.123', '1000-01-01 00:00:00.000001', '2038-01-19 03:14:07', '1970-01-01 00:00:01.99', '2024-06-30 12:00:00.654321', '838:59:59', '-838:59:58.9', '-00:00:00.000001')",
			"(2, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00.000', '9999-12-31 23:59:59.999999', '0000-00-00 00:00:00', '0000-00-00 00:00:00.00', '0000-00-00 00:00:00', '00:00:00', '-00:00:00.5', '12:34:56.000001')",
			"(3, '2000-01-00', '2000-00-00 01:02:03', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
		}},
	{"CREATE TABLE sp.strs (id INT PRIMARY KEY, c CHAR(5), v VARCHAR(300), cl CHAR(10) CHARACTER SET latin1, vl VARCHAR(20) CHARACTER SET latin1, c3 VARCHAR(10) CHARACTER SET utf8mb3, uc VARCHAR(10) CHARACTER SET ucs2, u16 CHAR(4) CHARACTER SET utf16, gb VARCHAR(10) CHARACTER SET gbk, sj VARCHAR(10) CHARACTER SET sjis, tt TINYTEXT, t TEXT, mt MEDIUMTEXT, lt LONGTEXT, bn BINARY(6), vb VARBINARY(20), tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB, e ENUM('a','b','','c d','é'), st SET('x','y','z','é'), j JSON)",
		[]string{
			"(1, 'ab  ', 'héllo wörld 🎉', 'café', 'naïve ', 'ünï', 'ü€', 'x€🎉', '中文', 'ｶﾀｶﾅ', 'tiny', REPEAT('t', 1000), REPEAT('m', 70000), REPEAT('l€', 40000), 'ab', X'00FF00', X'', X'DEADBEEF', REPEAT(X'01', 70000), X'00', 'é', 'x,z,é', '{\"a\": [1, 2.5, \"x\"], \"b\": null}')",
			"(2, '', '', '', '', '', '', '', '', '', '', '', '', '', X'000000000000', X'00', NULL, X'00', X'', X'', '', '', '[]')",
			"(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
			"(4, 'a\\\\b', 'quote\\'s \"dq\" \\n\\t', 'x', 'y', 'z', 'w', 'v', 'u', 's', 'r', 'q', 'p', 'o', 'ab    ', 'ab  ', 'n', 'm', 'l', 'k', 'c d', 'x,y,z', '\"text\"')",
		}},
	{"CREATE TABLE sp.misc (id INT PRIMARY KEY, g GEOMETRY, pt POINT, ls LINESTRING, u UUID, u1 UUID, i6 INET6, i4 INET4, vc VARCHAR(100) COMPRESSED, tc TEXT COMPRESSED, bc BLOB COMPRESSED, hidden INT INVISIBLE)",
		[]string{
			"(1, ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))'), POINT(1.5, -2), ST_GeomFromText('LINESTRING(0 0,1 1,2 4)'), '123e4567-e89b-42d3-a456-426614174000', 'a6c0f9e2-0d3a-11ee-be56-0242ac120002', '2001:db8::ff00:42:8329', '192.168.1.1', REPEAT('c', 90), REPEAT('tc ', 500), REPEAT(X'AB', 300), 7)",
			"(2, ST_GeomFromText('POINT(0 0)', 4326), NULL, NULL, '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-1fff-bfff-ffffffffffff', '::', '0.0.0.0', '', '', X'', NULL)",
			"(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'short', 'x', X'01', 0)",
		}},
	{"CREATE TABLE sp.nopk (a INT, b VARCHAR(10), c DOUBLE)",
		[]string{"(1, 'x', 0.5)", "(1, 'x', 0.5)", "(NULL, NULL, NULL)", "(2, 'y', -1)"}},
	{"CREATE TABLE sp.uk (a INT NOT NULL, b VARCHAR(5) NOT NULL, c INT, UNIQUE KEY (b, a), UNIQUE KEY (c))",
		[]string{"(2, 'a', 3)", "(1, 'x', NULL)"}},
	{"CREATE TABLE sp.labels (id INT PRIMARY KEY, e ENUM('it''s', 'back\\\\slash', 'x,y', ' sp ', 'ü\"q') CHARACTER SET latin1, s SET('a''b', 'c\\\\d', 'e f') CHARACTER SET utf8mb4 COLLATE utf8mb4_bin)",
		[]string{"(1, 'it''s', 'a''b,c\\\\d')", "(2, 'back\\\\slash', 'e f')", "(3, ' sp ', '')", "(4, 'ü\"q', 'a''b,e f')"}},
	// ENUMs read as their labels (UTF-8 or ASCII, no '' member), the
	// error value too (spCreate).
	{"CREATE TABLE sp.enums (id INT PRIMARY KEY, e ENUM('new','paid','ünï','x y','Paid ') COLLATE utf8mb4_bin NOT NULL, a ENUM('b','a') CHARACTER SET ascii, k ENUM('z','y') NOT NULL, UNIQUE KEY (k, id))",
		[]string{"(1, 'new', 'a', 'y')", "(2, 'ünï', NULL, 'z')", "(3, 'Paid ', 'b', 'y')", "(4, 'x y', 'a', 'z')"}},
	{"CREATE TABLE sp.gen (id INT PRIMARY KEY, v VARCHAR(10), g INT AS (id * 2) VIRTUAL, s VARCHAR(10) AS (UPPER(v)) STORED)",
		[]string{"(1, 'ab', DEFAULT, DEFAULT)", "(2, NULL, DEFAULT, DEFAULT)"}},
	{"CREATE TABLE sp.myisam (id INT PRIMARY KEY, v VARCHAR(10)) ENGINE=MyISAM",
		[]string{"(1, 'm')"}},
	{"CREATE TABLE sp.strpk (k VARCHAR(20) COLLATE utf8mb4_unicode_ci, n INT, e ENUM('p','q') NOT NULL, PRIMARY KEY (k(5), n))",
		[]string{"('Äbc', 1, 'p')", "('abd', 2, 'q')", "('zzzzzzzzzzzzzzz', 3, 'p')"}},
}

func spCreate(t *testing.T, src *testserver.Server) {
	t.Helper()
	src.Exec(t, "CREATE DATABASE sp")
	for _, tb := range spTables {
		src.Exec(t, tb.create)
		name := strings.Fields(tb.create)[2]
		for _, r := range tb.rows {
			src.Exec(t, "INSERT INTO "+name+(map[bool]string{true: " (id, g, pt, ls, u, u1, i6, i4, vc, tc, bc, hidden)", false: ""}[name == "sp.misc"])+" VALUES "+r)
		}
	}
	// The ENUM error value, and a SET with '' members.
	src.Exec(t, "SET SESSION sql_mode = ''", "INSERT INTO sp.strs (id, e, st) VALUES (5, 'no such', 'x,nope')",
		"INSERT INTO sp.enums VALUES (5, 'bogus', 'c', 'y')", "SET SESSION sql_mode = DEFAULT")
}

type spLine struct {
	Op    string          `json:"op"`
	DB    string          `json:"db"`
	Table string          `json:"table"`
	PK    []string        `json:"pk"`
	After json.RawMessage `json:"after"`
	Pos   struct {
		File   string `json:"file"`
		Offset uint64 `json:"offset"`
	} `json:"pos"`
	GTID string `json:"gtid"`
}

func spParse(t *testing.T, out []byte) []spLine {
	t.Helper()
	var lines []spLine
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if l == "" {
			continue
		}
		var x spLine
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("bad line %q: %v", clip(l), err)
		}
		lines = append(lines, x)
	}
	return lines
}

func TestSnapshotValueParity(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	spCreate(t, src)
	file, pos := stMasterPos(t, src)

	read := spParse(t, stRead(t, src, "--tables", "sp.*"))
	// A MyISAM table is refused, naming it, unless --allow-non-transactional.
	_, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN(), "--tables", "sp.*")
	if code != 1 || !strings.Contains(errOut, "not transactional: `sp`.`myisam` (MyISAM)") {
		t.Fatalf("snapshot of a MyISAM table: exit %d: %s", code, errOut)
	}
	out, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN(), "--tables", "sp.*", "--allow-non-transactional")
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	snap := spParse(t, out)
	if !strings.Contains(errOut, fmt.Sprintf("snapshot position %s:%d", file, pos)) {
		t.Errorf("snapshot does not report the position %s:%d:\n%s", file, pos, errOut)
	}
	var wantN int
	for _, tb := range spTables {
		wantN += len(tb.rows)
	}
	wantN += 2 // the ENUM error rows
	if len(read) != wantN || len(snap) != wantN {
		t.Fatalf("read gives %d lines, snapshot %d; want %d each", len(read), len(snap), wantN)
	}
	// Both list each table's rows in primary-key order (read: insertion
	// order, which is key order here, and nopk's rows in insert order,
	// which is InnoDB's order for them).
	byTable := func(ls []spLine) map[string][]spLine {
		m := map[string][]spLine{}
		for _, l := range ls {
			m[l.Table] = append(m[l.Table], l)
		}
		return m
	}
	// The GTID position is BINLOG_GTID_POS of the position (read without
	// it when nothing was written since: Source.idleGTIDPos).
	gp := src.QueryStrings(t, fmt.Sprintf("SELECT BINLOG_GTID_POS('%s', %d)", file, pos))
	if len(gp) != 1 || gp[0][0] == nil || *gp[0][0] == "" {
		t.Fatalf("BINLOG_GTID_POS: %v", gp)
	}
	for _, l := range snap {
		if l.GTID != *gp[0][0] {
			t.Fatalf("snapshot gtid %q, BINLOG_GTID_POS %q", l.GTID, *gp[0][0])
		}
	}
	rt, st := byTable(read), byTable(snap)
	for name, rl := range rt {
		sl := st[name]
		if name == "strs" { // row 5 was inserted last but sorts last too
		}
		if len(sl) != len(rl) {
			t.Errorf("%s: read %d rows, snapshot %d", name, len(rl), len(sl))
			continue
		}
		for i := range rl {
			if rl[i].Op != "insert" || sl[i].Op != "snapshot" {
				t.Fatalf("%s row %d: ops %q and %q", name, i, rl[i].Op, sl[i].Op)
			}
			if string(sl[i].After) != string(rl[i].After) {
				t.Errorf("%s row %d differs:\n  snapshot: %s\n  read:     %s\n  %s", name, i, clip(string(sl[i].After)), clip(string(rl[i].After)), firstDiff(string(sl[i].After), string(rl[i].After)))
			}
			if fmt.Sprint(sl[i].PK) != fmt.Sprint(rl[i].PK) {
				t.Errorf("%s: pk %v, read says %v", name, sl[i].PK, rl[i].PK)
			}
			if sl[i].Pos.File != file || sl[i].Pos.Offset != pos {
				t.Errorf("%s row %d: pos %s:%d, want the snapshot's %s:%d", name, i, sl[i].Pos.File, sl[i].Pos.Offset, file, pos)
			}
		}
	}
}

// TestSnapshotFormats: with --format, snapshot rows are those formats'
// snapshot records (Debezium op "r" and a source.snapshot, Maxwell
// "bootstrap-insert" between a table's "bootstrap-start" and
// "bootstrap-complete", Canal "INSERT"), their row data exactly that of
// read's inserts of the same rows.
func TestSnapshotFormats(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	spCreate(t, src)
	// The row's data in each format: Debezium payload.after, Maxwell and
	// Canal "data".
	data := func(format string, line []byte) string {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: bad line %q: %v", format, clip(string(line)), err)
		}
		if format == "debezium" {
			if p, ok := m["payload"]; ok {
				json.Unmarshal(p, &m)
			}
			return string(m["after"])
		}
		return string(m["data"])
	}
	marks := map[string][]string{
		"debezium": {`"op":"r"`, `"snapshot":"`}, // which value: TestSnapshotDebeziumPlaces
		"maxwell":  {`"type":"bootstrap-insert"`},
		"canal":    {`"type":"INSERT"`},
	}
	for _, format := range []string{"debezium", "maxwell", "canal"} {
		read := stRead(t, src, "--tables", "sp.*", "--format", format)
		out, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN(), "--tables", "sp.*", "--format", format, "--allow-non-transactional")
		if code != 0 {
			t.Fatalf("snapshot --format %s: exit %d: %s", format, code, errOut)
		}
		rl := strings.Split(strings.TrimRight(string(read), "\n"), "\n")
		sl := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if format == "maxwell" {
			sl = mxBootstrapRows(t, sl)
		}
		if len(rl) != len(sl) {
			t.Fatalf("%s: read %d lines, snapshot %d", format, len(rl), len(sl))
		}
		// Same order as in TestSnapshotValueParity: each table's rows in
		// key order; the tables in name order for the snapshot, creation
		// order for read.
		byData := map[string]int{}
		for _, l := range rl {
			byData[data(format, []byte(l))]++
		}
		for i, l := range sl {
			for _, m := range marks[format] {
				if !strings.Contains(l, m) {
					t.Fatalf("%s line %d lacks %s: %s", format, i, m, clip(l))
				}
			}
			d := data(format, []byte(l))
			if byData[d] == 0 {
				t.Errorf("%s line %d: its data is in no read line: %s", format, i, clip(d))
			}
			byData[d]--
		}
	}
}

// TestSnapshotRefusals: what a snapshot will not do, before writing
// anything: add its rows to a target table that holds rows, or start over
// a checkpoint that exists.
func TestSnapshotRefusals(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE r", "CREATE TABLE r.t (id INT PRIMARY KEY, v INT)", "INSERT INTO r.t VALUES (1, 1), (2, 2)", "CREATE TABLE r.b_parent (id INT PRIMARY KEY)")
	// Two GTID domains: the snapshot's GTID position has one GTID each.
	src.Exec(t, "SET SESSION gtid_domain_id = 1", "INSERT INTO r.t VALUES (3, 3)", "SET SESSION gtid_domain_id = 0")
	dst.Exec(t, "CREATE DATABASE r", "CREATE TABLE r.t (id INT PRIMARY KEY, v INT)", "INSERT INTO r.t VALUES (9, 9)", "CREATE TABLE r.b_parent (id INT PRIMARY KEY)")
	// Foreign keys on both sides: the child table comes first.
	for _, srv := range []*testserver.Server{src, dst} {
		srv.Exec(t, "CREATE TABLE r.a_child (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES r.b_parent (id))")
	}
	src.Exec(t, "INSERT INTO r.b_parent VALUES (1), (2)", "INSERT INTO r.a_child VALUES (10, 1), (20, 2)")
	_, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN(), "--to", dst.DSN()+"/")
	if code != 1 || !strings.Contains(errOut, "the target's `r`.`t` already holds rows") {
		t.Errorf("snapshot into a table with rows: exit %d: %s", code, errOut)
	}
	if got := *dst.QueryStrings(t, "SELECT GROUP_CONCAT(id) FROM r.t")[0][0]; got != "9" {
		t.Errorf("the target table was changed: %s", got)
	}
	if got := dst.QueryStrings(t, "SELECT COUNT(*) FROM r.a_child"); *got[0][0] != "0" {
		t.Errorf("the refused snapshot wrote to the target before refusing")
	}
	// Run again without emptying it: still refused (no unfinished snapshot
	// to take again, so nothing is emptied).
	if _, errOut, code = runCLI(t, nil, "snapshot", "--source", src.DSN(), "--to", dst.DSN()+"/"); code != 1 || !strings.Contains(errOut, "already holds rows") {
		t.Errorf("the second refused snapshot: exit %d: %s", code, errOut)
	}
	// Emptied, it is filled; the snapshot's position is the target's checkpoint.
	dst.Exec(t, "DELETE FROM r.t")
	_, errOut, code = runCLI(t, nil, "snapshot", "--source", src.DSN(), "--to", dst.DSN()+"/")
	if code != 0 {
		t.Fatalf("snapshot --to: exit %d: %s", code, errOut)
	}
	file, pos := stMasterPos(t, src)
	if cp := rpCheckpoint(t, dst); cp != fmt.Sprintf("%s:%d", file, pos) {
		t.Errorf("target checkpoint %s, want the snapshot's position %s:%d", cp, file, pos)
	}
	rpCompare(t, src, dst, "snapshot --to")
	// A second snapshot into the same replica: it has a checkpoint.
	_, errOut, code = runCLI(t, nil, "snapshot", "--source", src.DSN(), "--to", dst.DSN()+"/")
	if code != 1 || !strings.Contains(errOut, "already has a checkpoint") {
		t.Errorf("a second snapshot into the target: exit %d: %s", code, errOut)
	}

	// stream --to continues from the snapshot's position.
	src.Exec(t, "INSERT INTO r.t VALUES (4, 4)", "UPDATE r.t SET v = 10 WHERE id = 1")
	dir := t.TempDir()
	r := stStart(t, dir, "to", nil, "--source", src.DSN(), "--to", dst.DSN()+"/")
	stPoll(t, time.Minute, r, "the stream to catch up", func() bool { return ssCaughtUp(t, src, rpCheckpoint(t, dst)) })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream --to after the snapshot: exit %d: %s", code, r.errText())
	}
	rpCompare(t, src, dst, "snapshot --to, then stream --to")
	file, pos = stMasterPos(t, src)

	cp := filepath.Join(dir, "cp.json")
	if _, errOut, code = runCLI(t, nil, "snapshot", "--source", src.DSN(), "--checkpoint", cp); code != 0 {
		t.Fatalf("snapshot --checkpoint: exit %d: %s", code, errOut)
	}
	if c := stLoadCP(t, cp); c.File != file || c.Offset != pos {
		t.Errorf("checkpoint at %s:%d, want %s:%d", c.File, c.Offset, file, pos)
	}
	if _, errOut, code = runCLI(t, nil, "snapshot", "--source", src.DSN(), "--checkpoint", cp); code != 2 || !strings.Contains(errOut, "exists") {
		t.Errorf("snapshot over an existing checkpoint: exit %d: %s", code, errOut)
	}
	// stream --checkpoint continues from it: the next change is its first line.
	src.Exec(t, "DELETE FROM r.t WHERE id = 2")
	r = stStart(t, dir, "cp", nil, "--source", src.DSN(), "--checkpoint", cp)
	stPoll(t, time.Minute, r, "the delete", func() bool { return strings.Contains(string(r.outBytes()), `"op":"delete"`) })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream --checkpoint after the snapshot: exit %d: %s", code, r.errText())
	}
	if n := strings.Count(string(r.outBytes()), "\n"); n != 1 {
		t.Errorf("stream from the snapshot's checkpoint printed %d lines, want the delete only:\n%s", n, r.outBytes())
	}
}

// mxBootstrapRows checks that Maxwell's bootstrap rows of each table come
// between its bootstrap-start and bootstrap-complete records, each
// {"database","table","type","ts","data":{}} as Maxwell writes them
// (bootstrap-single-row), and returns the rows without them.
func mxBootstrapRows(t *testing.T, lines []string) []string {
	t.Helper()
	var rows []string
	open := ""
	for i, l := range lines {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("maxwell line %d: %v", i, err)
		}
		var typ, db, table string
		json.Unmarshal(m["type"], &typ)
		json.Unmarshal(m["database"], &db)
		json.Unmarshal(m["table"], &table)
		switch typ {
		case "bootstrap-start":
			if open != "" || string(m["data"]) != "{}" || m["ts"] == nil {
				t.Fatalf("maxwell line %d: %s (inside %q)", i, l, open)
			}
			open = db + "." + table
		case "bootstrap-complete":
			if open != db+"."+table || string(m["data"]) != "{}" {
				t.Fatalf("maxwell line %d: %s (inside %q)", i, l, open)
			}
			open = ""
		default:
			if open != db+"."+table {
				t.Fatalf("maxwell line %d: a row of %s.%s outside its bootstrap-start/-complete (inside %q)", i, db, table, open)
			}
			rows = append(rows, l)
		}
	}
	if open != "" {
		t.Fatalf("maxwell: no bootstrap-complete for %s", open)
	}
	return rows
}
