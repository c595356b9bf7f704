package e2e

// Helpers of the stream tests (stream_test.go): running the CLI as a
// subprocess, polling its output and checkpoint, and the oracles.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/go-mysql-org/go-mysql/client"
)

// stRun is one 'binlogcdc stream' process.
type stRun struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdout string // file receiving stdout
	stderr string // file receiving stderr
	done   chan struct{}
	state  *os.ProcessState
	killed bool // ended by kill -9 from the test
}

// stStart starts 'binlogcdc stream args...' with extra environment entries;
// stdout and stderr go to files in dir named after tag.
func stStart(t testing.TB, dir, tag string, env []string, args ...string) *stRun {
	t.Helper()
	return stStartWith(t, dir, tag, func(c *exec.Cmd) { c.Env = append(os.Environ(), env...) }, args...)
}

// stStartWith is stStart with setup changing the command before it starts
// (its working directory, a wrapper).
func stStartWith(t testing.TB, dir, tag string, setup func(*exec.Cmd), args ...string) *stRun {
	t.Helper()
	r := &stRun{t: t, stdout: filepath.Join(dir, tag+".stdout"), stderr: filepath.Join(dir, tag+".stderr"), done: make(chan struct{})}
	so, err := os.Create(r.stdout)
	if err != nil {
		t.Fatal(err)
	}
	defer so.Close()
	se, err := os.Create(r.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer se.Close()
	r.cmd = exec.Command(cliBinary(t), append([]string{"stream"}, args...)...)
	setup(r.cmd)
	r.cmd.Stdout, r.cmd.Stderr = so, se
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.cmd.Wait()
		r.state = r.cmd.ProcessState
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			r.cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

func (r *stRun) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func (r *stRun) signal(sig os.Signal) {
	r.t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		r.t.Fatal(err)
	}
}

// kill9 sends SIGKILL and waits for the process to be gone.
func (r *stRun) kill9() {
	r.killed = true
	r.cmd.Process.Kill()
	<-r.done
}

// wait waits (at most timeout, a hang guard, not a timing assertion) for
// the process to exit and returns its exit code.
func (r *stRun) wait(timeout time.Duration) int {
	r.t.Helper()
	select {
	case <-r.done:
	case <-time.After(timeout):
		r.cmd.Process.Kill()
		<-r.done
		r.t.Fatalf("binlogcdc stream did not exit within %v; stderr:\n%s", timeout, r.errText())
	}
	return r.state.ExitCode()
}

// ready reports whether the process connected (and so handles signals).
func (r *stRun) ready() bool { return strings.Contains(r.errText(), "binlogcdc: connected to ") }

func (r *stRun) errText() string  { b, _ := os.ReadFile(r.stderr); return string(b) }
func (r *stRun) outBytes() []byte { b, _ := os.ReadFile(r.stdout); return b }

// vmHWM returns the process's peak resident set size in KiB.
func (r *stRun) vmHWM() int {
	r.t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.cmd.Process.Pid))
	if err != nil {
		r.t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	r.t.Fatal("no VmHWM in /proc status")
	return 0
}

// stPoll calls cond every 20 ms until it holds; after timeout (a hang
// guard) it fails the test. A stream that exits meanwhile fails it too.
func stPoll(t testing.TB, timeout time.Duration, r *stRun, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if r != nil && r.exited() {
			t.Fatalf("waiting for %s: binlogcdc stream exited (%v); stderr:\n%s", what, r.state, r.errText())
		}
		if time.Now().After(deadline) {
			msg := ""
			if r != nil {
				msg = "; stderr:\n" + r.errText()
			}
			t.Fatalf("timed out after %v waiting for %s%s", timeout, what, msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stHasGTID reports whether the JSON lines in file contain a line of
// transaction gtid (the key is last on a line).
func stHasGTID(file, gtid string) bool {
	b, _ := os.ReadFile(file)
	return bytes.Contains(b, []byte(`"gtid":"`+gtid+`"}`+"\n"))
}

func stVal(t testing.TB, srv *testserver.Server, sql string) string {
	t.Helper()
	rows := srv.QueryStrings(t, sql)
	if len(rows) != 1 || len(rows[0]) < 1 || rows[0][0] == nil {
		t.Fatalf("%s: want one value, got %d rows", sql, len(rows))
	}
	return *rows[0][0]
}

// stLastGTID is the GTID of the server's last transaction (one domain).
func stLastGTID(t testing.TB, srv *testserver.Server) string {
	return stVal(t, srv, "SELECT @@gtid_binlog_pos")
}

// stMasterPos is the end of the server's binlog: file and offset.
func stMasterPos(t testing.TB, srv *testserver.Server) (string, uint64) {
	t.Helper()
	rows := srv.QueryStrings(t, "SHOW MASTER STATUS")
	if len(rows) != 1 {
		t.Fatalf("SHOW MASTER STATUS: %d rows", len(rows))
	}
	off, err := strconv.ParseUint(*rows[0][1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return *rows[0][0], off
}

// stPurgeTo purges the server's binlogs before file and waits until they
// are gone. MariaDB silently keeps a binlog that InnoDB crash recovery may
// still need, until its binlog checkpoint passes it (about a second with
// innodb_flush_log_at_trx_commit=2), so one PURGE is not enough.
func stPurgeTo(t testing.TB, srv *testserver.Server, file string) {
	t.Helper()
	stPoll(t, time.Minute, nil, "PURGE BINARY LOGS TO '"+file+"'", func() bool {
		srv.Exec(t, "PURGE BINARY LOGS TO '"+file+"'")
		return *srv.QueryStrings(t, "SHOW BINARY LOGS")[0][0] == file
	})
}

// stRead is 'binlogcdc read' over all of the server's binlogs.
func stRead(t testing.TB, srv *testserver.Server, extra ...string) []byte {
	t.Helper()
	out, errs, code := runCLI(t, nil, append(append([]string{"read"}, extra...), srv.BinlogIndex())...)
	if code != 0 {
		t.Fatalf("binlogcdc read: exit %d: %s", code, errs)
	}
	if len(out) == 0 {
		t.Fatal("binlogcdc read printed nothing")
	}
	return out
}

// stSameOutput fails the test unless got and want are byte-identical,
// naming the first differing line.
func stSameOutput(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.SplitAfter(string(got), "\n"), strings.SplitAfter(string(want), "\n")
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	at := func(l []string) string {
		if i < len(l) {
			return clip(l[i])
		}
		return "(end)"
	}
	t.Fatalf("%s: %d lines, read gives %d; first difference at line %d:\n  stream: %s\n  read:   %s",
		what, strings.Count(string(got), "\n"), strings.Count(string(want), "\n"), i+1, at(g), at(w))
}

// stLoadCP loads a checkpoint file that must exist.
func stLoadCP(t testing.TB, path string) *checkpoint.Checkpoint {
	t.Helper()
	cp, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cp == nil {
		t.Fatalf("no checkpoint saved in %s", path)
	}
	return cp
}

// stTxEnd returns where the transaction after gtid starts: the binlog
// file and end_log_pos of the last event of transaction gtid, from SHOW
// BINLOG EVENTS. (Not SHOW MASTER STATUS: MariaDB may append a
// Binlog_checkpoint event after the last transaction, up to a second
// after a rotation.)
func stTxEnd(t testing.TB, srv *testserver.Server, gtid string) (string, uint64) {
	t.Helper()
	files := srv.BinlogFiles(t)
	for i := len(files) - 1; i >= 0; i-- {
		f := filepath.Base(files[i])
		// Log_name, Pos, Event_type, Server_id, End_log_pos, Info
		evs := srv.QueryStrings(t, "SHOW BINLOG EVENTS IN '"+f+"'")
		for j, ev := range evs {
			info := *ev[5]
			if *ev[2] != "Gtid" || (info != "GTID "+gtid && info != "BEGIN GTID "+gtid && !strings.HasPrefix(info, "BEGIN GTID "+gtid+" ")) {
				continue
			}
			explicit := strings.HasPrefix(info, "BEGIN")
			for _, e := range evs[j+1:] {
				typ, info := *e[2], *e[5]
				if typ == "Xid" || typ == "Query" && (!explicit || info == "COMMIT" || info == "ROLLBACK") {
					end, err := strconv.ParseUint(*e[4], 10, 64)
					if err != nil {
						t.Fatal(err)
					}
					return f, end
				}
			}
			t.Fatalf("no end of transaction %s in %s", gtid, f)
		}
	}
	t.Fatalf("transaction %s is in no binlog", gtid)
	return "", 0
}

// stCheckCPAtEnd asserts that the checkpoint resumes right after
// transaction gtid, the last one; addr is the address binlogcdc
// connected to.
func stCheckCPAtEnd(t testing.TB, srv *testserver.Server, path, gtid, addr string) {
	t.Helper()
	cp := stLoadCP(t, path)
	file, off := stTxEnd(t, srv, gtid)
	if cp.File != file || cp.Offset != off || cp.LastGTID != gtid || cp.GTIDSet != gtid || cp.Server != addr {
		t.Errorf("checkpoint %+v, want file %s offset %d last_gtid %s gtid_set %s server %s (the end of the last transaction)",
			cp, file, off, gtid, gtid, addr)
	}
}

// stLinePos extracts (pos.file, pos.offset, pos.row) and the gtid of one
// JSON line; "pos" and "gtid" are the last keys, and no string value can
// contain an unescaped quote.
func stLinePos(line string) (pos, gtid string, ok bool) {
	i := strings.LastIndex(line, `"pos":{`)
	if i < 0 {
		return "", "", false
	}
	j := strings.IndexByte(line[i:], '}')
	if j < 0 {
		return "", "", false
	}
	pos = line[i+len(`"pos":{`) : i+j]
	if k := strings.LastIndex(line, `"gtid":"`); k > i {
		gtid = strings.TrimSuffix(line[k+len(`"gtid":"`):], `"}`)
	}
	return pos, gtid, strings.HasSuffix(line, "}")
}

// stWorkload commits txns transactions on conn in the background, in
// database db (where the seq_1_to_N tables resolve). next returns the
// statements of transaction i; maxID is the highest id inserted so far,
// which next keeps up to date. committed counts the transactions done;
// pause, if set, is waited after each. The channel gets the result.
func stWorkload(conn *client.Conn, db string, txns int, committed *atomic.Int64, pause func() time.Duration,
	next func(i int, maxID *int) []string) <-chan error {
	done := make(chan error, 1)
	exec := func(q string) error {
		r, err := conn.Execute(q)
		if err != nil {
			return fmt.Errorf("%.100s: %w", q, err)
		}
		r.Close()
		return nil
	}
	go func() {
		done <- func() error {
			if err := exec("USE " + db); err != nil {
				return err
			}
			maxID := 0
			for i := 0; i < txns; i++ {
				for _, q := range next(i, &maxID) {
					if err := exec(q); err != nil {
						return err
					}
				}
				committed.Add(1)
				if pause != nil {
					time.Sleep(pause())
				}
			}
			return nil
		}()
	}()
	return done
}

// rpUntil calls round(0), round(1), … in a goroutine of its own until stop
// is closed (a background workload); ops counts the rounds done, and done
// is closed when it has returned.
func rpUntil(stop chan struct{}, round func(i int)) (done chan struct{}, ops *atomic.Int64) {
	done, ops = make(chan struct{}), &atomic.Int64{}
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			round(i)
			ops.Add(1)
		}
	}()
	return done, ops
}
