package verify_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/verify"
)

// schema: tables of every shape verify handles: an integer key (bisected),
// a composite and a text key, a UUID key, no key (with duplicate rows), a
// system-versioned table, and values whose text is easy to get wrong.
var schema = []string{
	"CREATE DATABASE v", "USE v",
	`CREATE TABLE ints (id BIGINT PRIMARY KEY, d DECIMAL(65,38), f FLOAT, g DOUBLE, t DATETIME(6), ts TIMESTAMP(3) NULL,
		s VARCHAR(20) CHARACTER SET latin1, b VARBINARY(10), e ENUM('a','b'), bits BIT(9), y YEAR, j JSON, tm TIME(2))`,
	`CREATE TABLE comp (a VARCHAR(10) NOT NULL, b INT NOT NULL, v TEXT, PRIMARY KEY (a, b))`,
	`CREATE TABLE uu (u UUID PRIMARY KEY, v INT)`,
	`CREATE TABLE nokey (a INT, b VARCHAR(10))`,
	`CREATE TABLE hist (id INT PRIMARY KEY, v INT) WITH SYSTEM VERSIONING`,
	`CREATE TABLE neg (id INT PRIMARY KEY, v INT)`,
	`CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB, t LONGTEXT)`,
	`CREATE TABLE bigkeyless (b LONGBLOB, t LONGTEXT)`,
	`CREATE TABLE hist2 (id INT, v INT, s TIMESTAMP(6) GENERATED ALWAYS AS ROW START INVISIBLE,
		e TIMESTAMP(6) GENERATED ALWAYS AS ROW END INVISIBLE, PERIOD FOR SYSTEM_TIME(s, e)) WITH SYSTEM VERSIONING`,
}

var data = []string{
	`INSERT INTO ints SELECT seq, seq / 7, seq / 3, seq / 11, '2024-01-01' + INTERVAL seq SECOND, '2024-01-01 00:00:00.5',
		CONCAT('é', seq), UNHEX(HEX(seq)), IF(seq % 2, 'a', 'b'), seq % 512, 1901 + seq % 200, JSON_OBJECT('k', seq), '-01:02:03.5'
		FROM seq_1_to_3000`,
	`INSERT INTO ints VALUES (-9223372036854775808, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
		(9223372036854775807, -0.00000000000000000000000000000000000001, 1e-30, -1e300, '0000-00-00', NULL, '', '', 'a', 0, 0, '[]', '838:59:59')`,
	`INSERT INTO comp SELECT CONCAT('k', seq % 50), seq, REPEAT('x', seq % 13) FROM seq_1_to_700`,
	`INSERT INTO uu SELECT UUID(), seq FROM seq_1_to_200`,
	`INSERT INTO nokey SELECT seq % 10, IF(seq % 3, 'x', NULL) FROM seq_1_to_100`,
	`INSERT INTO hist SELECT seq, seq FROM seq_1_to_20`,
	`UPDATE hist SET v = v + 100 WHERE id <= 5`,
	`DELETE FROM hist WHERE id = 20`,
	`INSERT INTO neg SELECT -seq, seq FROM seq_1_to_50`,
	`INSERT INTO hist2 SELECT seq % 5, seq FROM seq_1_to_10`,
	// Values whose HEX() would pass max_allowed_packet (2M here).
	`INSERT INTO big VALUES (1, REPEAT('ab', 600000), REPEAT('é', 600000)), (2, REPEAT('ab', 600000), REPEAT('é', 600000))`,
	`INSERT INTO bigkeyless SELECT b, t FROM big`,
	`UPDATE hist2 SET v = v * 2 WHERE id = 1`,
	`UPDATE ints SET f = 1.0000001, t = '2024-01-01 00:00:00.5', tm = '-00:00:00.25' WHERE id IN (17, 19)`,
}

// pair starts two servers holding the same tables and rows (the UUIDs and
// the history's timestamps copied from the first).
func pair(t *testing.T) (src, dst *testserver.Server) {
	// A small max_allowed_packet: big's values fit, their HEX
	// would not.
	opts := testserver.Options{ExtraArgs: []string{"--max-allowed-packet=2M"}}
	src = testserver.Start(t, opts)
	dst = testserver.Start(t, opts)
	src.Exec(t, schema...)
	src.Exec(t, data...)
	dst.Exec(t, schema...)
	dst.Exec(t, data...)
	// Same UUIDs and history on both: copy them as literals.
	dst.Exec(t, "DELETE FROM uu", "SET SESSION system_versioning_insert_history = ON", "SET SESSION time_zone = '+00:00'", "DROP TABLE hist",
		"CREATE TABLE hist (id INT PRIMARY KEY, v INT) WITH SYSTEM VERSIONING", "DROP TABLE hist2", schema[len(schema)-1])
	var vals []string
	for _, r := range src.QueryStrings(t, "SELECT u, v FROM uu") {
		vals = append(vals, fmt.Sprintf("('%s', %s)", *r[0], *r[1]))
	}
	dst.Exec(t, "INSERT INTO uu VALUES "+strings.Join(vals, ","))
	vals = nil
	src.Exec(t, "SET SESSION time_zone = '+00:00'")
	for _, r := range src.QueryStrings(t, "SELECT id, v, row_start, row_end FROM hist FOR SYSTEM_TIME ALL") {
		vals = append(vals, fmt.Sprintf("(%s, %s, '%s', '%s')", *r[0], *r[1], *r[2], *r[3]))
	}
	dst.Exec(t, "INSERT INTO hist (id, v, row_start, row_end) VALUES "+strings.Join(vals, ","))
	vals = nil
	for _, r := range src.QueryStrings(t, "SELECT id, v, s, e FROM hist2 FOR SYSTEM_TIME ALL") {
		vals = append(vals, fmt.Sprintf("(%s, %s, '%s', '%s')", *r[0], *r[1], *r[2], *r[3]))
	}
	dst.Exec(t, "INSERT INTO hist2 (id, v, s, e) VALUES "+strings.Join(vals, ","))
	return src, dst
}

func run(t *testing.T, src, dst *testserver.Server, opts verify.Options) (*verify.Report, string) {
	t.Helper()
	rep, err := verify.Run(context.Background(), src.Conn(t), dst.Conn(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.Write(&b)
	return rep, b.String()
}

func TestVerify(t *testing.T) {
	src, dst := pair(t)
	src.Exec(t, "CREATE DATABASE binlogcdc", "CREATE TABLE binlogcdc.checkpoint (replica VARCHAR(10) PRIMARY KEY)",
		"INSERT INTO binlogcdc.checkpoint VALUES ('skipped')")

	rep, out := run(t, src, dst, verify.Options{})
	if len(rep.Differing()) != 0 || len(rep.Tables) != 9 {
		t.Fatalf("equal servers:\n%s", out)
	}
	if !strings.Contains(out, "ok      `v`.`hist` (with history): 25 rows equal") {
		t.Errorf("the history was not compared:\n%s", out)
	}
	t.Logf("equal:\n%s", out)
	if !strings.Contains(out, "ok      `v`.`nokey`: 100 rows equal (SHA-256 of every row; no primary key: compared as a multiset of rows)") {
		t.Errorf("the table without a key is not said to be one")
	}
	if strings.Count(out, "(SHA-256 of every row") != 9 {
		t.Fatalf("equal servers, not every table proven by its rows:\n%s", out)
	}

	// A changed, a missing and an extra row in each kind of table.
	dst.Exec(t, "USE v",
		"UPDATE ints SET d = d + 0.00000000000000000000000000000000000001 WHERE id = 1234",
		"DELETE FROM ints WHERE id = 2999",
		"INSERT INTO ints (id) VALUES (5000)",
		"UPDATE ints SET f = 1.0000002 WHERE id = 17",
		"UPDATE ints SET s = CONCAT(s, ' ') WHERE id = 18",
		"UPDATE ints SET t = '2024-01-01 00:00:00.500001', tm = '-00:00:00.250001' WHERE id = 19",
		"UPDATE comp SET v = 'changed' WHERE a = 'k7' AND b = 7",
		"DELETE FROM comp WHERE a = 'k8' AND b = 8",
		"INSERT INTO comp VALUES ('zz', 1, NULL)",
		"UPDATE uu SET v = -1 WHERE v = 100",
		"DELETE FROM nokey WHERE a = 3 AND b IS NULL LIMIT 1",
		"INSERT INTO nokey VALUES (77, 'extra')",
		"UPDATE hist SET v = 0 WHERE id = 1",
		"UPDATE neg SET v = 0 WHERE id = -25",
		"DELETE FROM hist2 WHERE id = 2 AND v = 7",
		"UPDATE big SET b = INSERT(b, 600000, 1, 'x') WHERE id = 1",
		"UPDATE big SET t = INSERT(t, 500000, 1, 'e') WHERE id = 2",
		"UPDATE bigkeyless SET t = CONCAT(t, 'x') LIMIT 1")
	rep, out = run(t, src, dst, verify.Options{})
	t.Logf("differing:\n%s", out)
	want := map[string][]string{
		"ints":  {"changed `id`=1234", "missing `id`=2999", "extra   `id`=5000", "changed `id`=17", "changed `id`=18", "changed `id`=19"},
		"comp":  {"changed `a`='k7', `b`=7", "missing `a`='k8', `b`=8", "extra   `a`='zz', `b`=1"},
		"uu":    {"changed `u`="},
		"nokey": {"missing (3, NULL)", "extra   (77, 'extra')"},
		"hist":  {"changed `id`=1, `row_end`=", "extra   `id`=1, `row_end`="},
		"neg":   {"changed `id`=-25"},
		"hist2": {"missing (2, 7, '", "extra   (2, 7, '"},
		"big":   {"changed `id`=1", "changed `id`=2"},
		"bigkeyless": {"missing (0x6162616261626162616261626162616261626162616261626162616261626162…, 'éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé'…)",
			"extra   (0x6162616261626162616261626162616261626162616261626162616261626162…, 'éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé'…)"},
	}
	if len(rep.Differing()) != len(want) {
		t.Errorf("%d tables differ, want %d", len(rep.Differing()), len(want))
	}
	for table, lines := range want {
		for _, l := range lines {
			if !strings.Contains(out, "  "+l) {
				t.Errorf("%s: no line %q", table, l)
			}
		}
	}
	if !strings.Contains(out, "9 of 9 tables differ") {
		t.Errorf("no total line")
	}
}

func TestVerifySchemaAndTables(t *testing.T) {
	src, dst := pair(t)
	dst.Exec(t, "USE v", "ALTER TABLE neg MODIFY v BIGINT, ADD COLUMN w INT", "DROP TABLE nokey", "CREATE TABLE v.more (id INT PRIMARY KEY)",
		"ALTER TABLE comp DROP COLUMN v")
	// A UUID column rebuilt as BINARY(16) holding the same bytes: the
	// column is reported, the rows agree.
	src.Exec(t, "CREATE TABLE v.bin (id INT PRIMARY KEY, u UUID)", "INSERT INTO v.bin SELECT seq, UUID() FROM seq_1_to_30")
	dst.Exec(t, "CREATE TABLE v.bin (id INT PRIMARY KEY, u BINARY(16))")
	for _, r := range src.QueryStrings(t, "SELECT id, HEX(u) FROM v.bin") {
		dst.Exec(t, "INSERT INTO v.bin VALUES ("+*r[0]+", X'"+*r[1]+"')")
	}
	rep, out := run(t, src, dst, verify.Options{Select: func(db, table string) bool { return table != "ints" }})
	t.Logf("\n%s", out)
	for _, w := range []string{
		"`v`.`neg`: column `v`: source `v` int NULL DEFAULT NULL; target `v` bigint NULL DEFAULT NULL; column `w` is extra on the target (target: `w` int NULL DEFAULT NULL);",
		"`v`.`nokey`: missing on the target (or the --to user has no privilege on it); 100 rows on the source\n",
		"`v`.`more`: extra on the target: the source has no such table (or the --source user has no privilege on it); 0 rows on the target\n",
		"`v`.`comp`: column `v` is missing on the target (source: `v` text CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NULL DEFAULT NULL)",
		"DIFFERS `v`.`bin`: column `u`: source `u` uuid NULL DEFAULT NULL; target `u` binary(16) NULL DEFAULT NULL; 30 rows on the source, 30 on the target\n",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q", w)
		}
	}
	for _, tb := range rep.Tables {
		if tb.Name == "ints" {
			t.Errorf("ints was compared despite Select")
		}
	}
}

// TestVerifyManyTables: many small tables and a few differences, the
// names only.
func TestVerifyManyTables(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	for _, s := range []*testserver.Server{src, dst} {
		s.Exec(t, "CREATE DATABASE m", "USE m")
		for i := 0; i < 60; i++ {
			s.Exec(t, fmt.Sprintf("CREATE TABLE t%d (id INT PRIMARY KEY, v VARCHAR(10))", i),
				fmt.Sprintf("INSERT INTO t%d SELECT seq, CONCAT('v', seq) FROM seq_1_to_%d", i, 1+i*7))
		}
	}
	rep, out := run(t, src, dst, verify.Options{})
	if len(rep.Differing()) != 0 || len(rep.Tables) != 60 {
		t.Fatalf("\n%s", out)
	}
	dst.Exec(t, "DELETE FROM m.t13 WHERE id = 50", "UPDATE m.t59 SET v = 'x' WHERE id = 400")
	rep, out = run(t, src, dst, verify.Options{})
	if len(rep.Differing()) != 2 || !strings.Contains(out, "  missing `id`=50") || !strings.Contains(out, "  changed `id`=400") {
		t.Errorf("\n%s", out)
	}
	// A target that lost everything: the rows are named up to MaxRows.
	dst.Exec(t, "DELETE FROM m.t40")
	rep, out = run(t, src, dst, verify.Options{MaxRows: 10, Leaf: 16})
	for _, tb := range rep.Tables {
		if tb.Name == "t40" && (len(tb.Rows) != 10 || !tb.Truncated || tb.Rows[0].Row != "`id`=1") {
			t.Errorf("t40: %+v\n%s", tb, out)
		}
	}
}
