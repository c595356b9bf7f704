package e2e

// Tests of 'binlogcdc stream' refusing to start: a purged binlog under
// the checkpoint, login failures, missing privileges and settings.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestStreamPurgedBinlog: a checkpoint whose binlog the server purged
// after rotating away from it idle resumes at the oldest binlog left
// (nothing was lost). When transactions after the checkpoint were purged,
// the restart stops with exit code 5, a message that says so and what to
// do, and prints nothing; so does --start-position in a purged binlog.
func TestStreamPurgedBinlog(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	srv.Exec(t, "CREATE DATABASE pg", "CREATE TABLE pg.t (id INT PRIMARY KEY)")
	file, off := stMasterPos(t, srv)
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	args := []string{"--source", srv.DSN(), "--start-position", fmt.Sprintf("%s:%d", file, off), "--checkpoint", cp, "--output", out}
	r := stStart(t, dir, "run1", nil, args...)
	srv.Exec(t, "INSERT INTO pg.t VALUES (1), (2)")
	g := stLastGTID(t, srv)
	stPoll(t, time.Minute, r, "the rows", func() bool { return stHasGTID(out, g) && r.ready() })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d; stderr:\n%s", code, r.errText())
	}
	stCheckCPAtEnd(t, srv, cp, g, srv.Addr())

	// The server rotates away from the checkpoint's binlog without a
	// transaction in between and purges it: nothing was lost, so the
	// restart resumes at the oldest binlog left.
	srv.FlushLogs(t)
	srv.FlushLogs(t)
	purgeAll := func() {
		t.Helper()
		files := srv.BinlogFiles(t)
		stPurgeTo(t, srv, filepath.Base(files[len(files)-1]))
	}
	purgeAll()
	out2 := filepath.Join(dir, "out2.jsonl")
	args[len(args)-1] = out2
	r = stStart(t, dir, "run2", nil, args...)
	srv.Exec(t, "INSERT INTO pg.t VALUES (3)")
	g = stLastGTID(t, srv)
	stPoll(t, time.Minute, r, "the row after the purge", func() bool { return stHasGTID(out2, g) && r.ready() })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d; stderr:\n%s", code, r.errText())
	}
	if w := "but lost nothing after the checkpoint"; !strings.Contains(r.errText(), w) {
		t.Errorf("stderr lacks %q:\n%s", w, r.errText())
	}
	stCheckCPAtEnd(t, srv, cp, g, srv.Addr())
	got, _ := os.ReadFile(out2)
	stSameOutput(t, "stream resumed after an idle rotation and purge", got, stRead(t, srv))

	// Transactions after the checkpoint are purged: exit 5.
	file, _ = stTxEnd(t, srv, g)
	cpBefore, _ := os.ReadFile(cp)
	outBefore, _ := os.ReadFile(out2)
	for i := 0; i < 3; i++ {
		srv.Exec(t, fmt.Sprintf("INSERT INTO pg.t VALUES (%d)", 10+i))
		srv.FlushLogs(t)
	}
	purgeAll()

	for _, c := range []struct {
		name  string
		args  []string
		wants []string
	}{
		{"checkpoint", args, []string{
			"the checkpoint in " + cp + " resumes at " + file, "no longer has " + file,
			"hint: it was purged", "--from now", "--from earliest"}},
		{"start-position", []string{"--source", srv.DSN(), "--start-position", file + ":4", "--output", filepath.Join(dir, "out3.jsonl")}, []string{
			"cannot send the binlog from the requested position", "hint: the binlog file was probably purged", "--from now"}},
	} {
		stdout, stderr, code := runCLI(t, nil, append([]string{"stream"}, c.args...)...)
		if code != 5 {
			t.Errorf("%s: exit code %d, want 5; stderr:\n%s", c.name, code, stderr)
		}
		for _, w := range c.wants {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", c.name, w, stderr)
			}
		}
		if len(stdout) != 0 {
			t.Errorf("%s: printed %q", c.name, clip(string(stdout)))
		}
	}
	if b, _ := os.ReadFile(out2); !bytes.Equal(b, outBefore) {
		t.Errorf("the output changed after the failed restart: %d bytes, was %d", len(b), len(outBefore))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out3.jsonl")); len(b) != 0 {
		t.Errorf("--start-position in a purged binlog wrote %q (%v)", clip(string(b)), err)
	}
	if b, _ := os.ReadFile(cp); !bytes.Equal(b, cpBefore) {
		t.Errorf("the checkpoint changed after the failed restart:\n%s\nwas:\n%s", b, cpBefore)
	}
}

// TestStreamSetupErrors: login failures, missing privileges and missing
// FULL row metadata stop 'stream' with exit code 5 and a message that says
// what to change; the password never shows.
func TestStreamSetupErrors(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	const pw, wrong = "Pw-7f3a9c-s3cret", "Wr0ng-pw-e1d2c3"
	srv.Exec(t,
		"CREATE USER 'cdc'@'127.0.0.1' IDENTIFIED BY '"+pw+"'",
		"GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'cdc'@'127.0.0.1'",
		"CREATE USER 'nopriv'@'127.0.0.1' IDENTIFIED BY '"+pw+"'",
		"CREATE USER 'monitor'@'127.0.0.1' IDENTIFIED BY '"+pw+"'",
		"GRANT BINLOG MONITOR ON *.* TO 'monitor'@'127.0.0.1'",
		"CREATE DATABASE se", "CREATE TABLE se.t (id INT PRIMARY KEY)",
	)
	dsn := func(user string) string { return "mysql://" + user + "@" + srv.Addr() }
	noSecret := func(what string, texts ...string) {
		t.Helper()
		for _, s := range texts {
			for _, p := range []string{pw, wrong} {
				if strings.Contains(s, p) {
					t.Errorf("%s: a password shows: %q", what, clip(s))
				}
			}
		}
	}

	minimal := testserver.Start(t, testserver.Options{RowMetadata: "MINIMAL"})
	for _, c := range []struct {
		name  string
		env   []string
		args  []string
		wants []string
	}{
		{"wrong password", []string{"MYSQL_PWD=" + wrong}, []string{"--source", dsn("cdc")},
			[]string{"the server refused the login", "Access denied for user 'cdc'", "hint: check the user in the DSN and the password"}},
		{"wrong password in the DSN", nil, []string{"--source", "mysql://cdc:" + wrong + "@" + srv.Addr()},
			[]string{"the server refused the login"}},
		{"no privileges", []string{"MYSQL_PWD=" + pw}, []string{"--source", dsn("nopriv")},
			[]string{"lacks a replication privilege", "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'nopriv'@'127.0.0.1'"}},
		{"no REPLICATION SLAVE", []string{"MYSQL_PWD=" + pw}, []string{"--source", dsn("monitor"), "--from", "now"},
			[]string{"lacks a replication privilege", "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'monitor'@'127.0.0.1'"}},
		{"binlog_row_metadata=MINIMAL", nil, []string{"--source", minimal.DSN()},
			[]string{"binlog_row_metadata is MINIMAL, not FULL", "SET GLOBAL binlog_row_metadata = FULL"}},
	} {
		stdout, stderr, code := runCLI(t, c.env, append([]string{"stream", "--output", filepath.Join(dir, "never.jsonl")}, c.args...)...)
		if code != 5 {
			t.Errorf("%s: exit code %d, want 5; stderr:\n%s", c.name, code, stderr)
		}
		for _, w := range c.wants {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", c.name, w, stderr)
			}
		}
		if len(stdout) != 0 {
			t.Errorf("%s: printed %q", c.name, clip(string(stdout)))
		}
		noSecret(c.name, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "never.jsonl")); len(b) != 0 {
		t.Errorf("failed starts wrote %q", clip(string(b)))
	}

	// --help and usage errors with passwords around.
	for _, args := range [][]string{
		{"stream", "--help", "--source", "mysql://cdc:" + pw + "@" + srv.Addr()},
		{"stream", "--no-such-flag", "--source", "mysql://cdc:" + pw + "@" + srv.Addr()},
		{"stream", "--source", "mysql://cdc:" + pw + "@" + srv.Addr() + ":notaport"},
		{"stream", "--source", "mysql://cdc:" + pw + "@" + srv.Addr(), "--ssl-mode", "bogus"},
	} {
		stdout, stderr, _ := runCLI(t, []string{"MYSQL_PWD=" + pw}, args...)
		noSecret(strings.Join(args[:2], " "), string(stdout), stderr)
	}

	// The right password, from the DSN, MYSQL_PWD and --password-file:
	// streaming works and the password shows nowhere.
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		env  []string
		args []string
	}{
		{nil, []string{"--source", "mysql://cdc:" + pw + "@" + srv.Addr()}},
		{[]string{"MYSQL_PWD=" + pw}, []string{"--source", dsn("cdc")}},
		{[]string{"MYSQL_PWD=" + wrong}, []string{"--source", dsn("cdc"), "--password-file", pwFile}},
	} {
		file, off := stMasterPos(t, srv)
		out, cp := filepath.Join(dir, fmt.Sprintf("ok%d.jsonl", i)), filepath.Join(dir, fmt.Sprintf("cp%d.json", i))
		r := stStart(t, dir, fmt.Sprintf("ok%d", i), c.env, append(c.args, "--start-position", fmt.Sprintf("%s:%d", file, off),
			"--checkpoint", cp, "--output", out, "--progress")...)
		srv.Exec(t, fmt.Sprintf("INSERT INTO se.t VALUES (%d)", i))
		g := stLastGTID(t, srv)
		stPoll(t, time.Minute, r, "the row", func() bool { return stHasGTID(out, g) && r.ready() })
		r.signal(syscall.SIGTERM)
		if code := r.wait(time.Minute); code != 0 {
			t.Fatalf("run %d: exit code %d; stderr:\n%s", i, code, r.errText())
		}
		cpText, _ := os.ReadFile(cp)
		outText, _ := os.ReadFile(out)
		noSecret(fmt.Sprintf("run %d", i), r.errText(), string(r.outBytes()), string(cpText), string(outText))
		if i == 0 && !strings.Contains(r.errText(), "connected to mysql://cdc:****@"+srv.Addr()+" ") {
			t.Errorf("the DSN is not shown redacted:\n%s", r.errText())
		}
	}
}
