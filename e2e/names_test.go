package e2e

// Names with dots and backquotes (issue 11, item 4): every place a table
// is named takes backquoted names, names match case-insensitively, and a
// pattern that matches nothing is said so.

import (
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

func TestQuotedNames(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t,
		"CREATE DATABASE `d.b`",
		"CREATE TABLE `d.b`.`x.y` (id INT PRIMARY KEY, v VARCHAR(10))",
		"CREATE TABLE `d.b`.`a``b` (id INT PRIMARY KEY, w VARBINARY(4))",
		"CREATE TABLE `d.b`.t (id INT PRIMARY KEY)",
		"INSERT INTO `d.b`.`x.y` VALUES (1, 'one'), (2, 'two'), (3, 'three')",
		"INSERT INTO `d.b`.`a``b` VALUES (1, X'00FF'), (2, NULL)",
		"INSERT INTO `d.b`.t VALUES (1)",
		"UPDATE `d.b`.`x.y` SET v = 'TWO' WHERE id = 2",
		"DELETE FROM `d.b`.`a``b` WHERE id = 2",
		"CREATE TABLE `d.b`.gone (id INT)", "DROP TABLE `d.b`.gone", // no rows: only DDL mentions it
	)
	wantXY := recSnapshot(t, src, "SELECT id, HEX(v) FROM `d.b`.`x.y` ORDER BY id")
	wantAB := recSnapshot(t, src, "SELECT id, HEX(w) FROM `d.b`.`a``b` ORDER BY id")
	wantCk := recSnapshot(t, src, "CHECKSUM TABLE `d.b`.`x.y`, `d.b`.`a``b`")
	src.Exec(t, "DROP TABLE `d.b`.`x.y`, `d.b`.`a``b`")
	index := src.BinlogIndex()

	tablesOf := func(out []byte) map[string]int {
		recs, err := ParseLines(out)
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, r := range recs {
			if r.Op != "ddl" {
				n[r.DB+"|"+r.Table]++
			}
		}
		return n
	}
	for _, pat := range []string{"`d.b`.`x.y`", "`D.B`.`X.Y`", "`d.b`.x*", "`d.b`.`x.y`"} {
		out, errOut := rpRun(t, 0, "read", index, "--tables", pat)
		if got := tablesOf(out); len(got) != 1 || got["d.b|x.y"] != 4 {
			t.Errorf("--tables %s: rows by table %v, want the 4 changes of d.b.x.y", pat, got)
		}
		if strings.Contains(errOut, "warning") {
			t.Errorf("--tables %s: %s", pat, errOut)
		}
	}
	out, _ := rpRun(t, 0, "read", index, "--exclude-tables", "`d.b`.`a``b`", "--exclude-tables", "`d.b`.t")
	if got := tablesOf(out); len(got) != 1 || got["d.b|x.y"] != 4 {
		t.Errorf("--exclude-tables: rows by table %v", got)
	}
	// A pattern that matches nothing the input mentions: a warning.
	_, errOut := rpRun(t, 0, "read", index, "--tables", "`d.b`.`x.z`")
	if !strings.Contains(errOut, "--tables `d.b`.`x.z` matched no table in the input") {
		t.Errorf("no warning for a pattern that matches nothing:\n%s", errOut)
	}
	// A table only DDL mentions is mentioned, with or without --ddl.
	for _, extra := range [][]string{{"--ddl"}, nil} {
		if _, errOut := rpRun(t, 0, append([]string{"read", index, "--tables", "`d.b`.gone"}, extra...)...); strings.Contains(errOut, "matched no table") {
			t.Errorf("%v: %s", extra, errOut)
		}
	}
	// An unquoted name with a dot is refused, with the way to write it.
	_, errOut = rpRun(t, 2, "read", index, "--tables", "d.b.x.y")
	if !strings.Contains(errOut, "backquote") {
		t.Errorf("no hint about backquotes:\n%s", errOut)
	}

	// recover, by the quoted name and into a quoted new name.
	dst := testserver.Start(t, testserver.Options{})
	sql, _ := recoverCLI(t, 0, "--table", "`d.b`.`x.y`", index)
	recLoadSQL(t, dst, sql)
	sql, _ = recoverCLI(t, 0, "--table", "`D.b`.`A``B`", index)
	recLoadSQL(t, dst, sql)
	recSameRows(t, "`d.b`.`x.y`", recSnapshot(t, dst, "SELECT id, HEX(v) FROM `d.b`.`x.y` ORDER BY id"), wantXY)
	recSameRows(t, "`d.b`.`a``b`", recSnapshot(t, dst, "SELECT id, HEX(w) FROM `d.b`.`a``b` ORDER BY id"), wantAB)
	recSameRows(t, "checksums", recSnapshot(t, dst, "CHECKSUM TABLE `d.b`.`x.y`, `d.b`.`a``b`"), wantCk)

	dst.Exec(t, "CREATE DATABASE `r.s`")
	sql, _ = recoverCLI(t, 0, "--table", "`d.b`.`x.y`", "--as", "`r.s`.`n``m.o`", index)
	recLoadSQL(t, dst, sql)
	recSameRows(t, "--as `r.s`.`n``m.o`", recSnapshot(t, dst, "SELECT id, HEX(v) FROM `r.s`.`n``m.o` ORDER BY id"), wantXY)

	// A table the binlogs never mention: an error.
	_, errOut = recoverCLI(t, 1, "--table", "`d.b`.`x.z`", index)
	if !strings.Contains(errOut, "never mention") {
		t.Errorf("recover of an unknown table:\n%s", errOut)
	}
}

// TestLowerCaseTableNames: on a server with lower_case_table_names=1 the
// row events carry lower-case names while the DDL keeps the user's
// spelling; patterns match both, so the DDL of a selected or excluded
// table is recognised in any spelling.
func TestLowerCaseTableNames(t *testing.T) {
	opts := testserver.Options{ExtraArgs: []string{"--lower-case-table-names=1"}}
	src := testserver.Start(t, opts)
	src.Exec(t,
		"CREATE DATABASE IF NOT EXISTS Shop", "USE Shop",
		"CREATE TABLE Orders (id INT PRIMARY KEY, v VARCHAR(5))", "CREATE TABLE Promo (id INT PRIMARY KEY)",
		"INSERT INTO Orders VALUES (1, 'a')", "INSERT INTO Promo VALUES (1)",
		"ALTER TABLE Orders ADD COLUMN w INT DEFAULT 7",
		"INSERT INTO SHOP.ORDERS VALUES (2, 'b', 8)",
		"DROP TABLE Promo")
	dst := testserver.Start(t, opts)
	dst.Exec(t, "CREATE DATABASE shop", "CREATE TABLE shop.promo (id INT PRIMARY KEY)", "INSERT INTO shop.promo VALUES (99)")
	_, errOut := rpRun(t, 0, "read", src.BinlogIndex(), "--exclude-tables", "shop.promo", "--tables", "SHOP.*", "--to", dst.DSN()+"/")
	if strings.Contains(errOut, "matched no table") {
		t.Errorf("unexpected warning:\n%s", errOut)
	}
	want := rpRows(t, src, "SELECT id, HEX(v), w FROM shop.orders ORDER BY id") + "\n" + rpRows(t, src, "CHECKSUM TABLE shop.orders")
	if got := rpRows(t, dst, "SELECT id, HEX(v), w FROM shop.orders ORDER BY id") + "\n" + rpRows(t, dst, "CHECKSUM TABLE shop.orders"); got != want {
		t.Errorf("shop.orders on the target:\n%s\nwant:\n%s", got, want)
	}
	if got := rpRows(t, dst, "SELECT id FROM shop.promo"); got != `"99"` {
		t.Errorf("the excluded shop.promo on the target: %s, want its own row 99", got)
	}
}
