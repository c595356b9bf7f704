package e2e

// Stream and checkpoint safety (issue 12): source restarts under stream
// --to, checkpoints from another server, two processes on one
// checkpoint, local write failures, and -o after a failed write.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// rpAppliedUpTo reports whether the target's checkpoint (replica
// "default") is at the source's last transaction: by GTID, since the
// source may log events after it that are no transaction (a
// Binlog_checkpoint, after a rotation or a restart).
func rpAppliedUpTo(t testing.TB, dst, src *testserver.Server) bool {
	t.Helper()
	if len(dst.QueryStrings(t, "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'binlogcdc' AND TABLE_NAME = 'checkpoint'")) == 0 {
		return false
	}
	rows := dst.QueryStrings(t, "SELECT gtid FROM binlogcdc.checkpoint WHERE replica = 'default'")
	return len(rows) == 1 && *rows[0][0] == stLastGTID(t, src)
}

// TestReplayStreamSourceRestart: stream --to mysql:// lives through
// restarts of the source, a crash (SIGKILL) and a clean stop, each in the
// middle of a workload over two tables. The target's column names, looked
// up once, used to be kept in memory go-mysql reuses for later results:
// the first new TABLE_MAP after the reconnect then failed with "column
// `id`, `k` does not exist on the target".
func TestReplayStreamSourceRestart(t *testing.T) {
	t.Parallel()
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE rs",
		"CREATE TABLE rs.t (id INT PRIMARY KEY, k INT)",
		"CREATE TABLE rs.u (x INT PRIMARY KEY, y VARCHAR(20))",
		"INSERT INTO rs.t VALUES (1, 1), (2, 2)", "INSERT INTO rs.u VALUES (1, 'a')")
	dir := t.TempDir()
	r := stStart(t, dir, "s", nil, "--source", src.DSN(), "--from", "earliest", "--to", dst.DSN()+"/", "--group-time", "20ms")
	caughtUp := func() bool { return rpAppliedUpTo(t, dst, src) }
	stPoll(t, time.Minute, r, "the stream to catch up", caughtUp)
	id := 100
	for i := 0; i < 4; i++ {
		var committed atomic.Int64
		done := stWorkload(src.Conn(t), "rs", 1<<30, &committed, nil, func(j int, _ *int) []string {
			id++
			if j%2 == 0 {
				return []string{fmt.Sprintf("INSERT INTO rs.t VALUES (%d, %d)", id, j)}
			}
			return []string{"BEGIN", fmt.Sprintf("INSERT INTO rs.u VALUES (%d, 'w')", id), "UPDATE rs.t SET k = k + 1 WHERE id = 1", "COMMIT"}
		})
		stPoll(t, time.Minute, r, "the workload", func() bool { return committed.Load() >= 100 })
		if i%2 == 0 {
			src.Kill(t)
		} else {
			src.Stop(t)
		}
		<-done // ends with the lost connection
		src.Restart(t)
		src.Exec(t, fmt.Sprintf("INSERT INTO rs.t VALUES (%d, %d)", 10+i, i), "UPDATE rs.t SET k = k + 1 WHERE id = 2")
		stPoll(t, time.Minute, r, fmt.Sprintf("the stream to catch up after source restart %d", i+1), caughtUp)
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}
	rpCompare(t, src, dst, "stream --to through source restarts")
}

// stRunStreamToEnd runs a stream with args until it printed transaction
// gtid into out, then stops it with SIGTERM (exit 0 expected).
func stRunStreamToEnd(t *testing.T, dir, tag, out, gtid string, args ...string) *stRun {
	t.Helper()
	r := stStart(t, dir, tag, nil, args...)
	stPoll(t, time.Minute, r, "transaction "+gtid, func() bool { return stHasGTID(out, gtid) && r.ready() })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("%s: SIGTERM: exit code %d; stderr:\n%s", tag, code, r.errText())
	}
	return r
}

// TestStreamForeignCheckpoint: a checkpoint written against server A is
// refused on server B, which has a binlog of the same name but another
// history (exit 5, nothing printed, the checkpoint and output untouched),
// on server C, which never had its binlog (not "purged": it is not C's),
// and on server D, whose binlog has the same GTIDs at the same positions
// (the same server_id, the same statements) but other XIDs. Before, B resumed at its own file of that name and skipped B's
// earlier changes, and overwrote the checkpoint's server.
func TestStreamForeignCheckpoint(t *testing.T) {
	t.Parallel()
	a := testserver.Start(t, testserver.Options{})
	b := testserver.Start(t, testserver.Options{})
	c := testserver.Start(t, testserver.Options{})
	d := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	// D (server_id 1 like A) runs A's statements, after some queries of
	// its own: the same GTIDs at the same positions, other XIDs.
	d.Exec(t, "SELECT 1", "SELECT 2", "SELECT 3")
	for _, srv := range []*testserver.Server{a, b, c, d} {
		srv.Exec(t, "CREATE DATABASE fc", "CREATE TABLE fc.t (id INT PRIMARY KEY, who VARCHAR(10))")
	}
	for _, srv := range []*testserver.Server{a, d} {
		for i := 1; i <= 20; i++ {
			srv.Exec(t, fmt.Sprintf("INSERT INTO fc.t VALUES (%d, 'a')", i))
		}
		srv.FlushLogs(t)
		srv.Exec(t, "INSERT INTO fc.t VALUES (100, 'a')")
	}
	b.FlushLogs(t) // B has a binlog.000002 too, with other transactions
	b.Exec(t, "INSERT INTO fc.t VALUES (1, 'b')", "INSERT INTO fc.t VALUES (2, 'b')")
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	args := func(srv *testserver.Server) []string {
		return []string{"--source", srv.DSN(), "--from", "earliest", "--checkpoint", cp, "--output", out}
	}
	stRunStreamToEnd(t, dir, "a", out, stLastGTID(t, a), args(a)...)
	stCheckCPAtEnd(t, a, cp, stLastGTID(t, a), a.Addr())
	cpBefore, _ := os.ReadFile(cp)
	outBefore, _ := os.ReadFile(out)
	if cpA := stLoadCP(t, cp); cpA.File != "binlog.000002" || cpA.LastXid == 0 {
		t.Fatalf("the checkpoint is %+v, want one in binlog.000002 (B has one too), with an xid", cpA)
	}
	c.Exec(t, "INSERT INTO fc.t VALUES (1, 'c')")
	cpA := stLoadCP(t, cp)
	if at := stVal(t, d, fmt.Sprintf("SELECT BINLOG_GTID_POS('%s', %d)", cpA.File, cpA.Offset)); at != cpA.GTIDSet {
		t.Fatalf("on D the checkpoint's position ends GTID position %s, not %s as on A", at, cpA.GTIDSet)
	}

	for _, srv := range []*testserver.Server{b, c, d} {
		why := "has not logged its GTID position " + stLastGTID(t, a)
		if srv == d {
			why = fmt.Sprintf("its last transaction %s (xid %d) is another one than this server's", cpA.LastGTID, cpA.LastXid)
		}
		stdout, stderr, code := runCLI(t, nil, append([]string{"stream"}, args(srv)...)...)
		if code != 5 {
			t.Errorf("%s: exit code %d, want 5; stderr:\n%s", srv.Addr(), code, stderr)
		}
		for _, w := range []string{"the checkpoint in " + cp + " (binlog.000002:", "saved against " + a.Addr(),
			"does not belong to this server (" + srv.Addr() + ")", why, "hint: "} {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", srv.Addr(), w, stderr)
			}
		}
		if strings.Contains(stderr, "purged") {
			t.Errorf("%s: a checkpoint of another server diagnosed as purged:\n%s", srv.Addr(), stderr)
		}
		if len(stdout) != 0 {
			t.Errorf("%s: printed %q", srv.Addr(), clip(string(stdout)))
		}
	}
	if b, _ := os.ReadFile(cp); !bytes.Equal(b, cpBefore) {
		t.Errorf("the checkpoint changed:\n%s\nwas:\n%s", b, cpBefore)
	}
	if b, _ := os.ReadFile(out); !bytes.Equal(b, outBefore) {
		t.Errorf("the output changed: %d bytes, was %d", len(b), len(outBefore))
	}
}

// TestStreamFailoverByGTID: a checkpoint written against server A
// resumes on R, a replica of A (MariaDB GTID replication,
// log_slave_updates) promoted after A is gone: R's history holds the
// checkpoint's GTIDs, so the stream resumes after them by GTID, although
// R's binlog files and offsets differ. A reconnect before the first
// transaction goes by GTID again (a dump started by GTID announces the
// file at offset 4, which is no resume point). It prints exactly R's own
// transactions, and its checkpoint then names R's binlog.
func TestStreamFailoverByGTID(t *testing.T) {
	t.Parallel()
	a := testserver.Start(t, testserver.Options{})
	r := testserver.Start(t, testserver.Options{ExtraArgs: []string{"--server-id=2", "--log-slave-updates=ON"}})
	// R logs A's transactions in its binlog.000002: the checkpoint's
	// binlog.000001:POS is no position in R's history (a replica's files
	// match its primary's only by chance).
	r.FlushLogs(t)
	r.Exec(t, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_USE_GTID=slave_pos", a.Port),
		"START SLAVE")
	a.Exec(t, "CREATE DATABASE fo", "CREATE TABLE fo.t (id INT PRIMARY KEY, who VARCHAR(10))")
	for i := 1; i <= 10; i++ {
		a.Exec(t, fmt.Sprintf("INSERT INTO fo.t VALUES (%d, 'a')", i))
	}
	caughtUp := func() bool { return stLastGTID(t, r) == stLastGTID(t, a) }
	stPoll(t, time.Minute, nil, "the replica to catch up", caughtUp)
	dir := t.TempDir()
	cp := filepath.Join(dir, "cp.json")
	outA := filepath.Join(dir, "a.jsonl")
	stRunStreamToEnd(t, dir, "a", outA, stLastGTID(t, a), "--source", a.DSN(), "--from", "earliest", "--checkpoint", cp, "--output", outA)
	aLast := stLastGTID(t, a)
	stCheckCPAtEnd(t, a, cp, aLast, a.Addr())

	// Failover: A is gone, R is promoted.
	a.Stop(t)
	r.Exec(t, "STOP SLAVE", "RESET SLAVE ALL")
	out := filepath.Join(dir, "r.jsonl")
	s := stStart(t, dir, "r", nil, "--source", r.DSN(), "--checkpoint", cp, "--output", out)
	idle := func() bool {
		return len(r.QueryStrings(t, "SELECT 1 FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%' AND STATE LIKE 'Master has sent all binlog%'")) == 1
	}
	stPoll(t, time.Minute, s, "the stream to wait on R", func() bool { return s.ready() && idle() })
	for _, w := range []string{"(saved against " + a.Addr() + ") is not where its last transaction " + aLast + " ends in this server's binlog",
		"resuming after it by GTID", "after GTID position " + aLast} {
		if !strings.Contains(s.errText(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, s.errText())
		}
	}
	ids := stDumpThreads(t, r)
	r.Exec(t, "KILL "+ids[0])
	stPoll(t, time.Minute, s, "the reconnect", func() bool { return strings.Contains(s.errText(), "reconnecting") && idle() })
	for i := 1; i <= 5; i++ {
		r.Exec(t, fmt.Sprintf("INSERT INTO fo.t VALUES (%d, 'r')", 100+i))
	}
	r.Exec(t, "UPDATE fo.t SET who = 'r2' WHERE id < 5")
	rLast := stLastGTID(t, r)
	stPoll(t, time.Minute, s, "R's transactions", func() bool { return stHasGTID(out, rLast) })
	s.signal(syscall.SIGTERM)
	if code := s.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d; stderr:\n%s", code, s.errText())
	}
	// R's own transactions (server id 2), as read prints them from R's binlogs.
	var want []byte
	for _, l := range bytes.SplitAfter(stRead(t, r), []byte("\n")) {
		if bytes.Contains(l, []byte(`"gtid":"0-2-`)) {
			want = append(want, l...)
		}
	}
	got, _ := os.ReadFile(out)
	stSameOutput(t, "the stream resumed on the promoted replica", got, want)
	stCheckCPAtEnd(t, r, cp, rLast, r.Addr())
}

// stReplicaID is the replica server_id a stream reported in its stderr.
func stReplicaID(t testing.TB, r *stRun) string {
	t.Helper()
	const k = "as replica server_id "
	s := r.errText()
	i := strings.Index(s, k)
	if i < 0 {
		t.Fatalf("no %q in stderr:\n%s", k, s)
	}
	id, _, _ := strings.Cut(s[i+len(k):], "\n")
	return id
}

// TestStreamOneProcessPerCheckpoint: a second stream on a checkpoint in
// use refuses at once, naming the first one's PID, without connecting.
// Streams that may run side by side get different replica server_ids: two
// with --checkpoint cp.json in different directories, two without a
// checkpoint. (Two with one server_id knock each other off the server,
// ERROR 4052, and both reconnect over and over.) Each prints what read
// prints, without a reconnect.
func TestStreamOneProcessPerCheckpoint(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE op", "CREATE TABLE op.t (id INT PRIMARY KEY)")
	dir := t.TempDir()
	cp := filepath.Join(dir, "cp.json")
	first := stStart(t, dir, "first", nil, "--source", srv.DSN(), "--from", "earliest", "--checkpoint", cp, "--output", filepath.Join(dir, "first.jsonl"))
	stPoll(t, time.Minute, first, "the first stream to connect", first.ready)
	second := stStart(t, dir, "second", nil, "--source", srv.DSN(), "--from", "earliest", "--checkpoint", cp)
	code := second.wait(time.Minute)
	stdout, stderr := second.outBytes(), second.errText()
	if code != 1 || len(stdout) != 0 {
		t.Errorf("second stream on the checkpoint: exit %d, printed %q", code, clip(string(stdout)))
	}
	for _, w := range []string{"checkpoint " + cp + " is in use by another binlogcdc", fmt.Sprintf("PID %d holds %s.lock", first.cmd.Process.Pid, cp)} {
		if !strings.Contains(stderr, w) {
			t.Errorf("second stream: stderr lacks %q:\n%s", w, stderr)
		}
	}
	if strings.Contains(stderr, "connected to") {
		t.Errorf("the second stream connected before refusing:\n%s", stderr)
	}

	// Side by side: the same relative --checkpoint in two directories, and
	// two streams to stdout.
	var runs []*stRun
	var outs []string
	for i := 0; i < 2; i++ {
		wd := filepath.Join(dir, fmt.Sprint("wd", i))
		os.Mkdir(wd, 0o755)
		out := filepath.Join(wd, "out.jsonl")
		runs = append(runs, stStartWith(t, dir, fmt.Sprint("cp", i), func(c *exec.Cmd) { c.Dir = wd },
			"--source", srv.DSN(), "--from", "earliest", "--checkpoint", "cp.json", "--output", out))
		outs = append(outs, out)
	}
	for i := 0; i < 2; i++ {
		r := stStart(t, dir, fmt.Sprint("stdout", i), nil, "--source", srv.DSN(), "--from", "earliest")
		runs = append(runs, r)
		outs = append(outs, r.stdout)
	}
	for _, r := range runs {
		stPoll(t, time.Minute, r, "the streams to connect", r.ready)
	}
	for i := 1; i <= 20; i++ {
		srv.Exec(t, fmt.Sprintf("INSERT INTO op.t VALUES (%d)", i))
	}
	last := stLastGTID(t, srv)
	ids := map[string]int{}
	for i, r := range append(runs, first) {
		if i < len(outs) {
			stPoll(t, time.Minute, r, "all rows", func() bool { return stHasGTID(outs[i], last) })
		}
		ids[stReplicaID(t, r)]++
	}
	for i, r := range runs {
		r.signal(syscall.SIGTERM)
		if code := r.wait(time.Minute); code != 0 {
			t.Errorf("stream %d: exit %d; stderr:\n%s", i, code, r.errText())
		}
		if strings.Contains(r.errText(), "reconnecting") {
			t.Errorf("stream %d was knocked off the server:\n%s", i, r.errText())
		}
		got, _ := os.ReadFile(outs[i])
		stSameOutput(t, fmt.Sprint("stream ", i), got, stRead(t, srv))
	}
	if len(ids) != 5 {
		t.Errorf("5 streams side by side used the replica server_ids %v", ids)
	}
}

// stWant checks a stream's exit code and stderr.
func stWant(t *testing.T, r *stRun, code int, has, hasNot []string) {
	t.Helper()
	if got := r.wait(time.Minute); got != code {
		t.Errorf("exit code %d, want %d; stderr:\n%s", got, code, r.errText())
	}
	for _, w := range has {
		if !strings.Contains(r.errText(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.errText())
		}
	}
	for _, w := range hasNot {
		if strings.Contains(r.errText(), w) {
			t.Errorf("stderr has %q:\n%s", w, r.errText())
		}
	}
}

// TestStreamCheckpointWriteFails: a checkpoint that cannot be saved (its
// directory is gone) stops the stream at once with exit 1 and the cause,
// and says what the checkpoint holds; it is not taken for a lost
// connection. With --checkpoint-interval, the save at a SIGINT fails the
// same way, instead of exit 0 and "stopped at" a position the file does
// not hold.
func TestStreamCheckpointWriteFails(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE wf", "CREATE TABLE wf.t (id INT PRIMARY KEY)")
	dir := t.TempDir()
	for _, interval := range []string{"0s", "1h"} {
		cpDir := filepath.Join(dir, "cp-"+interval)
		os.Mkdir(cpDir, 0o755)
		cp, out := filepath.Join(cpDir, "cp.json"), filepath.Join(dir, "out-"+interval+".jsonl")
		r := stStart(t, dir, "run-"+interval, nil, "--source", srv.DSN(), "--from", "earliest", "--checkpoint", cp,
			"--checkpoint-interval", interval, "--output", out)
		srv.Exec(t, "INSERT INTO wf.t SELECT COALESCE(MAX(id), 0) + 1 FROM wf.t")
		g := stLastGTID(t, srv)
		// The line is out before its checkpoint is saved: wait for the save
		// (with 1h, the start point saved before the row stays).
		stPoll(t, time.Minute, r, "the first row", func() bool {
			return stHasGTID(out, g) && r.ready() && (interval != "0s" || stLoadCP(t, cp).LastGTID == g)
		})
		held := stLoadCP(t, cp)
		if interval != "0s" && held.LastGTID != "" {
			t.Fatalf("with --checkpoint-interval 1h, the row's checkpoint was saved: %+v", held)
		}
		if err := os.Rename(cpDir, cpDir+".gone"); err != nil {
			t.Fatal(err)
		}
		if interval == "0s" {
			srv.Exec(t, "INSERT INTO wf.t SELECT MAX(id) + 1 FROM wf.t")
		} else {
			r.signal(syscall.SIGINT)
		}
		// The first file written fails: the schema history beside the
		// checkpoint (cp.json.schema-history), or the checkpoint itself.
		stWant(t, r, 1, []string{"cannot write the ", cp, "no such file or directory",
			fmt.Sprintf("stopped: the checkpoint holds %s:%d", held.File, held.Offset)}, []string{"reconnecting", "stopped at"})
		if got := stLoadCP(t, filepath.Join(cpDir+".gone", "cp.json")); !reflect.DeepEqual(got, held) {
			t.Errorf("interval %s: the checkpoint changed: %+v, was %+v", interval, got, held)
		}
	}
}

// TestStreamOutputFull: -o on a full disk (a file size limit: writes fail
// with EFBIG after a short write, as with ENOSPC) stops the stream with
// exit 1 and the cause; it never reconnects over it. The failed write
// leaves part of a transaction at the end of the file; a restart cuts the
// file back to the last checkpointed transaction and writes on from there,
// so the file holds whole lines of whole transactions, each once: what
// read prints.
func TestStreamOutputFull(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t, "CREATE DATABASE of", "CREATE TABLE of.t (id INT PRIMARY KEY, v VARCHAR(1000))")
	dir := t.TempDir()
	cp, out := filepath.Join(dir, "cp.json"), filepath.Join(dir, "out.jsonl")
	args := []string{"--source", srv.DSN(), "--from", "earliest", "--checkpoint", cp, "--output", out}
	const limit = 64 * 512 // ulimit -f counts 512-byte blocks
	full := stStartWith(t, dir, "full", func(c *exec.Cmd) {
		c.Args = append([]string{"sh", "-c", `ulimit -f 64 && exec "$0" "$@"`, c.Path}, c.Args[1:]...)
		c.Path = "/bin/sh"
	}, args...)
	stPoll(t, time.Minute, full, "the stream to connect", full.ready)
	for i := 1; i <= 1000 && !full.exited(); i++ {
		// One line of 300 to 1000 bytes per transaction.
		srv.Exec(t, fmt.Sprintf("INSERT INTO of.t VALUES (%d, REPEAT('x', %d))", i, 200+i*37%700))
	}
	stWant(t, full, 1, []string{"cannot write -o " + out, "file too large", "stopped: the checkpoint holds"}, []string{"reconnecting", "stopped at"})
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	held := stLoadCP(t, cp)
	if st.Size() != limit || held.OutputSize > limit || held.Output != out {
		t.Errorf("the full file holds %d bytes (limit %d), the checkpoint records %s with %d", st.Size(), limit, held.Output, held.OutputSize)
	}
	var cut []string
	if held.OutputSize < limit { // unless the last whole transaction ended right at the limit
		cut = []string{fmt.Sprintf("cut off the %d bytes after the checkpoint", limit-held.OutputSize)}
	}
	t.Logf("the failed write left %d bytes after the checkpoint", limit-held.OutputSize)

	// A restart without the limit.
	r := stStart(t, dir, "after", nil, args...)
	srv.Exec(t, "INSERT INTO of.t VALUES (0, 'the end')")
	g := stLastGTID(t, srv)
	stPoll(t, time.Minute, r, "the last row", func() bool { return stHasGTID(out, g) })
	r.signal(syscall.SIGTERM)
	stWant(t, r, 0, cut, nil)
	got, _ := os.ReadFile(out)
	stSameOutput(t, "-o after a full disk and a restart", got, stRead(t, srv))
	stCheckCPAtEnd(t, srv, cp, g, srv.Addr())
}

// TestReplayStreamForeignSource: stream --to resumes from the target's
// checkpoint only on the source it belongs to: with another source, which
// has a binlog of that name, it stops with exit 5 before applying
// anything (it used to resume at that position in the other server's
// binlog).
func TestReplayStreamForeignSource(t *testing.T) {
	t.Parallel()
	a := testserver.Start(t, testserver.Options{})
	// Another server (server_id 7): its GTIDs are 0-7-N. (Two servers
	// with one server_id and domain log the same GTIDs for different
	// transactions: then only the binlog positions can tell them apart.)
	b := testserver.Start(t, testserver.Options{ExtraArgs: []string{"--server-id=7"}})
	dst := testserver.Start(t, testserver.Options{})
	for _, srv := range []*testserver.Server{a, b} {
		srv.Exec(t, "CREATE DATABASE fs", "CREATE TABLE fs.t (id INT PRIMARY KEY, who VARCHAR(10))")
	}
	for i := 1; i <= 5; i++ {
		a.Exec(t, fmt.Sprintf("INSERT INTO fs.t VALUES (%d, 'a')", i))
	}
	// B's first transactions have the sizes of A's: A's end is an event
	// boundary in B's binlog.000001, before B's transactions 6 to 10.
	for i := 1; i <= 10; i++ {
		b.Exec(t, fmt.Sprintf("INSERT INTO fs.t VALUES (%d, 'b')", i))
	}
	dir := t.TempDir()
	r := stStart(t, dir, "a", nil, "--source", a.DSN(), "--from", "earliest", "--to", dst.DSN()+"/", "--group-time", "20ms")
	stPoll(t, time.Minute, r, "the target to catch up", func() bool { return rpAppliedUpTo(t, dst, a) })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("exit %d:\n%s", code, r.errText())
	}
	before := rpSnapshot(t, dst)
	cpBefore := rpCheckpoint(t, dst)
	r = stStart(t, dir, "b", nil, "--source", b.DSN(), "--to", dst.DSN()+"/")
	if code := r.wait(time.Minute); code != 5 {
		t.Errorf("exit code %d, want 5; stderr:\n%s", code, r.errText())
	}
	stderr := r.errText()
	for _, w := range []string{`the checkpoint in the target's binlogcdc.checkpoint (replica "default")`, "does not belong to this server (" + b.Addr() + ")"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	rpSame(t, "the target after the refused run", rpSnapshot(t, dst), before)
	if got := rpCheckpoint(t, dst); got != cpBefore {
		t.Errorf("the target's checkpoint moved: %s, was %s", got, cpBefore)
	}
}
