package verify_test

import (
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/verify"
)

// differCase is a table that differs between the source and the target
// in a way an earlier verify called equal (or could): src and dst
// create and fill it on each side, want is a part of its report line.
type differCase struct {
	name, src, dst, want string
}

// differCases: every class of difference that must never be "equal".
var differCases = []differCase{
	// Bytes moving between neighbouring variable-length columns:
	// CHECKSUM TABLE hashes the bytes without their lengths.
	{"vc", "CREATE TABLE vc (id INT PRIMARY KEY, a VARCHAR(10), b VARCHAR(10)); INSERT INTO vc VALUES (1, 'ab', 'c')",
		"CREATE TABLE vc (id INT PRIMARY KEY, a VARCHAR(10), b VARCHAR(10)); INSERT INTO vc VALUES (1, 'a', 'bc')", "changed `id`=1"},
	{"txt", "CREATE TABLE txt (id INT PRIMARY KEY, a TEXT, b BLOB); INSERT INTO txt VALUES (1, 'ab', 'c')",
		"CREATE TABLE txt (id INT PRIMARY KEY, a TEXT, b BLOB); INSERT INTO txt VALUES (1, 'a', 'bc')", "changed `id`=1"},
	{"vb", "CREATE TABLE vb (id INT PRIMARY KEY, a VARBINARY(10), b VARCHAR(10)); INSERT INTO vb VALUES (1, 'ab', ''), (2, 'x', NULL)",
		"CREATE TABLE vb (id INT PRIMARY KEY, a VARBINARY(10), b VARCHAR(10)); INSERT INTO vb VALUES (1, 'a', 'b'), (2, 'x', '')", "2 changed"},
	{"nokeyvc", "CREATE TABLE nokeyvc (a VARCHAR(10), b TEXT); INSERT INTO nokeyvc VALUES ('ab', 'c'), ('ab', 'c')",
		"CREATE TABLE nokeyvc (a VARCHAR(10), b TEXT); INSERT INTO nokeyvc VALUES ('a', 'bc'), ('a', 'bc')", "missing ('ab', 'c')"},
	{"keyvc", "CREATE TABLE keyvc (a VARCHAR(10), b VARCHAR(10), PRIMARY KEY (a, b)); INSERT INTO keyvc VALUES ('ab', 'c')",
		"CREATE TABLE keyvc (a VARCHAR(10), b VARCHAR(10), PRIMARY KEY (a, b)); INSERT INTO keyvc VALUES ('a', 'bc')", "extra   `a`='a', `b`='bc'"},
	// The same text, another stored value.
	{"sets", "CREATE TABLE sets (id INT PRIMARY KEY, s SET('', 'x')); INSERT INTO sets VALUES (1, 1)",
		"CREATE TABLE sets (id INT PRIMARY KEY, s SET('', 'x')); INSERT INTO sets VALUES (1, 0)", "changed `id`=1"},
	{"enums", "CREATE TABLE enums (id INT PRIMARY KEY, e ENUM('', 'a')); INSERT INTO enums VALUES (1, '')",
		"CREATE TABLE enums (id INT PRIMARY KEY, e ENUM('', 'a')); SET SESSION sql_mode = ''; INSERT INTO enums VALUES (1, 'bogus')", "changed `id`=1"},
	{"enumkey", "CREATE TABLE enumkey (e ENUM('', 'a'), v INT); INSERT INTO enumkey VALUES ('', 1)",
		"CREATE TABLE enumkey (e ENUM('', 'a'), v INT); SET SESSION sql_mode = ''; INSERT INTO enumkey VALUES ('bogus', 1)", "missing (''#1, 1)\n  extra   (''#0, 1)"},
	{"cicase", "CREATE TABLE cicase (id INT PRIMARY KEY, s VARCHAR(10) COLLATE utf8mb4_general_ci); INSERT INTO cicase VALUES (1, 'a')",
		"CREATE TABLE cicase (id INT PRIMARY KEY, s VARCHAR(10) COLLATE utf8mb4_general_ci); INSERT INTO cicase VALUES (1, 'A')", "changed `id`=1"},
	{"trail", "CREATE TABLE trail (id INT PRIMARY KEY, s VARCHAR(10), b VARBINARY(4)); INSERT INTO trail VALUES (1, 'a', 'a')",
		"CREATE TABLE trail (id INT PRIMARY KEY, s VARCHAR(10), b VARBINARY(4)); INSERT INTO trail VALUES (1, 'a ', 'a\\0')", "changed `id`=1"},
	{"nulls", "CREATE TABLE nulls (id INT PRIMARY KEY, s VARCHAR(10), t TEXT); INSERT INTO nulls VALUES (1, NULL, ''), (2, 'NULL', 'N')",
		"CREATE TABLE nulls (id INT PRIMARY KEY, s VARCHAR(10), t TEXT); INSERT INTO nulls VALUES (1, '', NULL), (2, NULL, NULL)", "2 changed"},
	{"json", `CREATE TABLE json (id INT PRIMARY KEY, j JSON); INSERT INTO json VALUES (1, '{"a":1}')`,
		`CREATE TABLE json (id INT PRIMARY KEY, j JSON); INSERT INTO json VALUES (1, '{"a": 1}')`, "changed `id`=1"},
	{"decs", "CREATE TABLE decs (id INT PRIMARY KEY, d DECIMAL(20,10), f FLOAT, b BIT(12)); INSERT INTO decs VALUES (1, 0.0000000001, 1.0000001, b'100000000001')",
		"CREATE TABLE decs (id INT PRIMARY KEY, d DECIMAL(20,10), f FLOAT, b BIT(12)); INSERT INTO decs VALUES (1, 0.0000000001, 1.0000002, b'100000000001')", "changed `id`=1"},
	{"ts", "CREATE TABLE ts (id INT PRIMARY KEY, t TIMESTAMP(6) NULL); SET time_zone = '+00:00'; INSERT INTO ts VALUES (1, '2024-03-31 01:30:00')",
		"CREATE TABLE ts (id INT PRIMARY KEY, t TIMESTAMP(6) NULL); SET time_zone = '+01:00'; INSERT INTO ts VALUES (1, '2024-03-31 01:30:00')", "changed `id`=1"},
	// Definitions.
	{"gexpr", "CREATE TABLE gexpr (id INT PRIMARY KEY, g INT AS (id + 1) VIRTUAL); INSERT INTO gexpr (id) VALUES (1)",
		"CREATE TABLE gexpr (id INT PRIMARY KEY, g INT AS (id + 2) VIRTUAL); INSERT INTO gexpr (id) VALUES (1)",
		"column `g`: source `g` int GENERATED ALWAYS AS (`id` + 1) VIRTUAL NULL; target `g` int GENERATED ALWAYS AS (`id` + 2) VIRTUAL NULL"},
	{"gplain", "CREATE TABLE gplain (id INT PRIMARY KEY, g INT AS (id + 1) VIRTUAL); INSERT INTO gplain (id) VALUES (1)",
		"CREATE TABLE gplain (id INT PRIMARY KEY, g INT); INSERT INTO gplain VALUES (1, 2)",
		"column `g`: source `g` int GENERATED ALWAYS AS (`id` + 1) VIRTUAL NULL; target `g` int NULL DEFAULT NULL"},
	{"gstored", "CREATE TABLE gstored (id INT PRIMARY KEY, g INT AS (id + 1) VIRTUAL); INSERT INTO gstored (id) VALUES (1)",
		"CREATE TABLE gstored (id INT PRIMARY KEY, g INT AS (id + 1) STORED); INSERT INTO gstored (id) VALUES (1)", "STORED"},
	{"corder", "CREATE TABLE corder (id INT PRIMARY KEY, a INT, b INT); INSERT INTO corder VALUES (1, 5, 6)",
		"CREATE TABLE corder (id INT PRIMARY KEY, b INT, a INT); INSERT INTO corder VALUES (1, 6, 5)", "column order: source (`id`,`a`,`b`), target (`id`,`b`,`a`)"},
	{"cset", "CREATE TABLE cset (id INT PRIMARY KEY, s VARCHAR(10) CHARACTER SET latin1); INSERT INTO cset VALUES (1, 'x')",
		"CREATE TABLE cset (id INT PRIMARY KEY, s VARCHAR(10) CHARACTER SET utf8mb4); INSERT INTO cset VALUES (1, 'x')",
		"column `s`: source `s` varchar(10) CHARACTER SET latin1 COLLATE latin1_swedish_ci NULL DEFAULT NULL; target `s` varchar(10) CHARACTER SET utf8mb4"},
	{"coll", "CREATE TABLE coll (id INT PRIMARY KEY, s VARCHAR(10) COLLATE utf8mb4_bin); INSERT INTO coll VALUES (1, 'x')",
		"CREATE TABLE coll (id INT PRIMARY KEY, s VARCHAR(10) COLLATE utf8mb4_general_ci); INSERT INTO coll VALUES (1, 'x')", "COLLATE utf8mb4_bin"},
	{"defv", "CREATE TABLE defv (id INT PRIMARY KEY, v INT DEFAULT 1); INSERT INTO defv VALUES (1, 1)",
		"CREATE TABLE defv (id INT PRIMARY KEY, v INT DEFAULT 2); INSERT INTO defv VALUES (1, 1)", "source `v` int NULL DEFAULT 1; target `v` int NULL DEFAULT 2"},
	{"invis", "CREATE TABLE invis (id INT PRIMARY KEY, v INT INVISIBLE); INSERT INTO invis (id, v) VALUES (1, 1)",
		"CREATE TABLE invis (id INT PRIMARY KEY, v INT); INSERT INTO invis (id, v) VALUES (1, 1)", "source `v` int NULL DEFAULT NULL INVISIBLE; target `v` int NULL DEFAULT NULL"},
	{"invisval", "CREATE TABLE invisval (id INT PRIMARY KEY, v INT INVISIBLE); INSERT INTO invisval (id, v) VALUES (1, 1)",
		"CREATE TABLE invisval (id INT PRIMARY KEY, v INT INVISIBLE); INSERT INTO invisval (id, v) VALUES (1, 2)", "changed `id`=1"},
	{"nulldef", "CREATE TABLE nulldef (id INT PRIMARY KEY, v INT NOT NULL); INSERT INTO nulldef VALUES (1, 1)",
		"CREATE TABLE nulldef (id INT PRIMARY KEY, v INT NULL); INSERT INTO nulldef VALUES (1, 1)", "source `v` int NOT NULL; target `v` int NULL"},
	{"ukey", "CREATE TABLE ukey (id INT PRIMARY KEY, v INT, UNIQUE KEY (v)); INSERT INTO ukey VALUES (1, 1)",
		"CREATE TABLE ukey (id INT PRIMARY KEY, v INT, KEY (v)); INSERT INTO ukey VALUES (1, 1)", "key on the source only: UNIQUE KEY (`v`)"},
	{"pkey", "CREATE TABLE pkey (a INT, b INT, PRIMARY KEY (a, b)); INSERT INTO pkey VALUES (1, 1)",
		"CREATE TABLE pkey (a INT, b INT, PRIMARY KEY (b, a)); INSERT INTO pkey VALUES (1, 1)", "key on the source only: PRIMARY KEY (`a`,`b`)"},
	{"onupd", "CREATE TABLE onupd (id INT PRIMARY KEY, t TIMESTAMP NULL DEFAULT NULL ON UPDATE CURRENT_TIMESTAMP); INSERT INTO onupd VALUES (1, NULL)",
		"CREATE TABLE onupd (id INT PRIMARY KEY, t TIMESTAMP NULL DEFAULT NULL); INSERT INTO onupd VALUES (1, NULL)", "ON UPDATE CURRENT_TIMESTAMP()"},
}

// sameCases differ in nothing that changes data: equal, but differing
// with StrictSchema.
var sameCases = []differCase{
	{"engine", "CREATE TABLE engine (id INT PRIMARY KEY, v INT) ENGINE=InnoDB; INSERT INTO engine VALUES (1, 1)",
		"CREATE TABLE engine (id INT PRIMARY KEY, v INT) ENGINE=Aria; INSERT INTO engine VALUES (1, 1)", `table ENGINE: source "InnoDB", target "Aria"`},
	{"width", "CREATE TABLE width (id INT(5) PRIMARY KEY, v INT COMMENT 'x') COMMENT 'a' AUTO_INCREMENT=7; INSERT INTO width VALUES (1, 1)",
		"CREATE TABLE width (id INT(11) PRIMARY KEY, v INT, KEY k (v)) COMMENT 'b'; INSERT INTO width VALUES (1, 1)", "column `id`: type source int(5), target int(11)"},
}

// TestVerifyNeverCallsDifferentTablesEqual: every table of differCases
// differs, with its difference named; the tables of sameCases are
// equal and differ only with StrictSchema.
func TestVerifyNeverCallsDifferentTablesEqual(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE c")
	dst.Exec(t, "CREATE DATABASE c")
	for _, c := range append(append([]differCase(nil), differCases...), sameCases...) {
		for _, x := range []struct {
			s   *testserver.Server
			sql string
		}{{src, c.src}, {dst, c.dst}} {
			x.s.Exec(t, append([]string{"USE c", "SET SESSION sql_mode = DEFAULT", "SET SESSION time_zone = DEFAULT"}, strings.Split(x.sql, "; ")...)...)
		}
	}
	rep, out := run(t, src, dst, verify.Options{})
	t.Logf("\n%s", out)
	for _, c := range differCases {
		block := tableBlock(out, c.name)
		if !strings.HasPrefix(block, "DIFFERS") || !strings.Contains(block, c.want) {
			t.Errorf("%s: want a difference with %q, got:\n%s", c.name, c.want, block)
		}
	}
	for _, c := range sameCases {
		block := tableBlock(out, c.name)
		if !strings.HasPrefix(block, "ok") || !strings.Contains(block, c.want) {
			t.Errorf("%s: want equal, naming %q, got:\n%s", c.name, c.want, block)
		}
	}
	if len(rep.Differing()) != len(differCases) {
		t.Errorf("%d tables differ, want %d", len(rep.Differing()), len(differCases))
	}
	rep, out = run(t, src, dst, verify.Options{StrictSchema: true})
	for _, c := range sameCases {
		if block := tableBlock(out, c.name); !strings.HasPrefix(block, "DIFFERS") || !strings.Contains(block, c.want) {
			t.Errorf("%s with StrictSchema: want a difference with %q, got:\n%s", c.name, c.want, block)
		}
	}
	if len(rep.Differing()) != len(differCases)+len(sameCases) {
		t.Errorf("StrictSchema: %d tables differ, want %d", len(rep.Differing()), len(differCases)+len(sameCases))
	}
}

// tableBlock is the report's line of table c.name and the row lines
// under it.
func tableBlock(out, name string) string {
	i := strings.Index(out, "`c`.`"+name+"`")
	if i < 0 {
		return ""
	}
	i = strings.LastIndex(out[:i], "\n") + 1
	j := i + strings.Index(out[i:], "\n") + 1
	for strings.HasPrefix(out[j:], "  ") {
		j += strings.Index(out[j:], "\n") + 1
	}
	return out[i:j]
}
