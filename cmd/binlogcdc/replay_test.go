package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

func TestReplayFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"read", "--format", "xml", "f"}, "--format: want json, debezium, maxwell, canal or sql"},
		{[]string{"read", "--flashback", "--format", "json", "f"}, "--flashback writes SQL"},
		{[]string{"read", "--flashback", "--to", "mysql://u@h:1/", "f"}, "does not apply it"},
		{[]string{"read", "--to", "mysql://u@h:1/", "--format", "sql", "f"}, "use one of them"},
		{[]string{"read", "--to", "mysql://u@h:1/", "-o", "x", "f"}, "nothing to write to --output"},
		{[]string{"read", "--on-conflict", "skip", "f"}, "--on-conflict needs --to"},
		{[]string{"read", "--replica-name", "x", "--format", "sql", "f"}, "--replica-name needs --to"},
		{[]string{"read", "--keep-dropped", "f"}, "--keep-dropped needs --to or --format sql"},
		{[]string{"read", "--to", "mysql://u@h:1/", "--on-conflict", "ignore", "f"}, "want error, overwrite or skip"},
		{[]string{"read", "--ddl=maybe", "f"}, "want apply or skip"},
		{[]string{"read", "--to", "mysql://h:1/", "f"}, "--to: no user"},
		{[]string{"read", "--to", "mysql://u@h:1/shop", "f"}, "names a database"},
		{[]string{"read", "--to", "http://u@h:1/", "f"}, "not a DSN"},
		{[]string{"stream", "--source", "mysql://u@h:1", "--to", "mysql://u@h:2/", "--checkpoint", "cp"}, "drop --checkpoint"},
		{[]string{"stream", "--source", "mysql://u@h:1", "--flashback"}, "unknown flag: --flashback"},
	} {
		var out, errb bytes.Buffer
		if code := run(tc.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tc.args, code, errb.String(), exitUsage, tc.msg)
		}
	}
}

// TestReplayShop replays testdata/shop.binlog (a renamed column, a
// dropped table) into a server, and resumes without applying twice.
func TestReplayShop(t *testing.T) {
	dst := testserver.Start(t, testserver.Options{})
	var out, errb bytes.Buffer
	if code := run([]string{"read", "--to", dst.DSN() + "/", "../../testdata/shop.binlog"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "applied 9 rows") {
		t.Errorf("summary: %s", errb.String())
	}
	got := dst.QueryStrings(t, "SELECT id, email, phone, full_name, tier, tags, CAST(created AS CHAR) FROM shop.customers ORDER BY id")
	want := [][]string{
		{"1", "ana@example.com", "+49 30 1234", "Ana Müller", "platinum", "vip,wholesale", "2024-06-15 12:34:56.123456"},
		{"2", "bo@example.com", "NULL", "Bø", "basic", "new,wholesale", "2024-06-16 08:00:00.000000"},
	}
	for i, row := range got {
		for j, v := range row {
			s := "NULL"
			if v != nil {
				s = *v
			}
			if i >= len(want) || s != want[i][j] {
				t.Errorf("customers row %d column %d = %q", i, j, s)
			}
		}
	}
	if n := dst.QueryStrings(t, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shop' AND TABLE_NAME = 'scratch'"); *n[0][0] != "0" {
		t.Errorf("the dropped table is there")
	}
	errb.Reset()
	if code := run([]string{"read", "--to", dst.DSN() + "/", "../../testdata/shop.binlog"}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "nothing to apply") && !strings.Contains(errb.String(), "applied 0 rows") {
		t.Errorf("second run: exit %d: %s", code, errb.String())
	}
}

// TestOutputWriteFailure: -o on a full disk (/dev/full) fails with the
// kernel's error and exit 1, for JSON lines and SQL, and the SQL summary
// does not claim the SQL was written.
func TestOutputWriteFailure(t *testing.T) {
	for _, args := range [][]string{
		{"read", "../../testdata/shop.binlog", "-o", "/dev/full"},
		{"read", "../../testdata/shop.binlog", "--format", "sql", "-o", "/dev/full"},
		{"read", "../../testdata/shop.binlog", "--format", "sql", "--flashback", "-o", "/dev/full"},
	} {
		_, errOut, code := cli(args...)
		if code != 1 || !strings.Contains(errOut, "no space left on device") {
			t.Errorf("%v: exit %d, want 1 with the write error:\n%s", args, code, errOut)
		}
		if strings.Contains(errOut, "binlogcdc: wrote") {
			t.Errorf("%v: the summary claims the output was written:\n%s", args, errOut)
		}
	}
}
