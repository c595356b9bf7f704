package e2e

// Tests of 'binlogcdc stream' (issue 3) against private MariaDB servers.
// The CLI is built once (cliBinary) and run as a subprocess, the way a user
// runs it, so SIGTERM, SIGINT and kill -9 are real. The oracle is always
// 'binlogcdc read' over the same server's binlog files: whatever happened
// to the stream (restarts, kills, reconnects, rotations), its output must
// equal, change for change, a single uninterrupted read.

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestStreamEqualsRead: a mixed workload streamed --from earliest, partly
// before and partly while binlogcdc runs, equals 'read' byte for byte.
func TestStreamEqualsRead(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	srv.Exec(t,
		"CREATE DATABASE s1",
		"CREATE TABLE s1.pk (id INT PRIMARY KEY, v VARCHAR(20), n BIGINT)",
		"CREATE TABLE s1.nopk (a INT, b TEXT)",
		"CREATE TABLE s1.comp (a INT, b VARCHAR(10), c DECIMAL(10,2), PRIMARY KEY (b, a))",
		"INSERT INTO s1.pk VALUES (1, 'one', 1), (2, 'two', 2), (3, 'three', 3)",
		"INSERT INTO s1.nopk VALUES (1, 'x'), (1, 'x'), (2, NULL)",
	)
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	r := stStart(t, dir, "s", nil, "--source", srv.DSN(), "--from", "earliest", "--ddl", "--output", out, "--checkpoint", cp)
	g := stLastGTID(t, srv)
	stPoll(t, time.Minute, r, "the first transactions", func() bool { return stHasGTID(out, g) })

	srv.Exec(t,
		"INSERT INTO s1.comp VALUES (1, 'a', 1.50), (2, 'a', -2.25), (1, 'b', 0)",
		"UPDATE s1.pk SET n = n * 10 WHERE id >= 2",
		"DELETE FROM s1.nopk WHERE a = 1 LIMIT 1",
		"UPDATE s1.nopk SET b = 'null no more' WHERE b IS NULL",
		"ALTER TABLE s1.pk CHANGE v label VARCHAR(30), ADD COLUMN extra INT DEFAULT 7 AFTER id",
		"INSERT INTO s1.pk (id, label, n) VALUES (4, 'four', 4)",
		"FLUSH BINARY LOGS",
		"UPDATE s1.pk SET label = CONCAT(label, '!') WHERE id IN (1, 4)",
		"BEGIN",
		"INSERT INTO s1.pk (id, label) VALUES (5, 'five'), (6, 'six')",
		"UPDATE s1.comp SET c = c + 1 WHERE b = 'a'",
		"DELETE FROM s1.pk WHERE id = 2",
		"INSERT INTO s1.nopk VALUES (9, 'in tx')",
		"DELETE FROM s1.comp WHERE a = 1 AND b = 'b'",
		"COMMIT",
		"DROP TABLE s1.comp",
		"DELETE FROM s1.nopk",
		"INSERT INTO s1.pk (id, label) VALUES (100, 'last')",
	)
	last := stLastGTID(t, srv)
	stPoll(t, time.Minute, r, "transaction "+last, func() bool { return stHasGTID(out, last) })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d, want 0; stderr:\n%s", code, r.errText())
	}
	if !strings.Contains(r.errText(), "stopped at") {
		t.Errorf("stderr does not say where it stopped:\n%s", r.errText())
	}
	if len(r.outBytes()) != 0 {
		t.Errorf("stdout is not empty with --output: %q", clip(string(r.outBytes())))
	}
	stCheckCPAtEnd(t, srv, cp, last, srv.Addr())
	got, _ := os.ReadFile(out)
	stSameOutput(t, "stream --from earliest", got, stRead(t, srv, "--ddl"))
}

// stRunOut is the output file of one run of the torture test.
type stRunOut struct {
	path   string
	killed bool
}

// TestStreamKill9 kills 'binlogcdc stream --checkpoint' with SIGKILL at
// random moments while a workload commits small and large transactions,
// restarting it from its checkpoint each time. Each run's output must be
// a contiguous slice of what 'read' prints for the same binlogs (plus, for
// a killed run only, a cut-off last line), the runs together must cover it
// without a gap, and a run may only repeat the last transaction the runs
// before it printed (at-least-once: at most one transaction per restart).
func TestStreamKill9(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	srv.Exec(t,
		"CREATE DATABASE tt",
		"CREATE TABLE tt.a (id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT, v VARCHAR(64), d DOUBLE)",
		"CREATE TABLE tt.b (x INT, y VARCHAR(20))", // no primary key
	)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))

	const txns = 3000
	var committed atomic.Int64
	wrng := rand.New(rand.NewPCG(uint64(seed), 2))
	workDone := stWorkload(srv.Conn(t), "tt", txns, &committed, nil, func(i int, maxID *int) []string {
		n := 1 + wrng.IntN(200)
		var qs []string
		switch c := wrng.IntN(100); {
		case i == txns/3 || i == 2*txns/3:
			n = 5000
			qs = []string{fmt.Sprintf("INSERT INTO tt.a (k, v, d) SELECT seq, CONCAT('big-%d-', seq), seq / 7 FROM seq_1_to_%d", i, n)}
			*maxID += n
		case i == txns/2:
			qs = []string{"FLUSH BINARY LOGS"}
		case c < 70 || *maxID == 0:
			qs = []string{fmt.Sprintf("INSERT INTO tt.a (k, v, d) SELECT seq, CONCAT('t%d-', seq), seq * 1.5 FROM seq_1_to_%d", i, n)}
			*maxID += n
		case c < 82:
			lo := 1 + wrng.IntN(*maxID)
			qs = []string{fmt.Sprintf("UPDATE tt.a SET k = k + 1, v = CONCAT('u%d-', id) WHERE id BETWEEN %d AND %d", i, lo, lo+n)}
		case c < 90:
			lo := 1 + wrng.IntN(*maxID)
			qs = []string{fmt.Sprintf("DELETE FROM tt.a WHERE id BETWEEN %d AND %d", lo, lo+n/4)}
		default:
			lo := 1 + wrng.IntN(*maxID)
			qs = []string{"BEGIN",
				fmt.Sprintf("INSERT INTO tt.b SELECT seq, 'tx%d' FROM seq_1_to_%d", i, 1+n/10),
				fmt.Sprintf("UPDATE tt.a SET d = -d WHERE id BETWEEN %d AND %d", lo, lo+n/10),
				fmt.Sprintf("DELETE FROM tt.b WHERE x = %d", 1+wrng.IntN(5)),
				"COMMIT"}
		}
		return qs
	})

	cp := filepath.Join(dir, "cp.json")
	var runs []stRunOut
	start := func() *stRun {
		out := filepath.Join(dir, fmt.Sprintf("out.%d.jsonl", len(runs)))
		runs = append(runs, stRunOut{path: out})
		return stStart(t, dir, fmt.Sprintf("run%d", len(runs)-1), nil,
			"--source", srv.DSN(), "--from", "earliest", "--checkpoint", cp, "--output", out)
	}
	kills := 0
	var workErr error
	working := true
	for working || kills < 15 {
		if working {
			select {
			case workErr = <-workDone:
				working = false
			default:
			}
		}
		r := start()
		time.Sleep(time.Duration(50+rng.IntN(651)) * time.Millisecond)
		if r.exited() {
			t.Fatalf("run %d exited by itself (%v); stderr:\n%s", len(runs)-1, r.state, r.errText())
		}
		r.kill9()
		runs[len(runs)-1].killed = true
		kills++
	}
	if workErr != nil {
		t.Fatal(workErr)
	}
	last := stLastGTID(t, srv)
	r := start()
	stPoll(t, 2*time.Minute, r, "the checkpoint after "+last, func() bool {
		c, err := checkpoint.Load(cp)
		return err == nil && c != nil && c.LastGTID == last && r.ready()
	})
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d, want 0; stderr:\n%s", code, r.errText())
	}
	stCheckCPAtEnd(t, srv, cp, last, srv.Addr())

	// The reference: one uninterrupted read.
	ref := strings.SplitAfter(string(stRead(t, srv)), "\n")
	ref = ref[:len(ref)-1] // after the last "\n"
	refIdx := make(map[string]int, len(ref))
	refGTID := make([]string, len(ref))
	for i, l := range ref {
		pos, gtid, ok := stLinePos(strings.TrimSuffix(l, "\n"))
		if !ok || gtid == "" {
			t.Fatalf("read: line %d has no pos or gtid: %s", i+1, clip(l))
		}
		if _, dup := refIdx[pos]; dup {
			t.Fatalf("read: pos %s twice", pos)
		}
		refIdx[pos], refGTID[i] = i, gtid
	}

	covered := 0 // ref[:covered] was printed by the runs so far
	var dupsPerRun []int
	cutLines := 0
	seen := map[string]bool{}
	var union []string // deduplicated on pos, first occurrences kept
	for i, run := range runs {
		data, err := os.ReadFile(run.path)
		if errors.Is(err, os.ErrNotExist) {
			continue // killed before it opened its output
		}
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		frag := lines[len(lines)-1]
		lines = lines[:len(lines)-1]
		first, next := -1, -1
		for j, l := range lines {
			pos, _, ok := stLinePos(strings.TrimSuffix(l, "\n"))
			k, known := refIdx[pos]
			if !ok || !known || ref[k] != l {
				t.Fatalf("run %d line %d is not a line of read's output: %s", i, j+1, clip(l))
			}
			if first < 0 {
				first = k
			} else if k != next {
				t.Fatalf("run %d line %d is read's line %d, want line %d: a run must print a contiguous stretch", i, j+1, k+1, next+1)
			}
			next = k + 1
			if !seen[pos] {
				seen[pos] = true
				union = append(union, l)
			}
		}
		if frag != "" {
			if !run.killed || i == len(runs)-1 {
				t.Fatalf("run %d (not killed) ends in a cut-off line: %q", i, clip(frag))
			}
			want := next
			if want < 0 {
				want = covered
			}
			if want >= len(ref) || !strings.HasPrefix(ref[want], frag) {
				t.Fatalf("run %d ends in a cut-off line that is not the start of read's line %d: %q", i, want+1, clip(frag))
			}
			cutLines++
		}
		if first < 0 {
			continue
		}
		if first > covered {
			t.Fatalf("run %d starts at read's line %d, but only %d lines were printed before: a gap", i, first+1, covered)
		}
		dups := min(covered, next) - first
		if dups > 0 {
			g := refGTID[covered-1]
			for k := first; k < first+dups; k++ {
				if refGTID[k] != g {
					t.Fatalf("run %d repeats read's line %d of transaction %s, but only the last transaction printed before (%s) may be repeated",
						i, k+1, refGTID[k], g)
				}
			}
			if !runs[i-1].killed {
				t.Fatalf("run %d repeats lines although the run before was not killed", i)
			}
		}
		dupsPerRun = append(dupsPerRun, dups)
		covered = max(covered, next)
	}
	if covered != len(ref) {
		t.Fatalf("the runs printed read's lines up to %d of %d", covered, len(ref))
	}
	stSameOutput(t, "union of the runs, deduplicated", []byte(strings.Join(union, "")), []byte(strings.Join(ref, "")))
	repeated := 0
	for _, d := range dupsPerRun {
		if d > 0 {
			repeated++
		}
	}
	t.Logf("%d transactions committed, %d lines; %d kills, %d runs; lines repeated per run that printed anything: %v (%d runs repeated a transaction); %d killed runs ended in a cut-off line",
		committed.Load(), len(ref), kills, len(runs), dupsPerRun, repeated, cutLines)
}

// TestStreamReconnects: one stream, through a TCP proxy, lives through a
// server restart, a KILL of its dump thread (each in the middle of sending
// a large transaction), a FLUSH LOGS, and a network stall that only the
// --heartbeat read timeout can detect. Its output equals 'read'.
func TestStreamReconnects(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	px := stStartProxy(t, srv.Addr())
	srv.Exec(t,
		"CREATE DATABASE rc",
		"CREATE TABLE rc.t (id INT AUTO_INCREMENT PRIMARY KEY, phase VARCHAR(20), n INT)",
	)
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	r := stStart(t, dir, "s", nil, "--source", px.dsn(), "--from", "earliest", "--checkpoint", cp, "--output", out, "--heartbeat", "1s")
	phase := func(name string, big int) string {
		t.Helper()
		srv.Exec(t, fmt.Sprintf("INSERT INTO rc.t (phase, n) VALUES ('%s', 1), ('%s', 2)", name, name))
		if big > 0 {
			srv.Exec(t, fmt.Sprintf("INSERT INTO rc.t (phase, n) SELECT '%s', seq FROM seq_1_to_%d", name, big))
		}
		return stLastGTID(t, srv)
	}
	srv.Exec(t, "USE rc")
	g := phase("start", 0)
	stPoll(t, time.Minute, r, "the first rows", func() bool { return stHasGTID(out, g) })

	// FLUSH LOGS between transactions the stream is following.
	srv.Exec(t, "INSERT INTO rc.t (phase, n) VALUES ('flush', 0)")
	srv.FlushLogs(t)
	g = phase("flushed", 0)
	stPoll(t, time.Minute, r, "the rows after FLUSH LOGS", func() bool { return stHasGTID(out, g) })

	// KILL the dump thread while it sends a large transaction.
	ids := stDumpThreads(t, srv)
	if len(ids) != 1 {
		t.Fatalf("%d binlog dump threads, want 1", len(ids))
	}
	phase("kill", 30000)
	t0 := time.Now()
	srv.Exec(t, "KILL "+ids[0])
	g = phase("killed", 0)
	stPoll(t, time.Minute, r, "the rows after KILL", func() bool { return stHasGTID(out, g) })
	tKill := time.Since(t0)
	if got := stDumpThreads(t, srv); len(got) != 1 || got[0] == ids[0] {
		t.Errorf("dump threads after the KILL: %v, want one new one", got)
	}

	// Restart the server while it sends a large transaction.
	phase("restart", 30000)
	t0 = time.Now()
	srv.Restart(t)
	g = phase("restarted", 0)
	stPoll(t, time.Minute, r, "the rows after the restart", func() bool { return stHasGTID(out, g) })
	tRestart := time.Since(t0)

	// A network stall: the proxy stops forwarding, nothing is closed. Only
	// the read timeout (3 × --heartbeat) notices; the default heartbeat
	// (10 s, so 30 s) would blow the deadline below.
	ids = stDumpThreads(t, srv)
	px.stall()
	t0 = time.Now()
	g = phase("stalled", 0)
	stPoll(t, 20*time.Second, r, "the rows after a network stall (--heartbeat 1s)", func() bool { return stHasGTID(out, g) })
	tStall := time.Since(t0)
	if got := stDumpThreads(t, srv); len(got) != 1 || len(ids) != 1 || got[0] == ids[0] {
		t.Errorf("dump threads before the stall %v, after %v: want one new one", ids, got)
	}

	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d, want 0; stderr:\n%s", code, r.errText())
	}
	stCheckCPAtEnd(t, srv, cp, g, px.l.Addr().String())
	if n := strings.Count(r.errText(), "reconnecting at"); n < 3 {
		t.Errorf("stderr reports %d reconnects, want at least 3 (KILL, restart, stall):\n%s", n, r.errText())
	}
	got, _ := os.ReadFile(out)
	stSameOutput(t, "stream through KILL, restart, FLUSH LOGS and a stall", got, stRead(t, srv))
	t.Logf("new rows arrived %v after the KILL, %v after the restart was done, %v after the stall began", tKill.Round(time.Millisecond), tRestart.Round(time.Millisecond), tStall.Round(time.Millisecond))
}

// stLinesOf returns the lines of transaction gtid, in order.
func stLinesOf(data []byte, gtid string) []byte {
	var b bytes.Buffer
	suffix := `"gtid":"` + gtid + `"}`
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if strings.HasSuffix(l, suffix+"\n") {
			b.WriteString(l)
		}
	}
	return b.Bytes()
}

// TestStreamLargeTransaction streams one INSERT of 200,000 rows: all of
// them, in order, equal to 'read'. It reports the peak RSS.
func TestStreamLargeTransaction(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	srv.Exec(t, "CREATE DATABASE lt", "USE lt", "CREATE TABLE lt.t (id INT PRIMARY KEY, v VARCHAR(40), d DATETIME(3), x BIGINT)")
	file, off := stMasterPos(t, srv)
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	r := stStart(t, dir, "s", nil, "--source", srv.DSN(), "--start-position", fmt.Sprintf("%s:%d", file, off), "--checkpoint", cp, "--output", out)
	const rows = 200000
	srv.Exec(t, fmt.Sprintf("INSERT INTO lt.t SELECT seq, CONCAT('row number ', seq), '2024-06-15 12:00:00.125' + INTERVAL seq SECOND, seq * 1000003 FROM seq_1_to_%d", rows))
	g := stLastGTID(t, srv)
	stPoll(t, 2*time.Minute, r, "transaction "+g, func() bool { return stHasGTID(out, g) && r.ready() })
	hwm := r.vmHWM()
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d; stderr:\n%s", code, r.errText())
	}
	stCheckCPAtEnd(t, srv, cp, g, srv.Addr())
	got, _ := os.ReadFile(out)
	if n := bytes.Count(got, []byte("\n")); n != rows {
		t.Fatalf("%d lines, want %d", n, rows)
	}
	for i, l := range strings.Split(strings.TrimSuffix(string(got), "\n"), "\n") {
		if want := fmt.Sprintf(`{"op":"insert","db":"lt","table":"t","pk":["id"],"after":{"id":%d,`, i+1); !strings.HasPrefix(l, want) {
			t.Fatalf("line %d: %s, want it to start with %s", i+1, clip(l), want)
		}
	}
	stSameOutput(t, "a 200,000-row transaction", got, stLinesOf(stRead(t, srv), g))
	t.Logf("peak RSS (VmHWM) of binlogcdc stream: %d MiB", hwm/1024)
	if hwm > 512<<10 {
		t.Errorf("peak RSS %d MiB, want < 512 MiB", hwm/1024)
	}
}

// TestStreamStopWhileConnecting: a stop request while binlogcdc waits for
// a server that accepted the connection but never answers ends it with
// exit code 0, not a hang.
func TestStreamStopWhileConnecting(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c // held open, silent
		}
	}()
	dir := t.TempDir()
	r := stStart(t, dir, "s", nil, "--source", "mysql://root@"+l.Addr().String(), "--checkpoint", filepath.Join(dir, "cp.json"))
	select {
	case c := <-accepted:
		defer c.Close()
	case <-time.After(time.Minute):
		t.Fatalf("binlogcdc did not connect; stderr:\n%s", r.errText())
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(20 * time.Second); code != 0 {
		t.Fatalf("SIGTERM while connecting: exit code %d, want 0; stderr:\n%s", code, r.errText())
	}
	if !strings.Contains(r.errText(), "stopped before the first transaction") {
		t.Errorf("stderr:\n%s", r.errText())
	}
	if _, err := os.Stat(filepath.Join(dir, "cp.json")); err == nil {
		t.Error("a checkpoint was saved without a start point")
	}
}
