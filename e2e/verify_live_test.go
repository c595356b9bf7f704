package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// Tests of stream --verify-every: the copy kept by --to is compared with
// the source while the stream applies a workload.

// vlMetrics scrapes the stream's verification counts.
func vlMetrics(addr string) (runs, diffs, errs, lastOK float64) {
	_, body := mtGet(addr, "/metrics")
	return mtValue(body, "binlogcdc_verify_runs_total"), mtValue(body, "binlogcdc_verify_differences_total"),
		mtValue(body, "binlogcdc_verify_errors_total"), mtValue(body, "binlogcdc_verify_last_success_timestamp_seconds")
}

// TestStreamVerifyEvery: passes that run while a workload is applied (the
// target lagging by up to --group-time) find no difference, also once the
// source is idle after a FLUSH BINARY LOGS; a row changed (to a value of
// the same length), deleted or added directly on the target is reported
// by the next pass with its key, on stderr, /metrics and /healthz, and
// --verify-on-diff stop ends the stream with exit 1.
func TestStreamVerifyEvery(t *testing.T) {
	t.Parallel()
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE vl", "CREATE DATABASE vl_skip",
		"CREATE TABLE vl.t (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
		"CREATE TABLE vl.np (a INT, b VARCHAR(20))", // no primary key: compared as a multiset
		"CREATE TABLE vl_skip.x (id INT PRIMARY KEY AUTO_INCREMENT, v INT)")
	for i := 1; i <= 20; i++ {
		src.Exec(t, fmt.Sprintf("INSERT INTO vl.t VALUES (%d, 'abc%d', %d)", i, i, i))
	}
	dir := t.TempDir()
	r := stStart(t, dir, "warn", nil, "--source", src.DSN(), "--from", "earliest", "--to", dst.DSN()+"/",
		"--exclude-tables", "vl_skip.*", "--verify-every", "50ms", "--verify-on-diff", "warn",
		"--metrics-addr", "127.0.0.1:0", "--heartbeat", "1s")
	stPoll(t, time.Minute, r, "the metrics address", func() bool { return metricsAddrRE.MatchString(r.errText()) })
	addr := metricsAddrRE.FindStringSubmatch(r.errText())[1]

	// A workload over both tables, with transactions the filters empty
	// (vl_skip only) and a binlog rotation in the middle.
	stop := make(chan struct{})
	conn := src.Conn(t)
	done, ops := rpUntil(stop, func(i int) {
		id := 1000 + i
		stmts := []string{"BEGIN",
			fmt.Sprintf("INSERT INTO vl.t VALUES (%d, 'w%d', %d)", id, i, i),
			fmt.Sprintf("UPDATE vl.t SET n = n + 1 WHERE id = %d", 1+i%20),
			fmt.Sprintf("INSERT INTO vl.np VALUES (%d, 'r%d')", i%7, i),
			"INSERT INTO vl_skip.x (v) VALUES (1)", "COMMIT",
			"INSERT INTO vl_skip.x (v) VALUES (2)"}
		if i > 10 {
			stmts = append(stmts, fmt.Sprintf("DELETE FROM vl.t WHERE id = %d", id-10), fmt.Sprintf("DELETE FROM vl.np WHERE b = 'r%d'", i-10))
		}
		switch i {
		case 30:
			stmts = append(stmts, "FLUSH BINARY LOGS")
		case 40, 80: // a table appears and goes while passes run
			stmts = append(stmts, "CREATE TABLE vl.t2 (id INT PRIMARY KEY)", "INSERT INTO vl.t2 VALUES (1)")
		case 50, 90:
			stmts = append(stmts, "ALTER TABLE vl.t2 ADD COLUMN c INT DEFAULT 5", "INSERT INTO vl.t2 VALUES (2, 6)")
		case 60, 100:
			stmts = append(stmts, "DROP TABLE vl.t2")
		}
		for _, q := range stmts {
			if _, err := conn.Execute(q); err != nil {
				t.Errorf("workload: %s: %v", q, err)
				return
			}
		}
	})
	// Passes while it runs: none may see a difference.
	stPoll(t, 2*time.Minute, r, "8 verification passes during the workload", func() bool {
		runs, _, _, _ := vlMetrics(addr)
		return runs >= 8 && ops.Load() >= 120
	})
	close(stop)
	<-done
	if runs, diffs, errs, _ := vlMetrics(addr); diffs != 0 || errs != 0 {
		t.Fatalf("during the workload: %v passes found %v differences, %v failed; stderr:\n%s", runs, diffs, errs, r.errText())
	}
	t.Logf("%d workload rounds, passes so far: %s", ops.Load(), func() string { n, _, _, _ := vlMetrics(addr); return fmt.Sprint(n) }())

	// Idle, the snapshot's position in a new binlog's header: passes
	// still reach it.
	src.FlushLogs(t)
	runs, _, _, _ := vlMetrics(addr)
	stPoll(t, time.Minute, r, "2 passes on an idle source after FLUSH BINARY LOGS", func() bool {
		n, _, _, _ := vlMetrics(addr)
		return n >= runs+2
	})
	if code, body := mtGet(addr, "/healthz"); code != 200 {
		t.Fatalf("/healthz after equal passes: %d %s", code, body)
	}

	// Each kind of difference, one at a time, then undone.
	for _, c := range []struct{ what, change, undo, want string }{
		{"a value of the same length", "UPDATE vl.t SET v = 'abd5' WHERE id = 5", "UPDATE vl.t SET v = 'abc5' WHERE id = 5", "changed `id`=5\n"},
		{"a missing row", "DELETE FROM vl.t WHERE id = 7", "", "missing `id`=7\n"},
		{"an extra row", "INSERT INTO vl.t VALUES (-3, 'x', 0)", "DELETE FROM vl.t WHERE id = -3", "extra   `id`=-3\n"},
		{"an extra row without a key", "INSERT INTO vl.np VALUES (99, 'extra')", "DELETE FROM vl.np WHERE a = 99", "extra   (99, 'extra')\n"},
	} {
		if c.what == "a missing row" { // the row as the source has it now
			row := src.QueryStrings(t, "SELECT v, n FROM vl.t WHERE id = 7")[0]
			c.undo = fmt.Sprintf("INSERT INTO vl.t VALUES (7, '%s', %s)", *row[0], *row[1])
		}
		_, diffs0, _, ok0 := vlMetrics(addr)
		dst.Exec(t, c.change)
		stPoll(t, time.Minute, r, c.what+" reported", func() bool {
			_, diffs, _, _ := vlMetrics(addr)
			return diffs > diffs0 && strings.Contains(r.errText(), c.want)
		})
		if code, body := mtGet(addr, "/healthz"); code != 503 || !strings.Contains(body, "tables differ") {
			t.Errorf("%s: /healthz %d %q, want 503 naming the difference", c.what, code, body)
		}
		dst.Exec(t, c.undo)
		stPoll(t, time.Minute, r, c.what+" undone: an equal pass", func() bool {
			_, _, _, ok := vlMetrics(addr)
			code, _ := mtGet(addr, "/healthz")
			return ok > ok0 && code == 200
		})
	}
	if _, _, errs, _ := vlMetrics(addr); errs != 0 {
		t.Errorf("%v passes failed; stderr:\n%s", errs, r.errText())
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}

	// --verify-on-diff stop (the default): the first difference ends the
	// stream, exit 1, resumed where the target's checkpoint is.
	src.Exec(t, "INSERT INTO vl.t VALUES (5000, 'later', 1)")
	r = stStart(t, dir, "stop", nil, "--source", src.DSN(), "--to", dst.DSN()+"/", "--exclude-tables", "vl_skip.*", "--verify-every", "50ms")
	stPoll(t, time.Minute, r, "a pass of the restarted stream", func() bool {
		return strings.Contains(r.errText(), "tables equal, each in snapshots of the same transactions")
	})
	dst.Exec(t, "UPDATE vl.t SET n = n + 100 WHERE id = 5000")
	if code := r.wait(time.Minute); code != 1 {
		t.Fatalf("stream with a difference: exit %d, want 1:\n%s", code, r.errText())
	}
	for _, want := range []string{"changed `id`=5000\n", "1 of 2 tables differ", "--verify-on-diff warn"} {
		if !strings.Contains(r.errText(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.errText())
		}
	}
}

// TestStreamVerifyEverySnapshot: after stream --snapshot copied the
// random workload's tables (every column type the replay tests know, a
// hostile database and table name), 5 passes during more of that
// workload find no difference with --verify-on-diff stop: the stream
// runs on until stopped, and the copy is equal.
func TestStreamVerifyEverySnapshot(t *testing.T) {
	t.Parallel()
	g := rpSeed(t)
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, rpSchema...)
	rpWorkload(t, src, g, 200, false)
	dir := t.TempDir()
	r := stStart(t, dir, "snap", nil, "--snapshot", "--source", src.DSN(), "--to", dst.DSN()+"/", "--verify-every", "50ms")
	passes := func() int { return strings.Count(r.errText(), "tables equal, each in snapshots") }
	stPoll(t, 2*time.Minute, r, "a pass after the snapshot", func() bool { return passes() >= 1 })
	// The workload in rounds until 5 passes ran during it.
	start := passes()
	for i := 0; passes() < start+5; i++ {
		if r.exited() {
			t.Fatalf("the stream exited:\n%s", r.errText())
		}
		rpWorkload(t, src, g, 40, true)
	}
	n := passes()
	stPoll(t, 2*time.Minute, r, "2 more passes after the workload", func() bool { return passes() >= n+2 })
	if strings.Contains(r.errText(), "differ") {
		t.Fatalf("a pass found a difference:\n%s", r.errText())
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}
	rpCompare(t, src, dst, "stream --snapshot --verify-every")
	t.Logf("%d passes equal, %d inconclusive", passes(), strings.Count(r.errText(), "inconclusive"))
}
