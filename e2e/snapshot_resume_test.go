package e2e

// A snapshot resumed from its last finished chunk after kill -9: tables
// filled before the binlogs began (an INT key, a composite INT+DATETIME
// key, a collated VARCHAR key, keyless and prefix-keyed tables), a write
// workload all along that also moves rows across chunk boundaries (key
// updates), and the process killed at deterministic points
// (BINLOGCDC_TEST_SNAPSHOT_KILL): between chunks, in the middle of a
// batch, in the middle of a table copied as a whole, in the middle of a
// keyed table, and inside the window after the snapshot where the stream
// reconciles. Each restart continues in a new consistent snapshot at a
// later position. After the workload stops and the stream catches up,
// the target equals the source (ordered rows with HEX, CHECKSUM TABLE,
// verify; any conflict would have stopped the stream), and the JSON lines
// folded by key give the source's tables, each key once in the snapshot.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

const srBigRows = 20000

func srSource(t *testing.T, g *rpGen) *testserver.Server {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, rpSchema...)
	rpWorkload(t, src, g, 300, false)
	src.Exec(t, "CREATE TABLE rp.big (id INT PRIMARY KEY, v VARCHAR(40), n BIGINT)",
		fmt.Sprintf("INSERT INTO rp.big SELECT seq, CONCAT('row ', seq), seq * seq FROM rp.seq_1_to_%d", srBigRows),
		"CREATE TABLE rp.ck (a INT NOT NULL, b DATETIME(3) NOT NULL, v VARCHAR(20), PRIMARY KEY (a, b))",
		"INSERT INTO rp.ck SELECT seq DIV 3, TIMESTAMP'2020-01-01 00:00:00' + INTERVAL seq SECOND, CONCAT('c', seq) FROM rp.seq_1_to_6000",
		"CREATE TABLE rp.ct (k VARCHAR(30) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL PRIMARY KEY, v INT)",
		"INSERT INTO rp.ct SELECT CONCAT('Key ', seq), seq FROM rp.seq_1_to_6000",
		"RESET MASTER")
	return src
}

// srWorkload writes until stop is closed: rpWorkload's random changes,
// and on the big tables updates, deletes, inserts and key updates that
// move rows to the first and the last chunk.
func srWorkload(t *testing.T, src *testserver.Server, g *rpGen, stop chan struct{}) (done chan struct{}, ops *atomic.Int64) {
	return rpUntil(stop, func(i int) {
		rpWorkload(t, src, g, 10, false)
		id := 1 + g.pick(srBigRows)
		src.Exec(t, "BEGIN",
			fmt.Sprintf("UPDATE rp.big SET n = n + 1, v = 'changed' WHERE id = %d", id),
			fmt.Sprintf("DELETE FROM rp.big WHERE id = %d", srBigRows-id+1),
			fmt.Sprintf("INSERT INTO rp.big VALUES (%d, 'new', %d)", srBigRows+i+1, i),
			fmt.Sprintf("UPDATE IGNORE rp.big SET id = -id WHERE id = %d", 1+g.pick(srBigRows)),
			fmt.Sprintf("UPDATE IGNORE rp.big SET id = id + 1000000 WHERE id = %d", 1+g.pick(srBigRows)),
			fmt.Sprintf("UPDATE IGNORE rp.ck SET a = a + 5000 WHERE a = %d", g.pick(2000)),
			fmt.Sprintf("UPDATE rp.ck SET v = 'u%d' WHERE a = %d", i, g.pick(2000)),
			fmt.Sprintf("DELETE FROM rp.ck WHERE a = %d", g.pick(2000)),
			fmt.Sprintf("INSERT IGNORE INTO rp.ck VALUES (%d, '2021-01-01 00:00:00.%03d', 'n')", g.pick(3000), i%1000),
			fmt.Sprintf("UPDATE rp.ct SET v = v + 1 WHERE k = 'Key %d'", 1+g.pick(6000)),
			fmt.Sprintf("UPDATE IGNORE rp.ct SET k = CONCAT('moved ', k) WHERE k = 'Key %d'", 1+g.pick(6000)),
			fmt.Sprintf("DELETE FROM rp.ct WHERE k = 'key %d'", 1+g.pick(6000)),
			fmt.Sprintf("INSERT IGNORE INTO rp.ct VALUES ('new %d', %d)", i, i),
			"COMMIT")
	})
}

// srKills runs the snapshot, killed (as kill -9, by the test hook) at
// each point in turn: the tables are copied in name order (the hostile
// database's first, then rp.big, rp.ck, rp.comp, rp.ct, …, rp.types).
// killArgs are added to args for the killed runs only.
func srKills(t *testing.T, dir string, ops *atomic.Int64, args, killArgs []string) {
	for i, kill := range []string{
		"3",           // right after the 3rd saved chunk (in rp.big)
		"7.5",         // in the middle of the batch after the 7th (rp.big)
		"rp.ck:1550",  // in the middle of a composite-keyed table
		"rp.ct:2500",  // in the middle of a table copied as a whole (collated key)
		"rp.types:60", // in the first batch of a keyed table
		"window:20",   // inside the window, after 20 transactions
	} {
		tag := fmt.Sprint(i + 1)
		// Each chunk saved (not at most once a second) to -o's
		// checkpoint: every kill point follows a saved chunk.
		r := stStart(t, dir, tag, []string{"BINLOGCDC_TEST_SNAPSHOT_KILL=" + kill, "BINLOGCDC_TEST_SNAPSHOT_SAVE_EVERY_CHUNK=1"}, append(append([]string{}, args...), killArgs...)...)
		code := r.wait(4 * time.Minute)
		text := r.errText()
		if ws, ok := r.state.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("run %s (kill at %s): exit %d, not killed:\n%s", tag, kill, code, text)
		}
		if i > 0 && !strings.Contains(text, "continuing the interrupted snapshot") && !strings.Contains(text, "reconciled") {
			t.Errorf("run %s did not continue the interrupted snapshot:\n%s", tag, text)
		}
		if strings.Contains(text, "taking it again") || strings.Contains(text, "cannot be continued") {
			t.Errorf("run %s took the snapshot again:\n%s", tag, text)
		}
		if kill == "window:20" && !strings.Contains(text, "reconciles each change") {
			t.Errorf("run %s: no window after the resumed snapshot:\n%s", tag, text)
		}
		t.Logf("run %s killed at %s after %d workload rounds", tag, kill, ops.Load())
	}
}

func TestSnapshotResumeToMySQL(t *testing.T) {
	g := rpSeed(t)
	src := srSource(t, g)
	dst := testserver.Start(t, testserver.Options{})
	stop := make(chan struct{})
	done, ops := srWorkload(t, src, g, stop)
	dir := t.TempDir()
	args := []string{"--snapshot", "--source", src.DSN(), "--to", dst.DSN() + "/", "--group-time", "20ms", "--snapshot-batch", "100"}
	// The killed runs commit each batch on the target on its own (as
	// SAVE_EVERY_CHUNK saves each to a file): grouped, the hook's N-th
	// saved chunk may still wait in an open target transaction, and the
	// kill then rightly takes the snapshot again (seen on an idle
	// machine: three 100-row batches inside one 20 ms group).
	srKills(t, dir, ops, args, []string{"--group-rows", "1"})

	// The last run: in the window, then past it; the workload stops.
	r := stStart(t, dir, "last", nil, args...)
	// It starts inside the window the snapshot left.
	stPoll(t, time.Minute, r, "the restart inside the window", func() bool { return strings.Contains(r.errText(), "reconciled") })
	close(stop)
	<-done
	stPoll(t, 3*time.Minute, r, "the stream to catch up", func() bool {
		c := dst.QueryStrings(t, "SELECT CONCAT(file, ':', pos) FROM binlogcdc.checkpoint WHERE replica = 'default'")
		return len(c) == 1 && ssCaughtUp(t, src, *c[0][0])
	})
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}
	t.Logf("%d workload rounds; rp.big %s rows, rp.ck %s, rp.ct %s", ops.Load(), *src.QueryStrings(t, "SELECT COUNT(*) FROM rp.big")[0][0],
		*src.QueryStrings(t, "SELECT COUNT(*) FROM rp.ck")[0][0], *src.QueryStrings(t, "SELECT COUNT(*) FROM rp.ct")[0][0])
	rpCompare(t, src, dst, "stream --snapshot --to, resumed after kill -9 at six points")
	if out, errOut, code := runCLI(t, nil, "verify", "--source", src.DSN(), "--to", dst.DSN()+"/"); code != 0 {
		t.Errorf("verify: exit %d:\n%s%s", code, out, errOut)
	}
	// A restart now: the window is passed, the mark gone.
	if n := dst.QueryStrings(t, "SELECT COUNT(*) FROM binlogcdc.snapshot"); *n[0][0] != "0" {
		r := stStart(t, dir, "after", nil, args...)
		stPoll(t, time.Minute, r, "the restart", func() bool { return strings.Contains(r.errText(), "resuming at") })
		r.signal(syscall.SIGTERM)
		r.wait(time.Minute)
		if n := dst.QueryStrings(t, "SELECT COUNT(*) FROM binlogcdc.snapshot"); *n[0][0] != "0" {
			t.Errorf("the snapshot's mark is still on the target after the window:\n%s", r.errText())
		}
	}
}

func TestSnapshotResumeJSONFold(t *testing.T) {
	g := rpSeed(t)
	src := srSource(t, g)
	stop := make(chan struct{})
	done, ops := srWorkload(t, src, g, stop)
	dir := t.TempDir()
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	args := []string{"--snapshot", "--source", src.DSN(), "-o", out, "--checkpoint", cp, "--snapshot-batch", "100"}
	srKills(t, dir, ops, args, nil)

	r := stStart(t, dir, "last", nil, args...)
	// It starts inside the window the snapshot left.
	stPoll(t, time.Minute, r, "the restart inside the window", func() bool { return strings.Contains(r.errText(), "reconciled") })
	close(stop)
	<-done
	stPoll(t, 3*time.Minute, r, "the stream to catch up", func() bool {
		c := stLoadCP(t, cp)
		return ssCaughtUp(t, src, fmt.Sprintf("%s:%d", c.File, c.Offset))
	})
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}
	if c := stLoadCP(t, cp); c.Snapshot != nil {
		t.Errorf("the checkpoint still holds the snapshot's progress past its window: %s", c.Snapshot)
	}
	lines, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Each key once in the snapshot part; the snapshot part first.
	seen := map[string]bool{}
	streamed := false
	for _, l := range strings.Split(strings.TrimRight(string(lines), "\n"), "\n") {
		var x ssLine
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("bad line %q: %v", clip(l), err)
		}
		if x.Op != "snapshot" {
			streamed = true
			continue
		}
		if streamed {
			t.Fatalf("a snapshot line after the stream's: %s", clip(l))
		}
		if len(x.PK) == 0 {
			continue
		}
		k := x.DB + "." + x.Table
		for _, c := range x.PK {
			k += "|" + string(x.After[c])
		}
		if seen[k] {
			t.Errorf("key %s twice in the snapshot lines", k)
		}
		seen[k] = true
	}
	got := ssFold(t, lines)
	final, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN())
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	want := ssFold(t, final)
	ssCompareFold(t, got, want)
	t.Logf("%d workload rounds, %d lines (%d snapshot rows)", ops.Load(), strings.Count(string(lines), "\n"), strings.Count(string(lines), `{"op":"snapshot"`))
}

// The snapshot command killed inside the snapshot: the same command
// finishes it, and stream --checkpoint continues from its checkpoint.
func TestSnapshotCommandResume(t *testing.T) {
	g := rpSeed(t)
	src := srSource(t, g)
	stop := make(chan struct{})
	done, _ := srWorkload(t, src, g, stop)
	dir := t.TempDir()
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	args := []string{"snapshot", "--source", src.DSN(), "-o", out, "--checkpoint", cp, "--tables", "rp.big", "--tables", "rp.ck", "--snapshot-batch", "100"}
	if _, errOut, code := runCLI(t, []string{"BINLOGCDC_TEST_SNAPSHOT_KILL=30.5"}, args...); code != -1 {
		t.Fatalf("snapshot: exit %d, not killed:\n%s", code, errOut)
	}
	// A write between the two runs, whatever the workload's pace: the
	// resumed parts are then read at a later position than the first, a
	// window the stream must reconcile. (Without it, a snapshot faster
	// than the workload could resume with nothing written in between:
	// no window, and nothing to reconcile.)
	src.Exec(t, "INSERT INTO rp.big VALUES (-7, 'between the runs', 1)")
	_, errOut, code := runCLI(t, nil, args...)
	if code != 0 || !strings.Contains(errOut, "continuing the interrupted snapshot") {
		t.Fatalf("snapshot again: exit %d:\n%s", code, errOut)
	}
	if _, errOut, code := runCLI(t, nil, args...); code != 2 || !strings.Contains(errOut, "holds no unfinished snapshot") {
		t.Errorf("a third snapshot over the finished one's checkpoint: exit %d:\n%s", code, errOut)
	}
	close(stop)
	<-done
	r := stStart(t, dir, "stream", nil, "--source", src.DSN(), "-o", out, "--checkpoint", cp, "--tables", "rp.big", "--tables", "rp.ck")
	stPoll(t, 3*time.Minute, r, "the stream to catch up", func() bool {
		c := stLoadCP(t, cp)
		return ssCaughtUp(t, src, fmt.Sprintf("%s:%d", c.File, c.Offset))
	})
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}
	if !strings.Contains(r.errText(), "reconciled") {
		t.Errorf("the stream did not reconcile the resumed snapshot's window:\n%s", r.errText())
	}
	lines, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := ssFold(t, lines)
	final, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN(), "--tables", "rp.big", "--tables", "rp.ck")
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	for name, w := range ssFold(t, final) {
		if strings.Join(got[name], "\n") != strings.Join(w, "\n") {
			t.Errorf("%s: folded lines give %d rows, the source %d", name, len(got[name]), len(w))
		}
	}
}

// A DDL on a selected table after the interrupted snapshot began: the
// restart cannot continue it (rows read before and after the ALTER), so
// it takes it again as a whole, with -o cut back to before it.
func TestSnapshotResumeAfterDDL(t *testing.T) {
	g := rpSeed(t)
	src := srSource(t, g)
	dir := t.TempDir()
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	args := []string{"--snapshot", "--source", src.DSN(), "-o", out, "--checkpoint", cp, "--tables", "rp.big", "--tables", "rp.ck", "--snapshot-batch", "100"}
	r := stStart(t, dir, "1", []string{"BINLOGCDC_TEST_SNAPSHOT_KILL=30"}, args...)
	r.wait(4 * time.Minute)
	if ws, ok := r.state.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("not killed:\n%s", r.errText())
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Fatalf("nothing in -o after the first run: %v", err)
	}
	src.Exec(t, "UPDATE rp.ck SET v = 'before' WHERE a < 10",
		"ALTER TABLE rp.ck ADD COLUMN extra INT NOT NULL DEFAULT 7",
		"UPDATE rp.ck SET v = 'after', extra = 8 WHERE a BETWEEN 5 AND 20",
		"DELETE FROM rp.big WHERE id < 50")
	r = stStart(t, dir, "2", nil, args...)
	stPoll(t, 3*time.Minute, r, "the snapshot", func() bool { return strings.Contains(r.errText(), " rows of ") })
	if !strings.Contains(r.errText(), "cannot be continued (DDL at") || !strings.Contains(r.errText(), "ALTER TABLE rp.ck") {
		t.Errorf("the restart did not take the snapshot again for the DDL:\n%s", r.errText())
	}
	src.Exec(t, "UPDATE rp.ck SET v = 'later' WHERE a BETWEEN 15 AND 30", "INSERT INTO rp.big VALUES (-5, 'late', 1)")
	lines := ssStopCaughtUp(t, src, r, cp, out, 3*time.Minute)
	keys := map[string]bool{}
	for _, l := range strings.Split(strings.TrimRight(string(lines), "\n"), "\n") {
		var x ssLine
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("bad line %q: %v", clip(l), err)
		}
		if x.Op == "snapshot" {
			k := x.Table + "|" + string(x.After[x.PK[0]]) + "|" + string(x.After[x.PK[len(x.PK)-1]])
			if keys[k] {
				t.Fatalf("key %s twice in the snapshot lines (-o was not cut back)", k)
			}
			keys[k] = true
		}
	}
	got := ssFold(t, lines)
	final, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN(), "--tables", "rp.big", "--tables", "rp.ck")
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	for name, w := range ssFold(t, final) {
		if strings.Join(got[name], "\n") != strings.Join(w, "\n") {
			t.Errorf("%s: folded lines give %d rows, the source %d", name, len(got[name]), len(w))
		}
	}
}
