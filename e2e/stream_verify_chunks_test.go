package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestStreamVerifyChunks: with --verify-chunk-rows 50, passes compare a
// table of 1000 rows in chunks of 50 keys, each in its own pair of
// snapshots, while a workload writes across the chunks: no difference;
// a MyISAM table is reported NOT VERIFIED (never equal, never differing)
// and counted in binlogcdc_verify_unverified_tables. A row changed
// directly on the target in a middle chunk is then reported with its key
// and its chunk's key range, and one in a table with a key of two
// columns too.
func TestStreamVerifyChunks(t *testing.T) {
	t.Parallel()
	src := testserver.Start(t, testserver.Options{})
	dst := testserver.Start(t, testserver.Options{})
	src.Exec(t, "CREATE DATABASE vc",
		"CREATE TABLE vc.big (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
		"INSERT INTO vc.big SELECT seq, CONCAT('v', seq), seq FROM vc.seq_1_to_1000",
		"CREATE TABLE vc.comp (a INT, b INT, v INT, PRIMARY KEY (a, b))", // 6 chunks: (a, b) > (x, y) spelled out
		"INSERT INTO vc.comp SELECT seq DIV 7, seq MOD 7, seq FROM vc.seq_1_to_300",
		"CREATE TABLE vc.np (a INT, b VARCHAR(20))", // no primary key: one chunk
		"INSERT INTO vc.np VALUES (1, 'a'), (1, 'a'), (2, 'b')",
		"CREATE TABLE vc.my (id INT PRIMARY KEY, v INT) ENGINE=MyISAM",
		"INSERT INTO vc.my VALUES (1, 1), (2, 2)")
	dir := t.TempDir()
	r := stStart(t, dir, "chunks", nil, "--source", src.DSN(), "--from", "earliest", "--to", dst.DSN()+"/",
		"--verify-every", "50ms", "--verify-chunk-rows", "50", "--verify-on-diff", "warn",
		"--metrics-addr", "127.0.0.1:0", "--heartbeat", "1s")
	stPoll(t, time.Minute, r, "the metrics address", func() bool { return metricsAddrRE.MatchString(r.errText()) })
	addr := metricsAddrRE.FindStringSubmatch(r.errText())[1]
	metric := func(name string) float64 {
		_, body := mtGet(addr, "/metrics")
		return mtValue(body, name)
	}

	// Writes all over the key range: inserts past the end, updates and
	// deletes in every chunk.
	stop := make(chan struct{})
	conn := src.Conn(t)
	done, ops := rpUntil(stop, func(i int) {
		stmts := []string{"BEGIN",
			fmt.Sprintf("INSERT INTO vc.big VALUES (%d, 'w%d', %d)", 2000+i, i, i),
			fmt.Sprintf("UPDATE vc.big SET n = n + 1 WHERE id = %d", 1+(i*37)%1000),
			fmt.Sprintf("UPDATE vc.big SET v = 'u%d' WHERE id = %d", i, 1+(i*91)%1000),
			"COMMIT"}
		if i > 5 {
			stmts = append(stmts, fmt.Sprintf("DELETE FROM vc.big WHERE id = %d", 2000+i-5))
		}
		for _, q := range stmts {
			if _, err := conn.Execute(q); err != nil {
				t.Errorf("workload: %s: %v", q, err)
				return
			}
		}
	})
	runs0 := max(0, metric("binlogcdc_verify_runs_total")) // -1: not served yet
	stPoll(t, 3*time.Minute, r, "3 verification passes during the workload", func() bool {
		return metric("binlogcdc_verify_runs_total") >= runs0+3 && ops.Load() >= 30
	})
	close(stop)
	<-done
	if runs, diffs, errs, _ := vlMetrics(addr); diffs != 0 || errs != 0 {
		t.Fatalf("during the workload: %v passes found %v differences, %v failed; stderr:\n%s", runs, diffs, errs, r.errText())
	}
	runs := metric("binlogcdc_verify_runs_total")
	// 20 chunks of vc.big at least, 6 of vc.comp, one of vc.np, one of
	// vc.my a pass.
	if chunks := metric("binlogcdc_verify_chunks_total"); chunks < 28*runs {
		t.Errorf("binlogcdc_verify_chunks_total = %v after %v passes, want >= 28 a pass", chunks, runs)
	}
	if n := metric("binlogcdc_verify_unverified_tables"); n != 1 {
		t.Errorf("binlogcdc_verify_unverified_tables = %v, want 1 (vc.my)", n)
	}
	if p := metric("binlogcdc_verify_applier_pause_max_seconds"); p <= 0 {
		t.Errorf("binlogcdc_verify_applier_pause_max_seconds = %v, want > 0", p)
	}
	if !strings.Contains(r.errText(), "NOT VERIFIED `vc`.`my` (engine MyISAM is not transactional)") {
		t.Errorf("stderr lacks the MyISAM table's NOT VERIFIED:\n%s", r.errText())
	}
	if !strings.Contains(r.errText(), "all 3 tables equal, each in snapshots of the same transactions") {
		t.Errorf("stderr lacks an equal pass of the 2 verified tables:\n%s", r.errText())
	}
	t.Logf("%d workload rounds, %v passes, %v chunks, longest pause %vs", ops.Load(), runs,
		metric("binlogcdc_verify_chunks_total"), metric("binlogcdc_verify_applier_pause_max_seconds"))

	// The workload is over, but the target may still be applying its
	// last transactions: one of them can update id 517 (round 676 does)
	// and would undo the difference planted below. Wait until the target
	// holds the source's rows.
	bigRows := "SELECT id, v, n FROM vc.big ORDER BY id"
	stPoll(t, time.Minute, r, "the target caught up with the workload", func() bool {
		return rpRows(t, dst, bigRows) == rpRows(t, src, bigRows)
	})

	// A difference in a middle chunk (every chunk holds 50 keys).
	_, diffs0, _, ok0 := vlMetrics(addr)
	was := *src.QueryStrings(t, "SELECT v FROM vc.big WHERE id = 517")[0][0]
	dst.Exec(t, "UPDATE vc.big SET v = 'planted' WHERE id = 517", "UPDATE vc.comp SET v = -1 WHERE a = 20 AND b = 3")
	chunkLine := regexp.MustCompile("verify:   `vc`.`big` in the chunk \\(`id` > (-?\\d+)\\) AND \\(`id` <= (-?\\d+)\\): compared at")
	stPoll(t, time.Minute, r, "the planted difference reported", func() bool {
		_, diffs, _, _ := vlMetrics(addr)
		return diffs > diffs0 && strings.Contains(r.errText(), "changed `id`=517\n") && chunkLine.MatchString(r.errText()) &&
			strings.Contains(r.errText(), "changed `a`=20, `b`=3\n")
	})
	m := chunkLine.FindStringSubmatch(r.errText())
	var lo, hi int
	fmt.Sscan(m[1], &lo)
	fmt.Sscan(m[2], &hi)
	if !(lo < 517 && 517 <= hi) {
		t.Errorf("the difference at id 517 reported in the chunk %d < id <= %d", lo, hi)
	}
	if !strings.Contains(r.errText(), "`vc`.`comp` in the chunk ((`a` > ") {
		t.Errorf("stderr lacks vc.comp's chunk, its range spelled out on the two key columns:\n%s", r.errText())
	}
	if !strings.Contains(r.errText(), "DIFFERS `vc`.`big`: 50 rows on the source, 50 on the target; 1 changed") {
		t.Errorf("stderr lacks the chunk's DIFFERS line:\n%s", r.errText())
	}
	for _, line := range strings.Split(r.errText(), "\n") {
		if strings.Contains(line, "differ from the source") || strings.Contains(line, "verify:   ") {
			t.Log(line) // the report, as docs/verify.md shows it
		}
	}
	if code, body := mtGet(addr, "/healthz"); code != 503 || !strings.Contains(body, "`vc`.`big`") {
		t.Errorf("/healthz %d %q, want 503 naming vc.big", code, body)
	}
	dst.Exec(t, fmt.Sprintf("UPDATE vc.big SET v = '%s' WHERE id = 517", was), "UPDATE vc.comp SET v = 143 WHERE a = 20 AND b = 3")
	stPoll(t, time.Minute, r, "the difference undone: an equal pass", func() bool {
		_, _, _, ok := vlMetrics(addr)
		code, _ := mtGet(addr, "/healthz")
		return ok > ok0 && code == 200
	})
	if _, _, errs, _ := vlMetrics(addr); errs != 0 {
		t.Errorf("%v passes failed; stderr:\n%s", errs, r.errText())
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}
}
