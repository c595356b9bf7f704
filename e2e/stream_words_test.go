package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestStreamSQLStopIsClean (issue 27): stream --format sql stopped by
// SIGTERM exits 0, and its summary says what it wrote, not that it
// "stopped with an error".
func TestStreamSQLStopIsClean(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE ws", "CREATE TABLE ws.t (id INT PRIMARY KEY, v VARCHAR(20))")
	dir := t.TempDir()
	r := stStart(t, dir, "sql", nil, "--source", src.DSN(), "--from", "now", "--format", "sql")
	stPoll(t, time.Minute, r, "the connection", r.ready)
	src.Exec(t, "INSERT INTO ws.t VALUES (1, 'one')")
	stPoll(t, time.Minute, r, "the INSERT on stdout", func() bool { return strings.Contains(string(r.outBytes()), "'one'") })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d after SIGTERM:\n%s", code, r.errText())
	}
	if e := r.errText(); strings.Contains(e, "error") || !strings.Contains(e, "binlogcdc: wrote SQL for 1 rows of 1 transactions") {
		t.Errorf("a clean stop's summary, want \"wrote SQL for 1 rows of 1 transactions\" and no error:\n%s", e)
	}
}

// TestReplayConflictSaidOnce (issue 27): a replay conflict is printed
// once on stderr, by read --to and by stream --to, not once when hit and
// again after the summary.
func TestReplayConflictSaidOnce(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE wc", "CREATE TABLE wc.t (id INT PRIMARY KEY, v VARCHAR(20))")
	dst.Exec(t, "CREATE DATABASE wc", "CREATE TABLE wc.t (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO wc.t VALUES (1, 'in the way')")
	file, off := stMasterPos(t, src)
	start := fmt.Sprintf("%s:%d", file, off)
	src.Exec(t, "INSERT INTO wc.t VALUES (1, 'one')")
	check := func(what, stderr string) {
		t.Helper()
		if n := strings.Count(stderr, "duplicate"); n != 1 || !strings.Contains(stderr, "conflict: insert of `wc`.`t`") {
			t.Errorf("%s: the conflict is said %d times, want once:\n%s", what, n, stderr)
		}
	}
	_, errs, code := runCLI(t, nil, "read", src.BinlogIndex(), "--start-position", start, "--to", dst.DSN()+"/", "--replica-name", "read")
	if code == 0 {
		t.Fatalf("read --to: exit 0 despite the conflict:\n%s", errs)
	}
	check("read --to", errs)
	_, errs, code = runCLI(t, nil, "read", src.BinlogIndex(), "--start-position", start, "--to", dst.DSN()+"/", "--replica-name", "par", "--parallel", "2")
	if code == 0 {
		t.Fatalf("read --to --parallel 2: exit 0 despite the conflict:\n%s", errs)
	}
	check("read --to --parallel 2", errs)
	r := stStart(t, t.TempDir(), "to", nil, "--source", src.DSN(), "--start-position", start, "--to", dst.DSN()+"/", "--replica-name", "stream")
	if code := r.wait(time.Minute); code == 0 {
		t.Fatalf("stream --to: exit 0 despite the conflict:\n%s", r.errText())
	}
	check("stream --to", r.errText())
}

// TestStreamPurgedHintWorks (issue 27): a checkpoint whose binlogs were
// purged is refused (exit 5) with a hint that says how to remove that
// checkpoint (it wins over --from): following it literally, with the
// same command and --from earliest, goes on from the oldest binlog. For
// --checkpoint FILE and for the --to target's row.
func TestStreamPurgedHintWorks(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE wp", "CREATE TABLE wp.t (id INT PRIMARY KEY, v VARCHAR(20))")
	dst.Exec(t, "CREATE DATABASE wp", "CREATE TABLE wp.t (id INT PRIMARY KEY, v VARCHAR(20))")
	dir := t.TempDir()
	cp := filepath.Join(dir, "cp.json")
	id := 0
	for _, sk := range []string{"file", "to"} {
		args := []string{"--source", src.DSN(), "--tables", "wp.t"}
		var hint string
		follow := func() {}
		if sk == "file" {
			args = append(args, "--checkpoint", cp)
			hint = "first move " + cp + " away"
			follow = func() { os.Rename(cp, cp+".old") }
		} else {
			args = append(args, "--to", dst.DSN()+"/", "--replica-name", "p'q")
			hint = "first delete it on the target (DELETE FROM binlogcdc.checkpoint WHERE replica = 'p''q')"
			follow = func() { dst.Exec(t, "DELETE FROM binlogcdc.checkpoint WHERE replica = 'p''q'") }
		}
		insert := func() (string, uint64) {
			id++
			src.Exec(t, fmt.Sprintf("INSERT INTO wp.t VALUES (%d, '%s %d')", id, sk, id))
			return stTxEnd(t, src, stLastGTID(t, src))
		}
		r := stStart(t, dir, sk+"-1", nil, append(args, "--from", "now")...)
		stPoll(t, time.Minute, r, "the start to be saved", func() bool {
			if sk == "file" {
				c, _ := checkpoint.Load(cp)
				return c != nil
			}
			return stVal(t, dst, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'binlogcdc' AND TABLE_NAME = 'checkpoint'") == "1" &&
				stVal(t, dst, "SELECT COUNT(*) FROM binlogcdc.checkpoint WHERE replica = 'p''q' AND file <> ''") == "1"
		})
		f, end := insert()
		stPoll(t, time.Minute, r, "the row", func() bool {
			if sk == "file" {
				c, _ := checkpoint.Load(cp)
				return c != nil && c.File == f && c.Offset == end
			}
			return stVal(t, dst, "SELECT COUNT(*) FROM wp.t WHERE id = "+fmt.Sprint(id)) == "1"
		})
		r.signal(syscall.SIGTERM)
		if code := r.wait(time.Minute); code != 0 {
			t.Fatalf("%s: exit %d:\n%s", sk, code, r.errText())
		}
		insert() // lost with the purge
		src.Exec(t, "FLUSH BINARY LOGS")
		file, _ := stMasterPos(t, src)
		stPurgeTo(t, src, file)

		r = stStart(t, dir, sk+"-2", nil, append(args, "--from", "now")...)
		if code := r.wait(time.Minute); code != 5 || !strings.Contains(r.errText(), hint) || !strings.Contains(r.errText(), "with --from earliest") {
			t.Fatalf("%s: the purged checkpoint: exit %d, want 5 and a hint %q … --from earliest:\n%s", sk, code, hint, r.errText())
		}
		follow()
		r = stStart(t, dir, sk+"-3", nil, append(args, "--from", "earliest")...)
		stPoll(t, time.Minute, r, "the connection", r.ready)
		f, end = insert()
		stPoll(t, time.Minute, r, "the row after the gap", func() bool {
			if sk == "file" {
				c, _ := checkpoint.Load(cp)
				return c != nil && c.File == f && c.Offset == end
			}
			return stVal(t, dst, "SELECT COUNT(*) FROM wp.t WHERE id = "+fmt.Sprint(id)) == "1"
		})
		r.signal(syscall.SIGTERM)
		if code := r.wait(time.Minute); code != 0 {
			t.Fatalf("%s: following the hint: exit %d:\n%s", sk, code, r.errText())
		}
	}
}

// TestServerReachedIsNamed (issue 27): a DSN's port defaults to 3306, so
// the commands say which server they reached: stream's first line names
// the source's address, and read --to and stream --to name the target's
// address, version and server_id before writing; --help says the port
// is optional.
func TestServerReachedIsNamed(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE wn", "CREATE TABLE wn.t (id INT PRIMARY KEY)", "INSERT INTO wn.t VALUES (1)")
	dst.Exec(t, "SET GLOBAL server_id = 77")
	target := fmt.Sprintf("binlogcdc: target: %s (%s, server_id 77), as replica ", dst.Addr(), stVal(t, dst, "SELECT VERSION()"))
	_, errs, code := runCLI(t, nil, "read", src.BinlogIndex(), "--to", dst.DSN()+"/")
	if code != 0 || !strings.HasPrefix(errs, target+`"default"`) {
		t.Errorf("read --to: exit %d, want the first line to start %q:\n%s", code, target, errs)
	}
	r := stStart(t, t.TempDir(), "s", nil, "--source", src.DSN(), "--to", dst.DSN()+"/", "--replica-name", "s")
	stPoll(t, time.Minute, r, "the connection", r.ready)
	stPoll(t, time.Minute, r, "the target line", func() bool { return strings.Contains(r.errText(), target+`"s"`) })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 || !strings.Contains(r.errText(), "connected to "+src.DSN()+" at "+src.Addr()+" (") {
		t.Errorf("stream: exit %d, want the source's address in the connected line:\n%s", code, r.errText())
	}
	for _, cmd := range []string{"read", "stream", "recover", "verify"} {
		_, help, _ := runCLI(t, nil, cmd, "--help")
		if !strings.Contains(help, "port 3306 when left out") {
			t.Errorf("%s --help does not say that the port defaults to 3306", cmd)
		}
	}
}

// TestStreamCutOutputBeforeConnecting (issue 27): stream -o F, where F's
// last line has no newline and no checkpoint records F, is refused
// before connecting (the source here cannot be reached), with the same
// exit code (1) and message as the refusal after connecting, and F is
// left as it was.
func TestStreamCutOutputBeforeConnecting(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jsonl")
	data := "{\"op\":\"insert\"}\n{\"op\":\"ins"
	if err := os.WriteFile(out, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {"--checkpoint", filepath.Join(dir, "cp.json")}} {
		args := append([]string{"stream", "--source", "mysql://u@127.0.0.1:1", "-o", out}, extra...)
		_, errs, code := runCLI(t, nil, args...)
		if code != 1 || !strings.Contains(errs, "-o "+out+" ends in a cut line (the last 10 bytes have no newline)") || strings.Contains(errs, "127.0.0.1:1") {
			t.Errorf("%v: exit %d, want 1 and the cut line, before connecting:\n%s", args, code, errs)
		}
		if b, _ := os.ReadFile(out); string(b) != data {
			t.Errorf("%v: changed -o: %q", args, b)
		}
	}
}

// TestStartPositionHints (issue 27): a JSON line's pos.offset is a rows
// event inside its transaction: read and stream --start-position there
// stop with exit code 4, as the README says, and the hints no longer
// offer it as a start; the start they name (the Pos of a Gtid row of SHOW
// BINLOG EVENTS) works.
func TestStartPositionHints(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE wh", "CREATE TABLE wh.t (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO wh.t VALUES (1, 'hinted')")
	out := stRead(t, src, "--tables", "wh.t")
	m := regexp.MustCompile(`"hinted".*"pos":\{"file":"([^"]+)","offset":(\d+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("no line of the row:\n%s", out)
	}
	file := m[1]
	off, _ := strconv.ParseUint(m[2], 10, 64)
	rowPos := fmt.Sprintf("%s:%d", file, off)
	_, errs, code := runCLI(t, nil, "read", src.BinlogIndex(), "--start-position", rowPos)
	if code != 4 || !strings.Contains(errs, "TABLE_MAP_EVENT was not read") {
		t.Errorf("read --start-position %s (a rows event): exit %d, want 4:\n%s", rowPos, code, errs)
	}
	r := stStart(t, t.TempDir(), "s", nil, "--source", src.DSN(), "--start-position", rowPos)
	if code := r.wait(time.Minute); code != 4 {
		t.Errorf("stream --start-position %s (a rows event): exit %d, want 4 (README):\n%s", rowPos, code, r.errText())
	}
	_, errs, code = runCLI(t, nil, "read", src.BinlogIndex(), "--start-position", fmt.Sprintf("%s:%d", file, off+1))
	if code != 1 || strings.Contains(errs, "the pos.offset of a JSON line,") || !strings.Contains(errs, "the Pos of a Gtid row of SHOW BINLOG EVENTS IN '"+file+"'") {
		t.Errorf("read --start-position inside an event: exit %d, want 1 and a hint that names a transaction start:\n%s", code, errs)
	}
	// The hint's start: the Gtid event before the row's.
	gtidPos := ""
	for _, ev := range src.QueryStrings(t, "SHOW BINLOG EVENTS IN '"+file+"'") {
		if p, _ := strconv.ParseUint(*ev[1], 10, 64); *ev[2] == "Gtid" && p < off {
			gtidPos = *ev[1]
		}
	}
	got, errs, code := runCLI(t, nil, "read", src.BinlogIndex(), "--start-position", file+":"+gtidPos, "--tables", "wh.t")
	if code != 0 || !strings.Contains(string(got), "hinted") {
		t.Errorf("read --start-position %s:%s (the Gtid event): exit %d:\n%s\n%s", file, gtidPos, code, got, errs)
	}
}
