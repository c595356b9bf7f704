package e2e

// The ENUM error value (issue 10, item 5): index 0, which a non-strict
// server stores for a value the ENUM lacks, stays apart from a member ''
// in JSON (the number 0), in Kafka keys, in replay (--to, --format sql)
// and in recover.

import (
	"sort"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
)

// eeIndexes shows every ENUM by its index and bytes, and the checksums:
// SELECT * shows the error value and a member ” alike.
func eeIndexes(t *testing.T, srv *testserver.Server) string {
	return strings.Join([]string{
		rpRows(t, srv, "SELECT id, c+0, HEX(c), d+0, k FROM ee.e ORDER BY id"),
		rpRows(t, srv, "SELECT c+0, v FROM ee.n ORDER BY c+0, v"),
		rpRows(t, srv, "SELECT e+0, v FROM ee.ek ORDER BY e+0"),
		rpRows(t, srv, "CHECKSUM TABLE ee.e, ee.n, ee.ek"),
	}, "\n")
}

func TestEnumErrorValue(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t,
		"CREATE DATABASE ee", "USE ee",
		"CREATE TABLE e (id INT PRIMARY KEY, c ENUM('', 'x'), d ENUM('a', 'b') NOT NULL, k INT)",
		"CREATE TABLE n (c ENUM('', 'x'), v INT)", // no primary key: rows are found by all their values
		"CREATE TABLE ek (e ENUM('', 'x') PRIMARY KEY, v INT)",
		"SET SESSION sql_mode = ''",
		// 'bad' is no member: the error value (index 0), with a warning.
		"INSERT INTO e VALUES (1, 'bad', 'bad', 1), (2, '', 'a', 2), (3, 'x', 'b', 3), (4, 'bad', 'a', 4)",
		"INSERT INTO e VALUES (5, '', 'zz', 5), (6, 'bad', 'a', 1000)",
		"UPDATE e SET c = '' WHERE id = 1",   // error value → member ''
		"UPDATE e SET c = 'no' WHERE id = 3", // member → error value
		"UPDATE e SET k = 40 WHERE id = 4",   // the error value stays
		"DELETE FROM e WHERE id = 5",
		"INSERT INTO n VALUES ('bad', 1), ('', 1), ('x', 1), ('bad', 2)",
		"DELETE FROM n WHERE c = 0 AND v = 1 LIMIT 1", // the error value's row; the member ''s stays
		"UPDATE n SET v = 3 WHERE c + 0 = 1",          // the member ''s row
		"INSERT INTO ek VALUES ('bad', 1), ('', 2), ('x', 3)",
		"UPDATE ek SET v = 10 WHERE e + 0 = 0",
		"SET SESSION sql_mode = DEFAULT",
	)
	want := eeIndexes(t, src)
	if !strings.Contains(want, `"1","0","","0","1"`) && !strings.Contains(want, `"4","0","","1","40"`) {
		t.Fatalf("the source does not hold the error values it should:\n%s", want)
	}
	index := src.BinlogIndex()

	t.Run("json", func(t *testing.T) {
		out, _ := rpRun(t, 0, "read", index, "--tables", "ee.e")
		for _, w := range []string{
			`"after":{"id":1,"c":0,"d":0,"k":1}`,
			`"after":{"id":2,"c":"","d":"a","k":2}`,
			`"before":{"id":1,"c":0,"d":0,"k":1},"after":{"id":1,"c":"","d":0,"k":1}`,
			`"before":{"id":3,"c":"x","d":"b","k":3},"after":{"id":3,"c":0,"d":"b","k":3}`,
		} {
			if !strings.Contains(string(out), w) {
				t.Errorf("no %s in:\n%s", w, out)
			}
		}
	})

	for _, mode := range []string{"to", "sql"} {
		t.Run(mode, func(t *testing.T) {
			dst := testserver.Start(t, testserver.Options{})
			if mode == "to" {
				rpRun(t, 0, "read", index, "--to", dst.DSN()+"/")
			} else {
				sql, _ := rpRun(t, 0, "read", index, "--format", "sql")
				rpMysql(t, dst, sql)
			}
			if got := eeIndexes(t, dst); got != want {
				t.Errorf("target after %s:\n%s\nwant (source):\n%s", mode, got, want)
			}
			rpCompare(t, src, dst, mode)
		})
	}

	t.Run("target-differs", func(t *testing.T) {
		// Without strict mode the target would also clip k = 1000 into
		// its TINYINT: the extra warning stops the replay.
		dst := testserver.Start(t, testserver.Options{})
		dst.Exec(t, "CREATE DATABASE ee", "CREATE TABLE ee.e (id INT PRIMARY KEY, c ENUM('', 'x'), d ENUM('a', 'b') NOT NULL, k TINYINT)")
		_, errOut := rpRun(t, 1, "read", index, "--tables", "ee.e", "--ddl=skip", "--to", dst.DSN()+"/")
		if !strings.Contains(errOut, "the target gave 2 warnings") {
			t.Errorf("want an error about the extra warning:\n%s", errOut)
		}
		if got := rpRows(t, dst, "SELECT COUNT(*) FROM ee.e WHERE id = 6"); got != `"0"` {
			t.Errorf("row 6 was written: %s", got)
		}
	})

	t.Run("kafka-keys", func(t *testing.T) {
		brokers := kafkatest.Cluster(t)
		prefix := kafkatest.Prefix(t)
		rpRun(t, 0, "read", index, "--tables", "ee.ek", "--to", "kafka://"+strings.Join(brokers, ","), "--kafka-topic-prefix", prefix)
		var keys []string
		for _, r := range kafkatest.Consume(t, brokers, []string{prefix + ".ee.ek"}, false) {
			keys = append(keys, string(r.Key))
		}
		sort.Strings(keys) // partitions come one after the other
		if got := strings.Join(keys, " "); got != `[""] ["x"] [0] [0]` {
			t.Errorf("keys %s, want [\"\"] [\"x\"] [0] [0]", got)
		}
	})

	t.Run("recover", func(t *testing.T) {
		// An ALTER that drops a member under a non-strict sql_mode makes
		// error values too.
		src.Exec(t, "SET SESSION sql_mode = ''", "CREATE TABLE ee.r (id INT PRIMARY KEY, c ENUM('', 'x', 'y'))",
			"INSERT INTO ee.r VALUES (1, ''), (2, 'x'), (3, 'y'), (4, 'nope')",
			"ALTER TABLE ee.r MODIFY c ENUM('', 'x')", "SET SESSION sql_mode = DEFAULT")
		wantR := rpRows(t, src, "SELECT id, c+0, HEX(c) FROM ee.r ORDER BY id") + "\n" + rpRows(t, src, "CHECKSUM TABLE ee.r")
		src.Exec(t, "DROP TABLE ee.r")
		dst := testserver.Start(t, testserver.Options{})
		sql, _ := recoverCLI(t, 0, "--table", "ee.r", index)
		recLoadSQL(t, dst, sql)
		if got := rpRows(t, dst, "SELECT id, c+0, HEX(c) FROM ee.r ORDER BY id") + "\n" + rpRows(t, dst, "CHECKSUM TABLE ee.r"); got != wantR {
			t.Errorf("recovered:\n%s\nwant:\n%s", got, wantR)
		}
	})
}
