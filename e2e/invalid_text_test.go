package e2e

// Text as the source holds it. MariaDB's utf8mb4 stores UTF-8 encoded
// surrogate code points, which Go's UTF-8 check refuses: replay and the
// SQL formats write them byte for byte (they used to become U+FFFD, exit
// 0). Bytes that are not utf8mb4 at all (a damaged or hand-made binlog)
// go to the target as they are too, which refuses them under replay's
// strict sql_mode: the replay stops with that error, never writing
// something else.

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// patchBinlogs copies the binlog files into a new directory, with the
// last occurrence of old (in the rows event: MariaDB logs the statement
// first, in an annotate event) replaced by new (of the same length) and the
// CRC32 of the event holding it computed again when the event has one;
// it returns the copies' paths.
func patchBinlogs(t *testing.T, files []string, old, new []byte) []string {
	t.Helper()
	dir, done := t.TempDir(), false
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if at := bytes.LastIndex(b, old); at >= 0 && !done {
			patchEvent(t, f, b, at, new)
			done = true
		}
		p := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	if !done {
		t.Fatalf("no %q in %q", old, files)
	}
	return out
}

// patchEvent writes new at b[at:] and computes the CRC32 of the event
// holding it again. It walks the events: a 4-byte magic, then each
// event's size at offset 9 of its 19-byte header.
func patchEvent(t *testing.T, name string, b []byte, at int, new []byte) {
	t.Helper()
	for pos := 4; pos+19 <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[pos+9:]))
		if n < 23 || pos+n > len(b) {
			t.Fatalf("%s: bad event at %d", name, pos)
		}
		if at < pos+n {
			ev := b[pos : pos+n]
			hasCRC := crc32.ChecksumIEEE(ev[:n-4]) == binary.LittleEndian.Uint32(ev[n-4:])
			copy(b[at:], new)
			if hasCRC {
				binary.LittleEndian.PutUint32(ev[n-4:], crc32.ChecksumIEEE(ev[:n-4]))
			}
			return
		}
		pos += n
	}
	t.Fatalf("%s: offset %d is in no event", name, at)
}

// TestSurrogateText: MariaDB's utf8mb4 stores UTF-8 encoded surrogate
// code points (ED A0 80 … ED BF BF), which are not UTF-8 to Go. Replay
// (--to, one connection or several, LOAD DATA; --format sql; --flashback)
// writes them as the source holds them.
func TestSurrogateText(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t,
		"CREATE DATABASE su", "USE su",
		"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40) CHARACTER SET utf8mb4, x TEXT CHARACTER SET utf8mb3)",
		"CREATE TABLE n (v VARCHAR(40) CHARACTER SET utf8mb4, k INT)", // no key: rows are found by all their values
		"INSERT INTO t VALUES (1, X'EDA080', X'EDBFBF'), (2, CONCAT('a', X'EDB080', 'b'), 'plain'), (3, 'x', 'y')",
		"INSERT INTO n VALUES (X'EDA080', 1), (CONCAT('é', X'EDBFBF'), 2), (X'EDA081', 3)",
		"UPDATE t SET v = CONCAT(v, X'EDA180') WHERE id IN (1, 3)",
		"UPDATE n SET k = k + 10 WHERE k = 2",
		"DELETE FROM n WHERE k = 3",
		"DELETE FROM t WHERE id = 2",
	)
	// A table whose ALTERs recover replays: a longer VARCHAR in the same
	// character set keeps the text, a VARBINARY takes its bytes.
	src.Exec(t,
		"CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(4) CHARACTER SET utf8mb4, c VARCHAR(10) CHARACTER SET utf8mb4)",
		"INSERT INTO a VALUES (1, X'EDA080', X'EDBFBF41')",
		"ALTER TABLE a MODIFY v VARCHAR(40) CHARACTER SET utf8mb4, MODIFY c VARBINARY(20)",
		"INSERT INTO a VALUES (2, CONCAT(X'EDA080', 'z'), X'EDA081')",
		// A text key, its rows converted by the ALTER, then changed.
		"CREATE TABLE k (s VARCHAR(10) CHARACTER SET utf8mb4 PRIMARY KEY, n INT)",
		"INSERT INTO k VALUES ('a', 1), (X'EDA080', 2), ('c', 3)",
		"ALTER TABLE k MODIFY s VARCHAR(20) CHARACTER SET utf8mb4",
		"UPDATE k SET n = n + 10",
		"DELETE FROM k WHERE s = 'c'",
	)
	wantK := rpRows(t, src, "SELECT HEX(s), n FROM su.k ORDER BY s")
	wantA := rpRows(t, src, "SELECT id, HEX(v), HEX(c) FROM su.a ORDER BY id")
	if !strings.Contains(wantA, `"EDA0807A","EDA081"`) || !strings.Contains(wantA, `"EDA080","EDBFBF41"`) {
		t.Fatalf("su.a does not hold the surrogates:\n%s", wantA)
	}
	src.Exec(t, "DROP TABLE su.a, su.k")
	state := func(srv *testserver.Server) string {
		return rpRows(t, srv, "SELECT id, HEX(v), HEX(x) FROM su.t ORDER BY id") + "\n" +
			rpRows(t, srv, "SELECT HEX(v), k FROM su.n ORDER BY k") + "\n" +
			rpRows(t, srv, "CHECKSUM TABLE su.t, su.n")
	}
	want := state(src)
	if !strings.Contains(want, "EDA080EDA180") || !strings.Contains(want, "C3A9EDBFBF") {
		t.Fatalf("the source does not hold the surrogates:\n%s", want)
	}
	index := src.BinlogIndex()
	for _, mode := range [][]string{{"--to"}, {"--to", "--parallel", "2"}, {"--to", "--load-data"}, {"--format", "sql"}} {
		t.Run(strings.Join(mode, " "), func(t *testing.T) {
			dst := testserver.Start(t, testserver.Options{})
			if mode[0] == "--to" {
				rpRun(t, 0, append([]string{"read", index, "--to", dst.DSN() + "/"}, mode[1:]...)...)
			} else {
				sql, _ := rpRun(t, 0, "read", index, "--format", "sql")
				rpMysql(t, dst, sql)
			}
			if got := state(dst); got != want {
				t.Errorf("target:\n%s\nwant (source):\n%s", got, want)
			}
		})
	}
	t.Run("recover", func(t *testing.T) {
		// The table recovered from the binlog alone, by SQL and --to.
		dst := testserver.Start(t, testserver.Options{})
		sql, _ := rpRun(t, 0, "recover", "--table", "su.t", "--incarnation", "1", index)
		rpMysql(t, dst, append([]byte("CREATE DATABASE su; USE su;\n"), sql...))
		rpRun(t, 0, "recover", "--table", "su.n", "--incarnation", "1", index, "--to", dst.DSN()+"/")
		if got := state(dst); got != want {
			t.Errorf("recovered:\n%s\nwant (source):\n%s", got, want)
		}
		sql, _ = rpRun(t, 0, "recover", "--table", "su.a", index)
		rpMysql(t, dst, append([]byte("USE su;\n"), sql...))
		if got := rpRows(t, dst, "SELECT id, HEX(v), HEX(c) FROM su.a ORDER BY id"); got != wantA {
			t.Errorf("recovered su.a:\n%s\nwant (before its DROP):\n%s", got, wantA)
		}
		out, errOut := rpRun(t, 0, "recover", "--table", "su.k", index)
		rpMysql(t, dst, append([]byte("USE su;\n"), out...))
		if got := rpRows(t, dst, "SELECT HEX(s), n FROM su.k ORDER BY s"); got != wantK || strings.Contains(errOut, "conflict") {
			t.Errorf("recovered su.k:\n%s\nwant (before its DROP):\n%s\nstderr:\n%s", got, wantK, errOut)
		}
	})
	t.Run("flashback", func(t *testing.T) {
		// More changes, then the SQL that undoes them, run on a copy of
		// the source after them: the copy is back at want.
		st := src.QueryStrings(t, "SHOW MASTER STATUS")
		from := *st[0][0] + ":" + *st[0][1]
		src.Exec(t, "INSERT INTO su.t VALUES (9, X'EDA080EDA080', X'EDBFBF')",
			"UPDATE su.n SET v = CONCAT(v, X'EDA0BF') WHERE k = 1", "DELETE FROM su.t WHERE id = 1")
		dst := testserver.Start(t, testserver.Options{})
		rpRun(t, 0, "read", index, "--to", dst.DSN()+"/")
		if got := state(dst); got != state(src) || got == want {
			t.Fatalf("the copy:\n%s\nthe source:\n%s", got, state(src))
		}
		sql, _ := rpRun(t, 0, "read", index, "--start-position", from, "--flashback")
		rpMysql(t, dst, sql)
		if got := state(dst); got != want {
			t.Errorf("after the flashback:\n%s\nwant:\n%s", got, want)
		}
	})
}

func TestInvalidTextRefused(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t,
		"CREATE DATABASE it", "USE it",
		"CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(40) CHARACTER SET utf8mb4, x TEXT CHARACTER SET utf8mb4)",
		"INSERT INTO t VALUES (1, 'fine', 'fine')",
		"INSERT INTO t VALUES (2, 'beforeQQQafter', 'text')",
		"INSERT INTO t VALUES (3, 'fine', 'beforeWWWafter')",
		"UPDATE t SET v = 'beforeZZZafter' WHERE id = 1",
	)
	hexOf := func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) }
	rows := []string{ // the source's rows, as rpRows shows them
		`"1","` + hexOf("fine") + `","` + hexOf("fine") + `"`,
		`"2","` + hexOf("beforeQQQafter") + `","` + hexOf("text") + `"`,
		`"3","` + hexOf("fine") + `","` + hexOf("beforeWWWafter") + `"`,
	}
	files := src.BinlogFiles(t)
	for i, c := range []struct{ old, new string }{
		{"QQQ", "\xff\xfe\xff"}, // row 2's VARCHAR
		{"WWW", "\xc3\x28\xa0"}, // row 3's TEXT: a broken two-byte sequence
		{"ZZZ", "\xf8\x88\x80"}, // an update's new VARCHAR: no UTF-8 lead byte
	} {
		bad := patchBinlogs(t, files, []byte(c.old), []byte(c.new))
		for _, flags := range [][]string{nil, {"--parallel", "2"}, {"--load-data"}} {
			dst := testserver.Start(t, testserver.Options{})
			args := append(append([]string{"read"}, bad...), append([]string{"--to", dst.DSN() + "/"}, flags...)...)
			_, errOut, code := runCLI(t, nil, args...)
			got := rpRows(t, dst, "SELECT id, HEX(v), HEX(x) FROM it.t ORDER BY id")
			if code == 0 {
				t.Fatalf("%s %v: exit 0 for text that is not utf8mb4; target:\n%s\nstderr:\n%s", c.old, flags, got, errOut)
			}
			if !strings.Contains(errOut, "Incorrect string value") {
				t.Errorf("%s %v: the error does not name the target's refusal:\n%s", c.old, flags, errOut)
			}
			// The target holds some of the rows before the refused one
			// (those of the groups committed before it), as the source
			// holds them, and nothing else.
			ok := false
			for k := 0; k <= i+1; k++ {
				ok = ok || got == strings.Join(rows[:k], "\n")
			}
			if !ok {
				t.Errorf("%s %v: target holds\n%s\nwant a prefix of\n%s", c.old, flags, got, strings.Join(rows[:i+1], "\n"))
			}
		}
	}
}

// A row holding the ENUM error value runs non-strict in --format sql,
// --flashback and recover, where the target would store '?' for bytes no
// charset holds, with a warning only: such a row is refused before
// anything of it is written.
func TestInvalidTextEnumErrorRefused(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t,
		"CREATE DATABASE ie", "USE ie",
		"CREATE TABLE t (id INT PRIMARY KEY, e ENUM('a','b'), v VARCHAR(40) CHARACTER SET utf8mb4)",
		"SET SESSION sql_mode = ''",
		"INSERT INTO t VALUES (1, 'nope', 'beforeQQQafter')", // e: the error value
		"INSERT INTO t VALUES (2, 'nope', 'beforeWWWafter')",
		"DELETE FROM t WHERE id = 2",
	)
	if got := rpRows(t, src, "SELECT id, e + 0 FROM ie.t"); got != `"1","0"` {
		t.Fatalf("the source does not hold the ENUM error value: %s", got)
	}
	files := src.BinlogFiles(t)
	for _, c := range []struct {
		old  string
		args []string
	}{
		{"QQQ", []string{"read", "--format", "sql"}},                          // the insert, run non-strict
		{"WWW", []string{"read", "--flashback"}},                              // the delete's before image, inserted back
		{"QQQ", []string{"recover", "--table", "ie.t", "--incarnation", "1"}}, // the final row
	} {
		bad := patchBinlogs(t, files, []byte(c.old), []byte("\xff\xfe\xff"))
		out, errOut, code := runCLI(t, nil, append(c.args, bad...)...)
		if code == 0 || !strings.Contains(errOut, "cannot store") || !strings.Contains(errOut, "`v`") {
			t.Errorf("%v: exit %d, stderr:\n%s", c.args, code, errOut)
		}
		if bytes.Contains(out, []byte("\xff\xfe\xff")) {
			t.Errorf("%v: the bytes were written:\n%q", c.args, out)
		}
		// The same binlog unpatched goes through.
		good, errOut, code := runCLI(t, nil, append(c.args, files...)...)
		if code != 0 {
			t.Errorf("%v, unpatched: exit %d:\n%s", c.args, code, errOut)
		}
		if c.args[0] != "recover" {
			continue
		}
		// recover -o FILE: the refusal comes after the CREATE TABLE was
		// written; FILE keeps what it held, and no temporary file stays.
		dir := t.TempDir()
		o := filepath.Join(dir, "t.sql")
		os.WriteFile(o, []byte("-- an earlier recovery\n"), 0o644)
		if _, errOut, code := runCLI(t, nil, append(append(c.args, "-o", o), bad...)...); code == 0 {
			t.Errorf("recover -o, patched: exit 0:\n%s", errOut)
		}
		if got, _ := os.ReadFile(o); string(got) != "-- an earlier recovery\n" {
			t.Errorf("recover -o, refused: the file holds:\n%s", got)
		}
		if es, _ := os.ReadDir(dir); len(es) != 1 {
			t.Errorf("recover -o, refused: the directory holds %d entries", len(es))
		}
		if _, errOut, code := runCLI(t, nil, append(append(c.args, "-o", o), files...)...); code != 0 {
			t.Errorf("recover -o, unpatched: exit %d:\n%s", code, errOut)
		}
		if got, _ := os.ReadFile(o); !bytes.Equal(got, good) {
			t.Errorf("recover -o wrote:\n%s\nstdout had:\n%s", got, good)
		}
	}
}
