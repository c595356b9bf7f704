package tablemap_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// TestCreateTableMariaDB creates tables with every MariaDB column type,
// decodes their TABLE_MAPs from the binlog, runs the CREATE TABLE that
// CreateTable builds on a fresh server and compares the columns the two
// servers report (information_schema: type, nullability, charset,
// collation) and the primary keys. Defaults, secondary indexes and
// integer display widths are not compared: the binlog does not carry them.
func TestCreateTableMariaDB(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})

	tables := map[string]string{
		"nums": `(
			id INT NOT NULL PRIMARY KEY,
			ti TINYINT, si SMALLINT NOT NULL DEFAULT 3, mi MEDIUMINT, i INT, bi BIGINT,
			tiu TINYINT UNSIGNED, siu SMALLINT UNSIGNED, miu MEDIUMINT UNSIGNED, iu INT UNSIGNED NOT NULL, biu BIGINT UNSIGNED,
			d1 DECIMAL(10,2), d2 DECIMAL(65,30) NOT NULL DEFAULT 0, d3 DECIMAL(5,0) UNSIGNED, d4 DECIMAL(1,1),
			d5 DECIMAL(65,38), d6 DECIMAL(38,38) UNSIGNED, d7 DECIMAL(39,31), d8 DECIMAL(65,0),
			f FLOAT, dbl DOUBLE NOT NULL DEFAULT 0, b1 BIT(1), b9 BIT(9), b64 BIT(64) NOT NULL DEFAULT 0,
			y YEAR, boo BOOLEAN)`,
		"temporal": `(
			id INT NOT NULL, d DATE, t TIME, t3 TIME(3) NOT NULL DEFAULT '00:00:00', dt DATETIME, dt6 DATETIME(6),
			ts TIMESTAMP NULL, ts2 TIMESTAMP(2) NOT NULL DEFAULT CURRENT_TIMESTAMP(2), PRIMARY KEY (id))`,
		"strs": `(
			a VARCHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,
			b INT NOT NULL,
			c1 CHAR(10) CHARACTER SET latin1, c2 CHAR(255) CHARACTER SET utf8mb4 NOT NULL DEFAULT '',
			c3 CHAR(100) CHARACTER SET utf8mb3 COLLATE utf8mb3_bin,
			v1 VARCHAR(300) CHARACTER SET utf8mb4, v2 VARCHAR(10) CHARACTER SET utf8mb3, v3 VARCHAR(50) CHARACTER SET latin1 COLLATE latin1_bin,
			v4 VARCHAR(20) CHARACTER SET utf16, v5 VARCHAR(7) CHARACTER SET ucs2, v6 VARCHAR(5) CHARACTER SET utf32,
			v7 VARCHAR(30) CHARACTER SET cp1251 COLLATE cp1251_general_ci, v8 VARCHAR(12) CHARACTER SET sjis,
			v9 VARCHAR(40) COLLATE utf8mb4_uca1400_ai_ci, v10 VARCHAR(16000) CHARACTER SET latin1,
			bin BINARY(16), vb VARBINARY(100) NOT NULL DEFAULT '', vb2 VARBINARY(1000),
			tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
			tt TINYTEXT CHARACTER SET latin1, tx TEXT, mt MEDIUMTEXT CHARACTER SET utf8mb3, lt LONGTEXT COLLATE utf8mb4_bin,
			PRIMARY KEY (b, a(10)))`,
		"enums": `(
			id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
			e ENUM('a','it''s','back\\slash','') CHARACTER SET latin1,
			e2 ENUM('x','y') NOT NULL DEFAULT 'y',
			s SET('one','two','three') COLLATE utf8mb4_bin,
			s2 SET('é','ü') CHARACTER SET latin1 NOT NULL DEFAULT '',
			j JSON)`,
		"geo": `(
			id INT NOT NULL PRIMARY KEY, g GEOMETRY, p POINT NOT NULL, l LINESTRING, pg POLYGON,
			mp MULTIPOINT, ml MULTILINESTRING, mpg MULTIPOLYGON, gc GEOMETRYCOLLECTION)`,
		"comp": `(
			id INT NOT NULL PRIMARY KEY, v VARCHAR(10) COMPRESSED, v2 VARCHAR(300) COMPRESSED CHARACTER SET latin1 NOT NULL DEFAULT '',
			v3 VARCHAR(255) COMPRESSED CHARACTER SET latin1, v4 VARCHAR(254) COMPRESSED CHARACTER SET latin1,
			vb VARBINARY(100) COMPRESSED, vb2 VARBINARY(60000) COMPRESSED, e ENUM('a','b') NOT NULL, tb TINYBLOB COMPRESSED,
			bl BLOB COMPRESSED, mb MEDIUMBLOB COMPRESSED, lb LONGBLOB COMPRESSED, s SET('x','y'),
			tt TINYTEXT COMPRESSED CHARACTER SET latin1, tx TEXT COMPRESSED, mt MEDIUMTEXT COMPRESSED CHARACTER SET utf8mb3,
			lt LONGTEXT COMPRESSED COLLATE utf8mb4_bin, v5 VARCHAR(20) COMPRESSED CHARACTER SET utf16, d DECIMAL(20,5))`,
		"nopk":   `(a INT, b VARCHAR(3) NOT NULL)`,
		"blobpk": `(t TEXT NOT NULL, x VARBINARY(20) NOT NULL, PRIMARY KEY (x(4), t(8)))`,
	}
	src.Exec(t, "CREATE DATABASE s", "USE s")
	for name, def := range tables {
		src.Exec(t, "CREATE TABLE "+name+" "+def)
	}
	src.Exec(t,
		"INSERT INTO nums (id, iu) VALUES (1, 1)",
		"INSERT INTO temporal (id) VALUES (1)",
		"INSERT INTO strs (a, b) VALUES ('x', 1)",
		"INSERT INTO enums (id) VALUES (1)",
		"INSERT INTO geo (id, p) VALUES (1, POINT(1, 2))",
		"INSERT INTO nopk (b) VALUES ('x')",
		"INSERT INTO comp (id) VALUES (1)",
		"INSERT INTO blobpk VALUES ('t', 'x')",
	)
	src.FlushLogs(t)

	decoded, mariadb := binlogTables(t, src.BinlogFiles(t))
	if !mariadb {
		t.Fatal("the binlog was not recognised as MariaDB's")
	}
	dst.Exec(t, "CREATE DATABASE s")
	for name := range tables {
		tbl := decoded["s."+name]
		if tbl == nil {
			t.Fatalf("no TABLE_MAP for s.%s", name)
		}
		sql, err := tablemap.CreateTable(tbl, tablemap.CreateOptions{MariaDB: true})
		if err != nil {
			t.Fatal(err)
		}
		dst.Exec(t, sql)
	}

	const cols = `SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, IFNULL(CHARACTER_SET_NAME, '-'), IFNULL(COLLATION_NAME, '-')
		FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 's' ORDER BY TABLE_NAME, ORDINAL_POSITION`
	const keys = `SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, IFNULL(SUB_PART, 0)
		FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 's' AND INDEX_NAME = 'PRIMARY' ORDER BY TABLE_NAME, SEQ_IN_INDEX`
	width := regexp.MustCompile(`^((tiny|small|medium|big)?int)\(\d+\)`)
	flat := func(rows [][]*string) []string {
		var out []string
		for _, r := range rows {
			var f []string
			for _, v := range r {
				f = append(f, *v)
			}
			f[2] = width.ReplaceAllString(f[2], "$1")
			out = append(out, strings.Join(f, " | "))
		}
		return out
	}
	for _, q := range []string{cols, keys} {
		want, got := flat(src.QueryStrings(t, q)), flat(dst.QueryStrings(t, q))
		if len(want) < len(tables) {
			t.Fatalf("only %d rows for %s", len(want), q)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			for i := 0; i < len(got) || i < len(want); i++ {
				var g, w string
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if g != w {
					t.Errorf("original: %s\n rebuilt: %s", w, g)
				}
			}
		}
	}
}
