package e2e

// Flag syntax (issue 12 item 10): a flag with no value or an optional one
// never takes the next word as its value or lets it be read as a file.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestOptionalValueFlags: "--ddl skip", "--progress false" and
// "--flashback false" are refused before anything is read, written or
// applied, with the '=' form as the fix; --help never shows a value after
// a space for such flags.
func TestOptionalValueFlags(t *testing.T) {
	dst := testserver.Start(t, testserver.Options{})
	shop := "../testdata/shop.binlog"
	for _, c := range [][]string{
		{"read", shop, "--to", dst.DSN() + "/", "--ddl", "skip"},
		{"read", "--to", dst.DSN() + "/", "--ddl", "apply", shop},
		{"read", shop, "--progress", "false"},
		{"read", "--flashback", "false", shop},
		{"read", "--create-tables", "true", "--to", dst.DSN() + "/", shop},
		{"stream", "--source", dst.DSN(), "--ddl", "skip"},
		{"stream", "--source", dst.DSN(), "--progress", "0"},
		{"recover", "--table", "shop.customers", "--list", "false", shop},
	} {
		out, errText, code := runCLI(t, nil, c...)
		if code != 2 || len(out) != 0 || !strings.Contains(errText, "takes a value only after '='") || !strings.Contains(errText, "hint: write --") {
			t.Errorf("%q: exit %d, stdout %.200q, stderr %q; want exit 2 and the '=' form", c, code, out, errText)
		}
	}
	if n := dst.QueryStrings(t, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN ('shop', 'binlogcdc')"); *n[0][0] != "0" {
		t.Errorf("a refused command changed the target")
	}
	// The '=' forms work.
	rpRun(t, 0, "read", shop, "--to", dst.DSN()+"/", "--ddl=apply", "--progress=false")
	if n := dst.QueryStrings(t, "SELECT COUNT(*) FROM shop.customers"); *n[0][0] != "2" {
		t.Errorf("customers: %s rows, want 2", *n[0][0])
	}
	for _, cmd := range []string{"read", "stream", "recover"} {
		_, help, code := runCLI(t, nil, cmd, "--help")
		if code != 0 || strings.Contains(help, "[=true|false]") || strings.Contains(help, "apply|skip[=") || !strings.Contains(help, "only after '='") {
			t.Errorf("%s --help (exit %d) invites a value after a space, or does not say how to give one:\n%s", cmd, code, help)
		}
	}
	_, help, _ := runCLI(t, nil, "read", "--help")
	if !strings.Contains(help, "--ddl[=apply|skip]") {
		t.Errorf("read --help does not show --ddl[=apply|skip]:\n%s", help)
	}
}

// TestRecoverDSNFirst: recover --to with a bad DSN is a usage error
// before any binlog is read (here: a file that does not exist).
func TestRecoverDSNFirst(t *testing.T) {
	_, errText, code := runCLI(t, nil, "recover", "--table", "s.t", "--to", "mysql://h:1/", "/nonexistent/binlog.000001")
	if code != 2 || !strings.Contains(errText, "--to: no user") {
		t.Errorf("exit %d, stderr %q; want exit 2 and the DSN's problem", code, errText)
	}
}

// TestArgsCheckedFirst: a bad --start-gtid, --to DSN, -o equal to the
// checkpoint, or an output that is a file the command reads (the password
// file, a TLS file) is a usage error before stream (or read --source)
// connects or writes anything.
func TestArgsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--start-gtid", "0-1"}, "is not a GTID set"},
		{[]string{"--to", "mysql://nobody-host:1/db"}, "names a database"},
		{[]string{"-o", dir + "/cp.json", "--checkpoint", dir + "/cp.json"}, "is the --checkpoint file"},
		// Files stream reads are no outputs: -o used to append change
		// lines to the password file.
		{[]string{"-o", pw, "--password-file", pw}, "is the --password-file file"},
		{[]string{"--checkpoint", pw, "--ssl-key", pw}, "is the --ssl-key file"},
		{[]string{"read", "--from", "earliest", "-o", pw, "--password-file", pw}, "is the --password-file file"},
	} {
		// Port 1: nothing listens, so getting past the checks would be a
		// connection error, not a usage error.
		cmd := "stream"
		if c.args[0] == "read" {
			cmd, c.args = "read", c.args[1:]
		}
		args := append([]string{cmd, "--source", "mysql://root@127.0.0.1:1"}, c.args...)
		_, errText, code := runCLI(t, nil, args...)
		if code != 2 || !strings.Contains(errText, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", args, code, errText, c.want)
		}
	}
	if b, _ := os.ReadFile(pw); string(b) != "secret\n" {
		t.Errorf("the password file was written: %q", b)
	}
}
