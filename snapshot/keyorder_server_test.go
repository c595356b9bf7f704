package snapshot

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
)

// keyCase is a table whose key order is checked: cols its columns and
// key, rows the rows inserted (each a VALUES tuple), chunked whether
// chunkable must accept it. For some types left out, unbytes is their
// bytes as binlogcdc has them, which the server must not order as bytes
// (the proof that they are rightly left out).
type keyCase struct {
	name    string
	cols    string
	rows    []string
	chunked bool
	unbytes string
}

var keyCases = []keyCase{
	{"tinyint", "k TINYINT PRIMARY KEY", []string{"(-128)", "(-1)", "(0)", "(1)", "(127)"}, true, ""},
	{"smallint_unsigned", "k SMALLINT UNSIGNED PRIMARY KEY", []string{"(0)", "(1)", "(32767)", "(32768)", "(65535)"}, true, ""},
	{"mediumint", "k MEDIUMINT PRIMARY KEY", []string{"(-8388608)", "(-2)", "(0)", "(8388607)"}, true, ""},
	{"int", "k INT PRIMARY KEY", []string{"(-2147483648)", "(-1)", "(0)", "(1)", "(2147483647)"}, true, ""},
	{"bigint", "k BIGINT PRIMARY KEY", []string{"(-9223372036854775808)", "(-9223372036854775807)", "(-1)", "(0)", "(1)", "(9223372036854775807)"}, true, ""},
	{"bigint_unsigned", "k BIGINT UNSIGNED ZEROFILL PRIMARY KEY", []string{"(0)", "(1)", "(9223372036854775807)", "(9223372036854775808)", "(18446744073709551614)", "(18446744073709551615)"}, true, ""},
	// YEAR: 0 is 0000, the two-digit strings '0'..'69' are 2000..2069.
	{"year", "k YEAR PRIMARY KEY", []string{"(0)", "(1901)", "('69')", "(1970)", "('99')", "('0')", "(2155)"}, true, ""},
	{"bit1", "k BIT(1) PRIMARY KEY", []string{"(b'0')", "(b'1')"}, true, ""},
	{"bit12", "k BIT(12) PRIMARY KEY", []string{"(0)", "(1)", "(255)", "(256)", "(2048)", "(4095)"}, true, ""},
	{"bit64", "k BIT(64) PRIMARY KEY", []string{"(0)", "(1)", "(9223372036854775807)", "(9223372036854775808)", "(18446744073709551615)"}, true, ""},
	{"decimal", "k DECIMAL(10,3) PRIMARY KEY", []string{"(-9999999.999)", "(-10)", "(-1.5)", "(-0.001)", "(0)", "(0.001)", "(0.01)", "(1.5)", "(9.999)", "(10)", "(9999999.999)"}, true, ""},
	{"decimal_wide", "k DECIMAL(65,30) PRIMARY KEY", []string{"(-99999999999999999999999999999999999.999999999999999999999999999999)", "(-0.000000000000000000000000000001)", "(0)",
		"(0.000000000000000000000000000001)", "(99999999999999999999999999999999999.999999999999999999999999999999)"}, true, ""},
	{"numeric_int", "k NUMERIC(5) UNSIGNED PRIMARY KEY", []string{"(0)", "(9)", "(10)", "(99999)"}, true, ""},
	{"date", "k DATE PRIMARY KEY", []string{"('0000-00-00')", "('0000-01-01')", "('0001-01-01')", "('1969-12-31')", "('2020-00-00')", "('2020-01-00')", "('2020-01-01')", "('9999-12-31')"}, true, ""},
	{"datetime0", "k DATETIME PRIMARY KEY", []string{"('0000-00-00 00:00:00')", "('1000-01-01 00:00:00')", "('2020-00-00 00:00:00')", "('2020-01-01 00:00:00')", "('2020-01-01 00:00:01')", "('9999-12-31 23:59:59')"}, true, ""},
	{"datetime6", "k DATETIME(6) PRIMARY KEY", []string{"('0000-00-00 00:00:00')", "('1000-01-01 00:00:00.000001')", "('2020-01-01 00:00:00')", "('2020-01-01 00:00:00.000001')",
		"('2020-01-01 00:00:00.499999')", "('2020-01-01 00:00:00.5')", "('2020-01-01 00:00:01')", "('9999-12-31 23:59:59.999999')"}, true, ""},
	{"datetime3", "k DATETIME(3) PRIMARY KEY", []string{"('2020-01-01 00:00:00.009')", "('2020-01-01 00:00:00.01')", "('2020-01-01 00:00:00.1')", "('2020-01-01 00:00:00.999')"}, true, ""},
	{"timestamp0", "k TIMESTAMP PRIMARY KEY", []string{"('0000-00-00 00:00:00')", "('1970-01-01 00:00:01')", "('2000-01-01 00:00:00')", "('2038-01-19 03:14:07')"}, true, ""},
	{"timestamp6", "k TIMESTAMP(6) PRIMARY KEY", []string{"('0000-00-00 00:00:00')", "('1970-01-01 00:00:01')", "('1970-01-01 00:00:01.000001')",
		"('2000-01-01 00:00:00.5')", "('2038-01-19 03:14:07.999999')"}, true, ""},
	{"time6", "k TIME(6) PRIMARY KEY", []string{"('-838:59:59')", "('-100:00:00')", "('-10:00:00')", "('-9:59:59.999999')", "('-1:00:00')", "('-00:00:00.5')", "('-00:00:00.000001')",
		"('00:00:00')", "('00:00:00.000001')", "('00:00:00.5')", "('9:59:59.999999')", "('10:00:00')", "('100:00:00')", "('838:59:59')"}, true, ""},
	{"time0", "k TIME PRIMARY KEY", []string{"('-838:59:59')", "('-24:00:00')", "('-00:00:01')", "('00:00:00')", "('00:00:01')", "('23:59:59')", "('838:59:59')"}, true, ""},
	// ENUM orders by index, not label; 0 is the error value '' (the
	// session is not strict), distinct from the label '' (index 4).
	{"enum", "k ENUM('zeta','alpha','Mid','') PRIMARY KEY", []string{"(0)", "('zeta')", "('alpha')", "('Mid')", "(4)"}, true, ""},
	{"enum_many", "k ENUM(" + enumLabels(300) + ") PRIMARY KEY", []string{"('l299')", "('l0')", "('l10')", "('l2')", "('l255')", "('l256')", "('l100')"}, true, ""},
	// SET orders by its bitmask, not its text.
	{"set", "k SET('z','a','m') PRIMARY KEY", []string{"('')", "('z')", "('a')", "('z,a')", "('m')", "('z,m')", "('a,m')", "('z,a,m')"}, true, ""},
	{"set63", "k SET(" + enumLabels(63) + ") PRIMARY KEY", []string{"('')", "('l0')", "('l62')", "('l61')", "('l0,l62')", "('l31,l32')"}, true, ""},
	// BINARY is padded with 0x00: X'' is X'00000000'.
	{"binary", "k BINARY(4) PRIMARY KEY", []string{"(X'')", "(X'00000001')", "(X'01')", "(X'61')", "(X'610001')", "(X'7f')", "(X'80')", "(X'ff')", "(X'ffffffff')"}, true, ""},
	// VARBINARY: no padding, a prefix first, 0x00 is a byte like another.
	{"varbinary", "k VARBINARY(8) PRIMARY KEY", []string{"(X'')", "(X'00')", "(X'0000')", "(X'0001')", "(X'01')", "(X'20')", "(X'2000')", "(X'61')", "(X'6100')", "(X'610000')", "(X'6120')",
		"(X'6101')", "(X'7f')", "(X'80')", "(X'ff')", "(X'ffff')"}, true, ""},
	{"char_binary", "k CHAR(3) CHARACTER SET binary PRIMARY KEY", []string{"(X'')", "(X'20')", "(X'2020')", "(X'41')", "(X'61')"}, true, ""},
	{"composite", "a INT, b VARBINARY(4), c ENUM('y','x'), d DATETIME(3), e TIME(2), PRIMARY KEY (a, b, c, d, e)", []string{
		"(-1, X'', 'x', '2020-01-01', '-1:00:00')", "(-1, X'', 'x', '2020-01-01', '-0:00:00.01')", "(-1, X'', 'y', '2020-01-01', '00:00:00')",
		"(-1, X'00', 'y', '0000-00-00', '00:00:00')", "(-1, X'00', 'x', '0000-00-00', '00:00:00')", "(0, X'', 'y', '2020-01-01 00:00:00.001', '00:00:00')",
		"(0, X'', 'y', '2020-01-01', '00:00:00')", "(0, X'ff', 'y', '2020-01-01', '00:00:00')", "(1, X'', 'x', '1999-12-31 23:59:59.999', '838:59:59')"}, true, ""},
	// A descending key part: the ORDER BY binlogcdc writes is ascending
	// all the same, and "key > after" means after in that order.
	{"desc", "a INT, b ENUM('y','x'), c DECIMAL(4,1), PRIMARY KEY (a DESC, b, c DESC)", []string{"(-5, 'x', 1)", "(-5, 'y', 2)", "(-5, 'y', -2)", "(0, 'x', 0)", "(3, 'y', 0.5)", "(3, 'x', -0.5)", "(3, 'x', 0.5)"}, true, ""},
	// No PRIMARY KEY: the first UNIQUE key of NOT NULL whole columns is
	// the key.
	{"unique_not_null", "k BIGINT NOT NULL, v INT, UNIQUE KEY (k)", []string{"(5, 1)", "(-5, 2)", "(0, 3)"}, true, ""},

	// Read whole.
	{"varchar_ci", "k VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY KEY", []string{"('a')", "('B')", "('c')", "('ö')"}, false, ""},
	// A _bin collation pads with spaces: 'a\t' sorts before 'a'.
	{"varchar_bin", "k VARCHAR(10) COLLATE utf8mb4_bin PRIMARY KEY", []string{"('a')", "('a\t')", "('b')"}, false, "CAST(k AS BINARY)"},
	{"char", "k CHAR(4) PRIMARY KEY", []string{"('a')", "('b')"}, false, ""},
	{"float", "k FLOAT PRIMARY KEY", []string{"(-1.5)", "(0)", "(2.25)"}, false, ""},
	{"double", "k DOUBLE PRIMARY KEY", []string{"(-1.5)", "(0)", "(2.25)"}, false, ""},
	// A SET of 64 members: ordered by its unsigned bitmask, compared with
	// a number as signed ("k > 0" leaves out 'l63').
	{"set64", "k SET(" + enumLabels(64) + ") PRIMARY KEY", []string{"('')", "('l0')", "('l63')", "('l62')", "('l0,l63')", "('l31,l32')"}, false, ""},
	// UUID: time-based ones order by time_hi, time_mid, time_low, not by
	// their bytes (checked below).
	{"uuid", "k UUID PRIMARY KEY", []string{"('00000000-0000-0000-0000-000000000001')", "('00000001-0000-1000-8000-000000000000')",
		"('ffffffff-0000-1000-8000-000000000000')", "('00000000-0001-1000-8000-000000000000')"}, false, "CAST(k AS BINARY(16))"},
	// INET4 and INET6 order by their bytes, most significant first.
	{"inet4", "k INET4 PRIMARY KEY", []string{"('0.0.0.0')", "('0.0.0.1')", "('1.2.3.4')", "('127.0.0.1')", "('128.0.0.0')", "('255.255.255.255')"}, true, ""},
	{"inet6", "k INET6 PRIMARY KEY", []string{"('::')", "('::1')", "('::1.2.3.4')", "('::ffff:0.0.0.0')", "('::ffff:1.2.3.4')", "('::ffff:255.255.255.255')", "('2001:db8::')",
		"('8000::')", "('fe80::1')", "('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')"}, true, ""},
	{"varbinary_prefix", "k VARBINARY(8), PRIMARY KEY (k(2))", []string{"(X'01')", "(X'0102')", "(X'0203')"}, false, ""},
	{"tinyblob_prefix", "k TINYBLOB, PRIMARY KEY (k(255))", []string{"(X'')", "(X'00')", "(X'01')"}, false, ""},
	{"blob_prefix", "k BLOB, PRIMARY KEY (k(10))", []string{"(X'')", "(X'00')", "(X'01')"}, false, ""},
	{"int_and_text", "a INT, b VARCHAR(3), PRIMARY KEY (a, b)", []string{"(1, 'a')", "(1, 'B')"}, false, ""},
	{"no_key", "k INT", []string{"(1)", "(1)", "(-1)"}, false, ""},
	{"unique_nullable", "k INT NULL, UNIQUE KEY (k)", []string{"(1)", "(NULL)", "(NULL)"}, false, ""},
}

func enumLabels(n int) string {
	var l []string
	for i := 0; i < n; i++ {
		l = append(l, fmt.Sprintf("'l%d'", i))
	}
	return strings.Join(l, ",")
}

// TestKeyOrderOnServer proves, for each key type chunkable accepts, that
// the server's ORDER BY of the key is pipeline.CompareKeys' order of the
// keys the snapshot decodes, that the keys the binlog gives for the same
// rows are the same keys, that "key > after" (the resume's first SELECT)
// and "key <= hi" (a chunk's upper bound, a target's range delete) select
// exactly the rows after and up to a key, and that an incremental
// snapshot's chunks read every row once. A table it refuses is read whole.
func TestKeyOrderOnServer(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "SET SESSION sql_mode = ''", "SET SESSION time_zone = '+00:00'", "CREATE DATABASE ko")
	for _, kc := range keyCases {
		srv.Exec(t, "CREATE TABLE ko.`"+kc.name+"` ("+kc.cols+") ENGINE=InnoDB",
			"INSERT INTO ko.`"+kc.name+"` VALUES "+strings.Join(kc.rows, ", "))
	}
	srv.FlushLogs(t)
	files := srv.BinlogFiles(t)
	binlogKeys := readBinlogKeys(t, files[:len(files)-1])

	conn := srv.Conn(t)
	if err := setupSession(conn, true); err != nil {
		t.Fatal(err)
	}
	// A BLOB key always has a prefix part: without one the server refuses
	// it (so BLOB types need not be in keyTypes).
	if _, err := conn.Execute("CREATE TABLE ko.blob_whole (k BLOB PRIMARY KEY)"); err == nil || !strings.Contains(err.Error(), "1170") {
		t.Errorf("a BLOB key without a prefix: %v, want error 1170", err)
	}
	// MariaDB honours DESC in a key: the "desc" case's key is descending.
	res, err := conn.Execute("SELECT GROUP_CONCAT(COLLATION ORDER BY SEQ_IN_INDEX SEPARATOR '') FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'ko' AND TABLE_NAME = 'desc' AND INDEX_NAME = 'PRIMARY'")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := res.GetString(0, 0); got != "DAD" {
		t.Errorf("the desc key's parts are %q, want DAD", got)
	}
	dial := func(context.Context) (*client.Conn, error) { return client.Connect(srv.Addr(), "root", "", "") }
	for _, kc := range keyCases {
		t.Run(kc.name, func(t *testing.T) {
			ts, err := loadSchema(conn, "ko", kc.name, true)
			if err != nil {
				t.Fatal(err)
			}
			if got := chunkable(ts); got != kc.chunked {
				t.Fatalf("chunkable %v, want %v (%s)", got, kc.chunked, wholeReason(ts))
			}
			if !kc.chunked {
				r := &ChunkReader{Dial: dial, Flavor: "mariadb"}
				defer r.Close()
				n := 0
				ch, err := r.Read(context.Background(), ChunkRequest{DB: "ko", Table: kc.name, Rows: 1},
					func(*Chunk) error { return nil }, func(change.Row) error { n++; return nil })
				if err != nil || !ch.Whole || ch.Why == "" || ch.Lo != nil || ch.Hi != nil || n != len(kc.rows) {
					t.Fatalf("read as %+v (%d rows of %d), %v: want one whole chunk", ch, n, len(kc.rows), err)
				}
				if kc.unbytes != "" {
					res, err := conn.Execute("SELECT " + kc.unbytes + " FROM ko.`" + kc.name + "` ORDER BY k")
					if err != nil {
						t.Fatal(err)
					}
					sorted := true
					for i := 1; i < len(res.Values); i++ {
						sorted = sorted && string(res.Values[i-1][0].AsString()) < string(res.Values[i][0].AsString())
					}
					if sorted {
						t.Errorf("the server orders %s as its bytes: it could be read in key ranges", kc.name)
					}
				}
				return
			}
			checkKeyOrder(t, conn, ts, len(kc.rows), binlogKeys[kc.name], dial)
		})
	}
}

func checkKeyOrder(t *testing.T, conn *client.Conn, ts *tableSchema, nrows int, fromBinlog [][]change.Value, dial func(context.Context) (*client.Conn, error)) {
	t.Helper()
	tbl := ts.table
	// keys runs q and returns the key of each row it gives.
	var cv converter
	keys := func(q string) [][]change.Value {
		t.Helper()
		var out [][]change.Value
		err := selectText(conn, q, len(ts.cols), func(row []textCell) error {
			r, err := cv.convert(ts, row)
			if err != nil {
				return err
			}
			out = append(out, keyOf(tbl, r))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}
	show := func(k []change.Value) string {
		var s []string
		for _, v := range k {
			s = append(s, fmt.Sprintf("%s:%d:%q", v.Kind(), v.Uint(), v.Bytes()))
		}
		return "(" + strings.Join(s, " ") + ")"
	}
	same := func(what string, got, want [][]change.Value) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
		}
		for i := range got {
			if d, err := pipeline.CompareKeys(got[i], want[i]); err != nil || d != 0 {
				t.Fatalf("%s: row %d is %s, want %s (%v)", what, i, show(got[i]), show(want[i]), err)
			}
		}
	}

	q, err := selectSQL(ts, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := keys(q)
	if len(all) != nrows {
		t.Fatalf("%d rows read, %d inserted", len(all), nrows)
	}
	// The server's order is CompareKeys' order, strictly.
	for i := 1; i < len(all); i++ {
		if d, err := pipeline.CompareKeys(all[i-1], all[i]); err != nil || d != -1 {
			t.Errorf("the server orders %s before %s; CompareKeys says %d (%v)", show(all[i-1]), show(all[i]), d, err)
		}
	}
	// The binlog's keys of the rows (the stream's, which the coverage
	// compares with chunk bounds) are the same keys.
	if len(fromBinlog) != len(all) {
		t.Fatalf("%d rows in the binlog, %d in the table", len(fromBinlog), len(all))
	}
	for _, bk := range fromBinlog {
		found := 0
		for _, k := range all {
			if d, err := pipeline.CompareKeys(bk, k); err == nil && d == 0 {
				found++
			}
		}
		if found != 1 {
			t.Errorf("the binlog's key %s matches %d keys the snapshot read", show(bk), found)
		}
	}
	for i, after := range all {
		// Resuming after all[i]: the first SELECT of the resumed table.
		q, err := selectSQL(ts, after)
		if err != nil {
			t.Fatal(err)
		}
		same("after "+show(after), keys(q), all[i+1:])
		// A chunk's range (lo, hi]: the source's SELECT and a target's
		// range delete.
		for j := i; j < len(all); j++ {
			lo, err := sqltext.KeyRange(tbl, after, ">", false)
			if err != nil {
				t.Fatal(err)
			}
			hi, err := sqltext.KeyRange(tbl, all[j], "<", true)
			if err != nil {
				t.Fatal(err)
			}
			q, _ := selectSQL(ts, nil)
			q = strings.Replace(q, " ORDER BY ", " WHERE ("+lo+") AND ("+hi+") ORDER BY ", 1)
			same("range "+show(after)+" "+show(all[j]), keys(q), all[i+1:j+1])
		}
		hi, err := sqltext.KeyRange(tbl, after, "<", true)
		if err != nil {
			t.Fatal(err)
		}
		q, _ = selectSQL(ts, nil)
		same("up to "+show(after), keys(strings.Replace(q, " ORDER BY ", " WHERE "+hi+" ORDER BY ", 1)), all[:i+1])
	}
	// An incremental snapshot, chunk by chunk (1, 2 and 3 rows each).
	for size := 1; size <= 3; size++ {
		r := &ChunkReader{Dial: dial, Flavor: "mariadb"}
		var got [][]change.Value
		var after change.Row
		cov := pipeline.NewCoverage()
		for n := 0; ; n++ {
			if n > nrows+1 {
				t.Fatalf("chunks of %d: no end", size)
			}
			ch, err := r.Read(context.Background(), ChunkRequest{DB: tbl.DB, Table: tbl.Name, After: after, Rows: size},
				func(*Chunk) error { return nil }, func(row change.Row) error { got = append(got, keyOf(tbl, row)); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if ch.Whole {
				t.Fatal("read whole")
			}
			if err := addChunk(cov, ch); err != nil {
				t.Fatalf("chunks of %d: %v", size, err)
			}
			if ch.Hi == nil {
				break
			}
			after = ch.Hi
		}
		r.Close()
		same(fmt.Sprintf("chunks of %d", size), got, all)
	}
}

// readBinlogKeys decodes the binlog files and returns, by table, the key
// of each row inserted.
func readBinlogKeys(t *testing.T, files []string) map[string][][]change.Value {
	src, err := binlog.OpenFiles(files, change.Position{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ks := keySink{keys: map[string][][]change.Value{}}
	if err := pipeline.New(src, &ks, pipeline.Options{}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ks.keys
}

type keySink struct{ keys map[string][][]change.Value }

func (s *keySink) Write(_ context.Context, c *change.Change) error {
	if c.Op == change.Insert && c.Table.DB == "ko" {
		s.keys[c.Table.Name] = append(s.keys[c.Table.Name], keyOf(c.Table, c.After))
	}
	return nil
}
func (s *keySink) Commit(context.Context, change.TxEnd) error { return nil }
func (s *keySink) Rollback(context.Context) error             { return nil }
func (s *keySink) Close(context.Context) error                { return nil }
