package e2e

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

// stSpilling reports whether the process holds a spill file (sink/jsonl
// moves a transaction's lines there beyond 8 MiB) that is not empty: it is
// in the middle of a large transaction.
func stSpilling(pid int) bool {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		p := fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())
		if l, _ := os.Readlink(p); strings.Contains(l, "binlogcdc-tx-") {
			if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
				return true
			}
		}
	}
	return false
}

// TestStreamSignals: SIGINT while idle stops at once with exit code 0 and
// the checkpoint saved; SIGTERM in the middle of a large transaction
// finishes it (or drops all of it) and exits 0 with a checkpoint that
// matches the output; a stop while the server is down does not wait for
// a transaction that cannot finish. Restarting from the checkpoint each
// time, the outputs together equal 'read' without a duplicate.
func TestStreamSignals(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	srv.Exec(t, "CREATE DATABASE sg", "USE sg", "CREATE TABLE sg.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(40))")
	file, off := stMasterPos(t, srv)
	cp := filepath.Join(dir, "cp.json")
	var outs []string
	startVia := func(dsn string) *stRun {
		out := filepath.Join(dir, fmt.Sprintf("out.%d.jsonl", len(outs)))
		outs = append(outs, out)
		// TMPDIR: the spill file must be where /proc shows its name.
		return stStart(t, dir, fmt.Sprintf("run%d", len(outs)-1), []string{"TMPDIR=" + dir},
			"--source", dsn, "--start-position", fmt.Sprintf("%s:%d", file, off), "--checkpoint", cp, "--output", out)
	}
	start := func() *stRun { return startVia(srv.DSN()) }
	bigInsert := func(tag string) string {
		srv.Exec(t, fmt.Sprintf("INSERT INTO sg.t (v) SELECT CONCAT('%s ', seq) FROM seq_1_to_150000", tag))
		return stLastGTID(t, srv)
	}

	// 1. Stop before any transaction: the start point is saved, so the
	// next run neither skips nor repeats anything.
	r := start()
	stPoll(t, time.Minute, r, "the checkpoint of the start point", func() bool { _, err := os.Stat(cp); return err == nil })
	r.signal(syscall.SIGINT)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGINT before any transaction: exit code %d; stderr:\n%s", code, r.errText())
	}
	if !strings.Contains(r.errText(), fmt.Sprintf("stopped at %s:%d", file, off)) {
		t.Errorf("stderr does not say where it stopped:\n%s", r.errText())
	}
	if c := stLoadCP(t, cp); c.File != file || c.Offset != off {
		t.Errorf("checkpoint %+v after a stop before any transaction, want %s:%d", c, file, off)
	}

	// 2. SIGINT while idle.
	r = start()
	srv.Exec(t, "INSERT INTO sg.t (v) VALUES ('idle')")
	g := stLastGTID(t, srv)
	stPoll(t, time.Minute, r, "transaction "+g, func() bool { return stHasGTID(outs[1], g) && r.ready() })
	t0 := time.Now()
	r.signal(syscall.SIGINT)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGINT while idle: exit code %d; stderr:\n%s", code, r.errText())
	}
	tIdle := time.Since(t0)
	stCheckCPAtEnd(t, srv, cp, g, srv.Addr())

	// 3. SIGTERM in the middle of a large transaction. On an idle machine
	// the stream can take in the whole transaction (its spill file opened
	// and closed) before a poll sees it: the file is watched while the
	// INSERT runs, and a transaction that went by unseen (printed whole)
	// is followed by another one.
	r = start()
	stPoll(t, time.Minute, r, "the connection", r.ready)
	var whole int // lines of transactions that went by before the signal
	for attempt := 1; ; attempt++ {
		inserted := make(chan string, 1)
		go func() { inserted <- bigInsert(fmt.Sprintf("sigterm%d", attempt)) }()
		seen := false
		deadline := time.Now().Add(time.Minute)
		for g = ""; time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			if seen = stSpilling(r.cmd.Process.Pid); seen {
				break
			}
			if g == "" {
				select {
				case g = <-inserted:
				default:
				}
			}
			if g != "" && stHasGTID(outs[2], g) {
				break // gone by whole, unseen
			}
		}
		if g == "" {
			g = <-inserted
		}
		if seen {
			break
		}
		if r.exited() || attempt == 5 || !time.Now().Before(deadline) {
			t.Fatalf("the spill file of a large transaction was never seen in %d attempts; stderr:\n%s", attempt, r.errText())
		}
		whole += 150000
		t.Logf("transaction %d went by before its spill file was seen; another one", attempt)
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM in a transaction: exit code %d; stderr:\n%s", code, r.errText())
	}
	got, _ := os.ReadFile(outs[2])
	switch n := bytes.Count(got, []byte("\n")); n {
	case whole + 150000:
		stCheckCPAtEnd(t, srv, cp, g, srv.Addr())
	case whole:
		t.Logf("SIGTERM dropped the transaction")
	default:
		t.Fatalf("SIGTERM in a transaction of 150000 rows left %d of its lines (after %d lines of whole transactions)", n-whole, whole)
	}

	// 4. The server dies in the middle of a large transaction; a stop
	// while binlogcdc waits to reconnect ends at once (no transaction is
	// open any more), without the partial transaction. The server commits
	// the whole transaction before it is killed, so binlogcdc could
	// receive all of it first (and rightly print it, as it did once under
	// load): a proxy forwards only the first 1.2 MB of it (~2.7 MB in
	// all, ~65000 of its rows: enough to spill), so the crash cuts it.
	px := stStartProxy(t, srv.Addr())
	r = startVia(px.dsn())
	// "connected to" is logged after the checks' connection, before the
	// dump connection that limit must apply to: wait for the dump thread.
	stPoll(t, time.Minute, r, "the binlog dump connection", func() bool { return r.ready() && len(stDumpThreads(t, srv)) > 0 })
	before := stLoadCP(t, cp)
	px.limit(1200 << 10)
	bigInsert("crash")
	stPoll(t, time.Minute, r, "the spill file of the large transaction", func() bool { return stSpilling(r.cmd.Process.Pid) })
	srv.Kill(t)
	px.closeAll()
	stPoll(t, time.Minute, r, "a reconnect attempt", func() bool { return strings.Contains(r.errText(), "reconnecting at") })
	t0 = time.Now()
	r.signal(syscall.SIGTERM)
	if code := r.wait(20 * time.Second); code != 0 { // less than signals.go's 30 s grace for an open transaction
		t.Fatalf("SIGTERM while reconnecting: exit code %d; stderr:\n%s", code, r.errText())
	}
	tDown := time.Since(t0)
	if b, _ := os.ReadFile(outs[3]); len(b) != 0 {
		t.Errorf("the transaction cut by the crash was printed in part: %d lines", bytes.Count(b, []byte("\n")))
	}
	if after := stLoadCP(t, cp); after.File != before.File || after.Offset != before.Offset {
		t.Errorf("checkpoint moved from %+v to %+v without output", before, after)
	}
	srv.Restart(t)

	// 5. Resume: the rest, once.
	r = start()
	srv.Exec(t, "INSERT INTO sg.t (v) VALUES ('last')")
	g = stLastGTID(t, srv)
	stPoll(t, time.Minute, r, "transaction "+g, func() bool { return stHasGTID(outs[4], g) && r.ready() })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, r.errText())
	}
	stCheckCPAtEnd(t, srv, cp, g, srv.Addr())
	var all []byte
	for _, o := range outs {
		b, _ := os.ReadFile(o)
		all = append(all, b...)
	}
	ref, _, code := runCLI(t, nil, "read", "--start-position", fmt.Sprintf("%s:%d", file, off), srv.BinlogIndex())
	if code != 0 {
		t.Fatalf("read: exit code %d", code)
	}
	stSameOutput(t, "the runs stopped by signals, together", all, ref)
	t.Logf("exit %v after SIGINT while idle, %v after SIGTERM while reconnecting", tIdle.Round(time.Millisecond), tDown.Round(time.Millisecond))
}
