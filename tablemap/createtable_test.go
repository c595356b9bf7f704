package tablemap_test

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/fixtures"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Tests of CreateTable against real servers' TABLE_MAP events: the
// go-mysql and rust_mysql_common fixtures in ../shared/fixtures/upstream
// (see its MANIFEST.md; they are read from there, never copied), and a
// private MariaDB (createtable_server_test.go).

func fixturePath(t *testing.T, rel string) string { return fixtures.Path(t, rel) }

// tableMapBody decodes a go-mysql fixture: a bare TABLE_MAP event body
// (6-byte table id, no header, no checksum). It wraps the body in an event
// and parses it after the 5.7.22 FORMAT_DESCRIPTION_EVENT fixture (CRC32,
// 6-byte table ids), so that go-mysql sets up its decoder as for a file.
func tableMapBody(t *testing.T, name string, mariadb bool) *tablemap.Table {
	t.Helper()
	fde, err := os.ReadFile(fixturePath(t, "go-mysql-org__go-mysql/replication__parser_test.go__TestRowsEventDecodeFunc__L88__mysql5722_fde_event.bin"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(fixturePath(t, "go-mysql-org__go-mysql/replication__row_event_test.go__"+name))
	if err != nil {
		t.Fatal(err)
	}
	p := replication.NewBinlogParser()
	if mariadb {
		p.SetFlavor("mariadb")
	}
	if _, err := p.Parse(fde); err != nil {
		t.Fatal(err)
	}
	ev := make([]byte, replication.EventHeaderSize, replication.EventHeaderSize+len(body)+4)
	ev[4] = byte(replication.TABLE_MAP_EVENT)
	binary.LittleEndian.PutUint32(ev[9:], uint32(len(ev)+len(body)+4))
	ev = append(ev, body...)
	ev = binary.LittleEndian.AppendUint32(ev, crc32.ChecksumIEEE(ev))
	e, err := p.Parse(ev)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := tablemap.FromEvent(e.Event.(*replication.TableMapEvent))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// fileTables returns the decoded TABLE_MAPs of a whole binlog file, by
// "db.table" (the last one of each name).
func fileTables(t *testing.T, rel string) (map[string]*tablemap.Table, bool) {
	t.Helper()
	return binlogTables(t, []string{fixturePath(t, rel)})
}

// binlogTables returns the decoded TABLE_MAPs of binlog files, by
// "db.table" (the last one of each name), and whether MariaDB wrote them.
func binlogTables(t *testing.T, files []string) (map[string]*tablemap.Table, bool) {
	t.Helper()
	src, err := binlog.OpenFiles(files, change.Position{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	p := replication.NewBinlogParser()
	p.SetVerifyChecksum(false)
	out := map[string]*tablemap.Table{}
	mariadb := false
	for {
		ev, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type() {
		case replication.FORMAT_DESCRIPTION_EVENT:
			// go-mysql keeps slices of the event, and src reuses its buffer.
			e, err := p.Parse(append([]byte(nil), ev.Raw...))
			if err != nil {
				t.Fatal(err)
			}
			mariadb = strings.Contains(strings.ToLower(string(e.Event.(*replication.FormatDescriptionEvent).ServerVersion)), "mariadb")
			if mariadb {
				p.SetFlavor("mariadb")
			}
		case replication.TABLE_MAP_EVENT:
			e, err := p.Parse(ev.Raw)
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := tablemap.FromEventBody(e.Event.(*replication.TableMapEvent), ev.Body, 6)
			if err != nil {
				t.Fatal(err)
			}
			out[tbl.DB+"."+tbl.Name] = tbl
		}
	}
	return out, mariadb
}

func mustCreate(t *testing.T, tbl *tablemap.Table, opts tablemap.CreateOptions) string {
	t.Helper()
	s, err := tablemap.CreateTable(tbl, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s, tablemap.CreateTableNote) {
		t.Fatalf("CreateTable output does not start with the note:\n%s", s)
	}
	return strings.TrimPrefix(s, tablemap.CreateTableNote)
}

func checkCreate(t *testing.T, got, want string) {
	t.Helper()
	want = strings.TrimSpace(want)
	if got != want {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
			}
		}
		t.Logf("got:\n%s", got)
	}
}

// The 42-column `_types` table of go-mysql's TestTableMapOptMetaNames,
// as MySQL 8.0 logged it with binlog_row_metadata=FULL. The column types
// are those of the upstream CREATE TABLE (BOOLEAN is TINYINT(1)); the
// NOT NULL columns and utf8mb4_unicode_ci (224) are what the event says.
const types80 = "CREATE TABLE `test`.`_types` (\n" +
	"  `b_bit` BIT(64) NOT NULL,\n" +
	"  `n_boolean` TINYINT NOT NULL,\n" +
	"  `n_tinyint` TINYINT NOT NULL,\n" +
	"  `n_smallint` SMALLINT NOT NULL,\n" +
	"  `n_mediumint` MEDIUMINT NOT NULL,\n" +
	"  `n_int` INT NOT NULL,\n" +
	"  `n_bigint` BIGINT NOT NULL,\n" +
	"  `n_decimal` DECIMAL(65,30) NOT NULL,\n" +
	"  `n_float` FLOAT NOT NULL,\n" +
	"  `n_double` DOUBLE NOT NULL,\n" +
	"  `nu_tinyint` TINYINT UNSIGNED NOT NULL,\n" +
	"  `nu_smallint` SMALLINT UNSIGNED NOT NULL,\n" +
	"  `nu_mediumint` MEDIUMINT UNSIGNED NOT NULL,\n" +
	"  `nu_int` INT UNSIGNED NOT NULL,\n" +
	"  `nu_bigint` BIGINT UNSIGNED NOT NULL,\n" +
	"  `nu_decimal` DECIMAL(65,30) UNSIGNED NOT NULL,\n" +
	"  `nu_float` FLOAT UNSIGNED NOT NULL,\n" +
	"  `nu_double` DOUBLE UNSIGNED NOT NULL,\n" +
	"  `t_year` YEAR NULL,\n" +
	"  `t_date` DATE NULL,\n" +
	"  `t_time` TIME NULL,\n" +
	"  `t_ftime` TIME(6) NULL,\n" +
	"  `t_datetime` DATETIME NULL,\n" +
	"  `t_fdatetime` DATETIME(6) NULL,\n" +
	"  `t_timestamp` TIMESTAMP NULL,\n" +
	"  `t_ftimestamp` TIMESTAMP(6) NULL,\n" +
	"  `c_char` CHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,\n" +
	"  `c_varchar` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,\n" +
	"  `c_binary` BINARY(64) NOT NULL,\n" +
	"  `c_varbinary` VARBINARY(64) NOT NULL,\n" +
	"  `c_tinyblob` TINYBLOB NULL,\n" +
	"  `c_blob` BLOB NULL,\n" +
	"  `c_mediumblob` MEDIUMBLOB NULL,\n" +
	"  `c_longblob` LONGBLOB NULL,\n" +
	"  `c_tinytext` TINYTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NULL,\n" +
	"  `c_text` TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NULL,\n" +
	"  `c_mediumtext` MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NULL,\n" +
	"  `c_longtext` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NULL,\n" +
	"  `e_enum` ENUM('a','b') CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NULL,\n" +
	"  `s_set` SET('1','2') CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NULL,\n" +
	"  `g_geometry` GEOMETRY NULL,\n" +
	"  `j_json` JSON NULL\n" +
	")"

func TestCreateTableGoMySQLTypes(t *testing.T) {
	checkCreate(t, mustCreate(t, tableMapBody(t, "TestTableMapOptMetaNames__L844__mysql80.bin", false), tablemap.CreateOptions{}), types80)

	// MariaDB 10.5: its TIMESTAMP columns were NOT NULL (explicit_defaults_for_timestamp
	// was OFF) and JSON is LONGTEXT with utf8mb4_bin.
	want := strings.NewReplacer(
		"`t_timestamp` TIMESTAMP NULL", "`t_timestamp` TIMESTAMP NOT NULL",
		"`t_ftimestamp` TIMESTAMP(6) NULL", "`t_ftimestamp` TIMESTAMP(6) NOT NULL",
		"`j_json` JSON NULL", "`j_json` LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL",
	).Replace(types80)
	checkCreate(t, mustCreate(t, tableMapBody(t, "TestTableMapOptMetaNames__L848__mariadb105.bin", true), tablemap.CreateOptions{MariaDB: true}), want)

	// TestTableMapHelperMaps: c_char in gbk, a gbk SET and ENUM, every
	// geometry subtype.
	want = strings.NewReplacer(
		"`c_char` CHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci", "`c_char` CHAR(255) CHARACTER SET gbk COLLATE gbk_chinese_ci",
		"`j_json` JSON NULL\n", "`j_json` JSON NULL,\n"+
			"  `s_set2` SET('3','4') CHARACTER SET gbk COLLATE gbk_chinese_ci NULL,\n"+
			"  `e_enum2` ENUM('c','d') CHARACTER SET gbk COLLATE gbk_chinese_ci NULL,\n"+
			"  `g_geometrycollection` GEOMETRYCOLLECTION NULL,\n"+
			"  `g_multipolygon` MULTIPOLYGON NULL,\n"+
			"  `g_multilinestring` MULTILINESTRING NULL,\n"+
			"  `g_multipoint` MULTIPOINT NULL,\n"+
			"  `g_polygon` POLYGON NULL,\n"+
			"  `g_linestring` LINESTRING NULL,\n"+
			"  `g_point` POINT NULL\n",
	).Replace(types80)
	checkCreate(t, mustCreate(t, tableMapBody(t, "TestTableMapHelperMaps__L1347__mysql80.bin", false), tablemap.CreateOptions{}), want)
}

func TestCreateTablePrimaryKey(t *testing.T) {
	for _, n := range []string{"L895__mysql80_case1", "L907__mariadb105_case1"} {
		got := mustCreate(t, tableMapBody(t, "TestTableMapOptMetaPrimaryKey__"+n+".bin", strings.Contains(n, "maria")), tablemap.CreateOptions{})
		checkCreate(t, got, "CREATE TABLE `test`.`_prim` (\n"+
			"  `id2` INT NOT NULL,\n"+
			"  `col` VARCHAR(30) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NULL,\n"+
			"  `id1` BIGINT NOT NULL,\n"+
			"  PRIMARY KEY (`id1`,`id2`)\n)")
	}
	for _, n := range []string{"L919__mysql80_case2", "L931__mariadb105_case2"} {
		got := mustCreate(t, tableMapBody(t, "TestTableMapOptMetaPrimaryKey__"+n+".bin", strings.Contains(n, "maria")), tablemap.CreateOptions{})
		checkCreate(t, got, "CREATE TABLE `test`.`_prim2` (\n"+
			"  `col1` INT NULL,\n"+
			"  `id1` CHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,\n"+
			"  `col2` INT NULL,\n"+
			"  `id2` VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,\n"+
			"  PRIMARY KEY (`id1`,`id2`(10))\n)")
	}
}

func TestCreateTableVisibilityAndNullable(t *testing.T) {
	got := mustCreate(t, tableMapBody(t, "TestTableMapOptMetaVisibility__L1024__mysql80_case1.bin", false), tablemap.CreateOptions{DB: "x`y", Name: "v"})
	var want strings.Builder
	want.WriteString("CREATE TABLE `x``y`.`v` (\n")
	for i := 0; i <= 10; i++ {
		inv := ""
		switch i {
		case 0, 2, 5, 6, 7, 9, 10:
			inv = " INVISIBLE"
		}
		sep := ",\n"
		if i == 10 {
			sep = "\n"
		}
		want.WriteString("  `col" + strconv.Itoa(i) + "` INT NULL" + inv + sep)
	}
	want.WriteString(")")
	checkCreate(t, got, want.String())

	for _, n := range []string{"L716__mysql80", "L720__mariadb105"} {
		got := mustCreate(t, tableMapBody(t, "TestTableMapNullable__"+n+".bin", strings.Contains(n, "maria")), tablemap.CreateOptions{})
		checkCreate(t, got, "CREATE TABLE `test`.`_null` (\n"+
			"  `c1` INT NULL,\n"+
			"  `c2` INT NOT NULL,\n"+
			"  `c3` TIMESTAMP NOT NULL,\n"+
			"  `c4` TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NULL\n)")
	}
}

// Whole binlog files of rust_mysql_common (MySQL 8.0.26-9.0.1, MariaDB 10.5.15).
func TestCreateTableRustMySQLCommonFiles(t *testing.T) {
	const dir = "blackbeam__rust_mysql_common/test-data__binlogs__"
	cases := []struct{ file, table, want string }{
		{"binlog-invisible-columns.000001", "mysql.t1", "CREATE TABLE `mysql`.`t1` (\n" +
			"  `f1` INT UNSIGNED NULL INVISIBLE,\n" +
			"  `f2` INT UNSIGNED NULL INVISIBLE,\n" +
			"  `f3` INT NULL,\n" +
			"  `f4` TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci NULL,\n" +
			"  `f5` BLOB NULL,\n" +
			"  `f6` BIGINT UNSIGNED NULL INVISIBLE\n)"},
		{"mysql_type_bit.000001", "mysql.foo", "CREATE TABLE `mysql`.`foo` (\n" +
			"  `a` BIT(3) NULL,\n" +
			"  `b` TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci NULL,\n" +
			"  `c` BIT(8) NULL\n)"},
		{"mysql-enum-string-set.000001", "mysql.t", "CREATE TABLE `mysql`.`t` (\n" +
			"  `f1` CHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci NULL,\n" +
			"  `f2` VARCHAR(300) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci NULL,\n" +
			"  `f3` ENUM('var1','variant2','foo') CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci NULL,\n" +
			"  `f4` SET('one','two','three','four') CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci NULL,\n" +
			"  `f5` TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci NULL\n)"},
		{"json-opaque.binlog", "foo.test", "CREATE TABLE `foo`.`test` (\n  `a` JSON NULL\n)"},
	}
	for _, c := range cases {
		tables, maria := fileTables(t, dir+c.file)
		tbl := tables[c.table]
		if tbl == nil {
			t.Fatalf("%s: no TABLE_MAP for %s", c.file, c.table)
		}
		checkCreate(t, mustCreate(t, tbl, tablemap.CreateOptions{MariaDB: maria}), c.want)
	}

	// MariaDB 10.5.15.
	tables, maria := fileTables(t, dir+"mariadb-bin.000001")
	if !maria || len(tables) == 0 {
		t.Fatalf("mariadb-bin.000001: mariadb=%v, %d tables", maria, len(tables))
	}
	if tbl := tables["toddy_test.outbox"]; tbl == nil {
		t.Error("mariadb-bin.000001: no TABLE_MAP for toddy_test.outbox")
	} else {
		checkCreate(t, mustCreate(t, tbl, tablemap.CreateOptions{MariaDB: true}), "CREATE TABLE `toddy_test`.`outbox` (\n"+
			"  `id` INT NOT NULL,\n"+
			"  `topic` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL,\n"+
			"  `event_type` ENUM('BLOB','JSON','PROTOBUF') CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NULL,\n"+
			"  `event` BLOB NOT NULL,\n"+
			"  `created` TIMESTAMP NOT NULL,\n"+
			"  PRIMARY KEY (`id`)\n)")
	}

	// MySQL 9.0.1 VECTOR: the dimensions come from optional metadata
	// field 13 (VECTOR_DIMENSIONALITY), which go-mysql does not decode.
	tables, _ = fileTables(t, dir+"vector.binlog")
	tbl := tables["dtb.bar"]
	if tbl == nil {
		t.Fatal("vector.binlog: no TABLE_MAP for dtb.bar")
	}
	checkCreate(t, mustCreate(t, tbl, tablemap.CreateOptions{}), "CREATE TABLE `dtb`.`bar` (\n"+
		"  `id` BIGINT UNSIGNED NOT NULL,\n"+
		"  `vector_column` VECTOR(2) NOT NULL,\n"+
		"  `foo` TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci NULL,\n"+
		"  `vector_column2` VECTOR(4) NOT NULL,\n"+
		"  PRIMARY KEY (`id`)\n)")

	// Without the dimensions, CreateTable refuses rather than guess.
	for i := range tbl.Columns {
		tbl.Columns[i].Dimensions = 0
	}
	if _, err := tablemap.CreateTable(tbl, tablemap.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "VECTOR") {
		t.Errorf("VECTOR without dimensions: err = %v", err)
	}
}

func TestCreateTableErrorsAndQuoting(t *testing.T) {
	tbl := &tablemap.Table{DB: "d", Name: "t", Columns: []tablemap.Column{
		{Name: "e", Type: mysql.MYSQL_TYPE_ENUM, Collation: 8, EnumValues: []string{"it's", `back\slash`, "nul\x00"}, Nullable: true, Visible: true},
		{Name: "c", Type: mysql.MYSQL_TYPE_STRING, Length: 30, Collation: 33, Visible: true}, // utf8mb3: CHAR(10)
		{Name: "b", Type: mysql.MYSQL_TYPE_STRING, Length: 3, Collation: 63, Visible: true},
	}}
	checkCreate(t, mustCreate(t, tbl, tablemap.CreateOptions{Name: "t`2"}), "CREATE TABLE `d`.`t``2` (\n"+
		"  `e` ENUM('it''s','back\\\\slash','nul\\0') CHARACTER SET latin1 COLLATE latin1_swedish_ci NULL,\n"+
		"  `c` CHAR(10) CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci NOT NULL,\n"+
		"  `b` BINARY(3) NOT NULL\n)")
	for _, c := range []tablemap.Column{
		{Name: "x", Type: 140},
		{Name: "x", Type: mysql.MYSQL_TYPE_DECIMAL},
		{Name: "x", Type: mysql.MYSQL_TYPE_VARCHAR, Length: 10, Collation: 9999},
		{Name: "x", Type: mysql.MYSQL_TYPE_BLOB, Length: 7},
		{Name: "x", Type: mysql.MYSQL_TYPE_ENUM},
	} {
		if _, err := tablemap.CreateTable(&tablemap.Table{Name: "t", Columns: []tablemap.Column{c}}, tablemap.CreateOptions{}); err == nil {
			t.Errorf("type %d: no error", c.Type)
		}
	}
}
