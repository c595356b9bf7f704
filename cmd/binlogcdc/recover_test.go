package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/fixtures"
)

// runRecoverCmd runs 'binlogcdc recover args...' in-process. Times and
// offsets in shop.binlog are replaced by TIME and POS, so that the tests
// survive regenerating the sample.
func runRecoverCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(append([]string{"recover"}, args...), &out, &errb)
	norm := func(s string) string {
		s = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d (shop\.binlog)`).ReplaceAllString(s, "TIME $1")
		return regexp.MustCompile(`shop\.binlog:\d+`).ReplaceAllString(s, "shop.binlog:POS")
	}
	return norm(out.String()), norm(errb.String()), code
}

const recoverShopBinlog = "../../testdata/shop.binlog"

// testdata/shop.binlog (testdata/sql/shop.sql) ends with a table created,
// filled and dropped: recover rebuilds it with the binlog's own CREATE
// TABLE, its charset pinned to what the TABLE_MAP says.
func TestRecoverShopScratch(t *testing.T) {
	out, errs, code := runRecoverCmd(t, "--table", "shop.scratch", recoverShopBinlog)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "-- binlogcdc recover: shop.scratch, incarnation #1 of 1, as `shop`.`scratch`\n" +
		"-- created: TIME shop.binlog:POS\n" +
		"-- ended:   DROP TABLE TIME shop.binlog:POS\n" +
		"-- schema:  the binlog's CREATE TABLE statement at shop.binlog:POS\n" +
		"-- rows:    2 (from 2 inserts, 0 updates, 0 deletes)\n" +
		"SET NAMES utf8mb4;\n" +
		"SET SESSION time_zone = '+00:00', foreign_key_checks = 0, sql_mode = 'STRICT_ALL_TABLES,NO_AUTO_VALUE_ON_ZERO,ALLOW_INVALID_DATES,NO_ENGINE_SUBSTITUTION';\n" +
		"CREATE DATABASE IF NOT EXISTS `shop`;\n" +
		"CREATE TABLE `shop`.`scratch` (k VARCHAR(10), v INT) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;\n" +
		"INSERT INTO `shop`.`scratch` (`k`,`v`) VALUES (_utf8mb4'a',1),(_utf8mb4'b',NULL);\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if !strings.Contains(errs, "recovering incarnation #1 of 1 of shop.scratch") || !strings.Contains(errs, "wrote shop.scratch: 2 rows") {
		t.Errorf("stderr:\n%s", errs)
	}

	// --as and -o.
	dir := t.TempDir()
	file := filepath.Join(dir, "out.sql")
	if _, errs, code := runRecoverCmd(t, "--table", "shop.scratch", "--as", "back.scratch_2024", "-o", file, recoverShopBinlog); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"CREATE DATABASE IF NOT EXISTS `back`;", "CREATE TABLE `back`.`scratch_2024` (k VARCHAR(10), v INT)", "INSERT INTO `back`.`scratch_2024` (`k`,`v`)"} {
		if !strings.Contains(string(data), s) {
			t.Errorf("--as: output lacks %q:\n%s", s, data)
		}
	}
}

// shop.customers still exists and was altered (RENAME COLUMN, ADD
// COLUMN): --incarnation 1 rebuilds it from its last TABLE_MAP, with the
// row written before the ALTER moved to the new columns.
func TestRecoverShopCustomersAltered(t *testing.T) {
	out, errs, code := runRecoverCmd(t, "--table", "shop.customers", "--list", recoverShopBinlog)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !regexp.MustCompile(`(?m)^1\s+TIME shop\.binlog:POS\s+still exists\s+2/2/0\s+shop\.customers$`).MatchString(out) {
		t.Errorf("--list:\n%s", out)
	}
	if _, errs, code := runRecoverCmd(t, "--table", "shop.customers", recoverShopBinlog); code != 1 || !strings.Contains(errs, "no incarnation of `shop`.`customers` was dropped") {
		t.Errorf("exit %d: %s", code, errs)
	}
	out, errs, code = runRecoverCmd(t, "--table", "shop.customers", "--incarnation", "1", recoverShopBinlog)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, s := range []string{
		"-- schema:  the binlog's CREATE TABLE statement at shop.binlog:POS and the ALTER TABLE after it\n",
		"  `phone` VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NULL,\n  `full_name` VARCHAR(80) CHARACTER SET latin1 COLLATE latin1_swedish_ci NULL,\n",
		"INSERT INTO `shop`.`customers` (`id`,`email`,`phone`,`full_name`,`tier`,`tags`,`created`) VALUES " +
			"(1,_utf8mb4'ana@example.com',_utf8mb4'+49 30 1234',_utf8mb4'Ana Müller',_utf8mb4'platinum',_utf8mb4'vip,wholesale','2024-06-15 12:34:56.123456')," +
			"(2,_utf8mb4'bo@example.com',NULL,_utf8mb4'Bø',_utf8mb4'basic',_utf8mb4'new,wholesale','2024-06-16 08:00:00.000000');\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
}

// A TABLE_MAP without FULL metadata for the table: exit 3, as read.
func TestRecoverMetadataError(t *testing.T) {
	f := fixtures.Path(t, "blackbeam__rust_mysql_common/test-data__binlogs__minimal_row_metadata.000001")
	for _, args := range [][]string{{"--list"}, {}} {
		_, errs, code := runRecoverCmd(t, append(args, "--table", "noria.t1", f)...)
		if code != exitMetadata || !strings.Contains(errs, "table noria.t1: the binlog has no column names") || !strings.Contains(errs, "binlog_row_metadata") {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
}

func TestRecoverUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{recoverShopBinlog}, exitUsage, "--table is required"},
		{[]string{"--table", "shop.scratch"}, exitUsage, "no binlog files"},
		{[]string{"--table", "scratch", recoverShopBinlog}, exitUsage, "want db.table"},
		{[]string{"--table", "shop.scratch", "--as", "x", recoverShopBinlog}, exitUsage, "--as: want db.table"},
		{[]string{"--table", "shop.scratch", "--before", "yesterday", recoverShopBinlog}, exitUsage, "--before"},
		{[]string{"--table", "shop.scratch", "--before", "2024-01-01", "--incarnation", "1", recoverShopBinlog}, exitUsage, "both pick"},
		{[]string{"--table", "shop.scratch", "--start-position", "nope", recoverShopBinlog}, exitUsage, "--start-position"},
		{[]string{"--table", "shop.scratch", "--on-conflict", "skip", recoverShopBinlog}, exitUsage, "--on-conflict needs --to"},
		{[]string{"--table", "shop.scratch", "--to", "mysql://root@127.0.0.1:1/", "-o", "x", recoverShopBinlog}, exitUsage, "--output"},
		{[]string{"--table", "shop.scratch", "--to", "postgres://x", recoverShopBinlog}, exitUsage, "--to"},
		{[]string{"--table", "shop.scratch", "--incarnation", "2", recoverShopBinlog}, exitError, "no number 2"},
		{[]string{"--table", "shop.nosuch", recoverShopBinlog}, exitError, "never mention"},
		{[]string{"--table", "shop.scratch", "--before", "2020-01-01", recoverShopBinlog}, exitError, "before 2020-01-01"},
	} {
		_, errs, code := runRecoverCmd(t, c.args...)
		if code != c.code || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", c.args, code, c.code, c.msg, errs)
		}
	}
}
