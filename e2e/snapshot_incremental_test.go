package e2e

// Incremental snapshots (stream --signal-table): while the stream runs
// under a write workload, a request inserted into the signal table on
// the source re-snapshots rp.later (not selected at first, filled before
// the binlogs began), rp.lost (whose rows the consumer lost) and, read
// whole, rp.nopk (no key) and rp.comp (a text key), and rp.ekey (keyed
// on an ENUM and a SET whose labels are not in index order, with key
// changes), chunk by chunk; binlogcdc is killed with SIGKILL inside the incremental snapshot
// and resumes it. After the workload stops and the stream catches up,
// every selected table equals the source: on a --to target (ordered
// rows, HEX, CHECKSUM TABLE, verify), and as JSON lines folded by key.

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
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
	snap "github.com/binlogcdc/binlogcdc/snapshot"
)

const (
	isLaterRows = 30000
	isLostRows  = 5000
	isEkeyRows  = 3000
	isSignal    = "INSERT INTO ctl.signal (type, data) VALUES ('snapshot', 'rp.later, rp.types, rp.nopk, rp.comp, rp.ekey, rp.lost')"
)

// isSource starts a source whose tables hold rows no binlog has: the rp
// workload's, rp.later and rp.lost; ctl.signal is the signal table.
func isSource(t *testing.T, g *rpGen) *testserver.Server {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, rpSchema...)
	rpWorkload(t, src, g, 300, false)
	src.Exec(t, "CREATE TABLE rp.later (id INT PRIMARY KEY, v VARCHAR(40), n BIGINT)",
		fmt.Sprintf("INSERT INTO rp.later SELECT seq, CONCAT('row ', seq), seq * seq FROM rp.seq_1_to_%d", isLaterRows),
		"CREATE TABLE rp.lost (id INT PRIMARY KEY, v VARCHAR(40), n BIGINT)",
		fmt.Sprintf("INSERT INTO rp.lost SELECT seq, CONCAT('row ', seq), seq FROM rp.seq_1_to_%d", isLostRows),
		// Chunk bounds compare by index and bitmask, not label.
		"CREATE TABLE rp.ekey (e ENUM('zeta','alpha','mid') NOT NULL, s SET('z','a') NOT NULL, id INT NOT NULL, v INT, PRIMARY KEY (e, s, id))",
		fmt.Sprintf("INSERT INTO rp.ekey SELECT 1 + seq %% 3, seq %% 4, seq, 0 FROM rp.seq_1_to_%d", isEkeyRows),
		"CREATE DATABASE ctl",
		"CREATE TABLE ctl.signal (id INT AUTO_INCREMENT PRIMARY KEY, type VARCHAR(32) NOT NULL, data TEXT)",
		"RESET MASTER")
	return src
}

// isTables selects every rp table but rp.later.
func isTables() []string {
	var a []string
	for _, n := range []string{"rp.types", "rp.nopk", "rp.comp", "rp.prefix", "rp.gone", "rp.lost", pipeline.QuoteName(rpHostileDB, rpHostileTable)} {
		a = append(a, "--tables", n)
	}
	return a
}

// isWorkload writes to src until stop is closed: the rp workload, and
// inserts, updates, key changes and deletes on rp.later and on the keys
// of rp.lost above 2500 (the consumer keeps those).
func isWorkload(t *testing.T, src *testserver.Server, g *rpGen, stop chan struct{}) (done chan struct{}, ops *atomic.Int64) {
	return rpUntil(stop, func(i int) {
		rpWorkload(t, src, g, 10, false)
		a, b, c := 1+g.pick(isLaterRows), 1+g.pick(isLaterRows), 1+g.pick(isLaterRows)
		x, y, z := 2501+g.pick(isLostRows-2500), 2501+g.pick(isLostRows-2500), 2501+g.pick(isLostRows-2500)
		src.Exec(t, "BEGIN",
			fmt.Sprintf("UPDATE rp.later SET n = n + 1, v = 'changed' WHERE id = %d", a),
			fmt.Sprintf("DELETE FROM rp.later WHERE id = %d", b),
			fmt.Sprintf("INSERT INTO rp.later VALUES (%d, 'new', %d)", isLaterRows+i+1, i),
			fmt.Sprintf("UPDATE IGNORE rp.later SET id = id + 1000000 WHERE id = %d", c),
			fmt.Sprintf("UPDATE rp.lost SET n = n + 1 WHERE id = %d", x),
			fmt.Sprintf("DELETE FROM rp.lost WHERE id = %d", y),
			fmt.Sprintf("INSERT INTO rp.lost VALUES (%d, 'new', %d)", 100000+i, i),
			fmt.Sprintf("UPDATE IGNORE rp.lost SET id = id + 500000 WHERE id = %d", z),
			fmt.Sprintf("UPDATE IGNORE rp.ekey SET e = %d, s = %d, v = v + 1 WHERE id = %d", 1+g.pick(3), g.pick(4), 1+g.pick(isEkeyRows)),
			"COMMIT")
	})
}

func TestIncrementalSnapshotToMySQL(t *testing.T) {
	g := rpSeed(t)
	src := isSource(t, g)
	dst := testserver.Start(t, testserver.Options{})
	stop := make(chan struct{})
	done, ops := isWorkload(t, src, g, stop)
	dir := t.TempDir()
	args := append([]string{"--snapshot", "--source", src.DSN(), "--to", dst.DSN() + "/", "--group-time", "20ms",
		"--signal-table", "ctl.signal", "--snapshot-chunk", "500"}, isTables()...)
	count := func(table string) int {
		r := dst.QueryStrings(t, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'rp' AND TABLE_NAME = '"+table+"'")
		if *r[0][0] == "0" {
			return 0
		}
		n := 0
		fmt.Sscan(*dst.QueryStrings(t, "SELECT COUNT(*) FROM rp."+table)[0][0], &n)
		return n
	}

	// 1: the initial snapshot; then the consumer loses rows of rp.lost,
	// and the request comes; killed inside the incremental snapshot.
	r := stStart(t, dir, "1", nil, args...)
	stPoll(t, 2*time.Minute, r, "the initial snapshot", func() bool { return strings.Contains(r.errText(), " rows of ") })
	at := ops.Load()
	stPoll(t, time.Minute, r, "the stream to apply changes", func() bool { return ops.Load() > at+3 })
	dst.Exec(t, "DELETE FROM rp.lost WHERE id <= 2000", "UPDATE rp.lost SET v = 'stale' WHERE id BETWEEN 2001 AND 2500")
	if count("later") != 0 {
		t.Fatalf("rp.later is on the target before it was asked for")
	}
	src.Exec(t, isSignal)
	stPoll(t, 2*time.Minute, r, "part of rp.later on the target", func() bool { return count("later") > 2000 })
	r.kill9()
	killedInside := !strings.Contains(r.errText(), "incremental snapshot of `rp`.`lost` done")
	t.Logf("killed inside the incremental snapshot: %v (rp.later had %d rows on the target)", killedInside, count("later"))

	// 2: resumes the incremental snapshot; the workload stops.
	r = stStart(t, dir, "2", nil, args...)
	stPoll(t, 3*time.Minute, r, "the incremental snapshot to finish", func() bool {
		return strings.Contains(r.errText(), "incremental snapshot of `rp`.`lost` done")
	})
	if killedInside && !strings.Contains(r.errText(), "incremental snapshot resumed") {
		t.Errorf("the restart did not resume the incremental snapshot:\n%s", r.errText())
	}
	close(stop)
	<-done
	stPoll(t, 2*time.Minute, r, "the stream to catch up", func() bool {
		c := dst.QueryStrings(t, "SELECT CONCAT(file, ':', pos) FROM binlogcdc.checkpoint WHERE replica = 'default'")
		return len(c) == 1 && ssCaughtUp(t, src, *c[0][0])
	})
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}
	if strings.Contains(r.errText(), "snapshot of ") && strings.Contains(r.errText(), "consistent with") {
		t.Errorf("the second run took an initial snapshot instead of resuming:\n%s", r.errText())
	}
	t.Logf("%d workload rounds; rp.later has %s rows, rp.lost %s", ops.Load(),
		*src.QueryStrings(t, "SELECT COUNT(*) FROM rp.later")[0][0], *src.QueryStrings(t, "SELECT COUNT(*) FROM rp.lost")[0][0])
	want := rpSnapshot(t, src)
	delete(want, "`ctl`.`signal`")
	rpSame(t, "incremental snapshot --to with kill -9 inside it", rpSnapshot(t, dst), want)
	if out, errOut, code := runCLI(t, nil, "verify", "--source", src.DSN(), "--to", dst.DSN()+"/", "--exclude-tables", "ctl.*"); code != 0 {
		t.Errorf("verify: exit %d:\n%s%s", code, out, errOut)
	}
}

// isFold folds JSON lines as ssFold does, except that a table's first
// snapshot line after the stream began (an incremental snapshot) starts
// it from empty: what a consumer that lost the table does.
func isFold(t *testing.T, out []byte) map[string][]string {
	var kept []string
	streaming := false
	reset := map[string]bool{}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for _, l := range lines {
		snap := strings.HasPrefix(l, `{"op":"snapshot"`)
		if !snap {
			streaming = true
			kept = append(kept, l)
			continue
		}
		if streaming {
			var x ssLine
			ssDecode(t, l, &x)
			name := x.DB + "." + x.Table
			if !reset[name] {
				reset[name] = true
				var rest []string
				for _, k := range kept {
					var y ssLine
					ssDecode(t, k, &y)
					if y.DB+"."+y.Table != name {
						rest = append(rest, k)
					}
				}
				kept = rest
			}
		}
		kept = append(kept, l)
	}
	return ssFold(t, []byte(strings.Join(kept, "\n")+"\n"))
}

func TestIncrementalSnapshotJSONFold(t *testing.T) {
	g := rpSeed(t)
	src := isSource(t, g)
	stop := make(chan struct{})
	done, ops := isWorkload(t, src, g, stop)
	dir := t.TempDir()
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	args := append([]string{"--snapshot", "--source", src.DSN(), "-o", out, "--checkpoint", cp,
		"--signal-table", "ctl.signal", "--snapshot-chunk", "500"}, isTables()...)

	r := stStart(t, dir, "1", nil, args...)
	stPoll(t, 2*time.Minute, r, "the checkpoint after the snapshot", func() bool { _, err := os.Stat(cp); return err == nil })
	src.Exec(t, isSignal)
	stPoll(t, 2*time.Minute, r, "incremental snapshot lines", func() bool {
		var st snap.State
		if err := json.Unmarshal(stLoadCP(t, cp).Incremental, &st); err != nil || len(st.Tables) == 0 {
			return false
		}
		return st.Tables[0].Rows > 0
	})
	r.kill9()
	killedInside := !strings.Contains(r.errText(), "incremental snapshot of `rp`.`lost` done")
	t.Logf("killed inside the incremental snapshot: %v", killedInside)

	r = stStart(t, dir, "2", nil, args...)
	stPoll(t, 3*time.Minute, r, "the incremental snapshot to finish", func() bool {
		return strings.Contains(r.errText(), "incremental snapshot of `rp`.`lost` done")
	})
	if killedInside && !strings.Contains(r.errText(), "incremental snapshot resumed") {
		t.Errorf("the restart did not resume the incremental snapshot:\n%s", r.errText())
	}
	close(stop)
	<-done
	lines := ssStopCaughtUp(t, src, r, cp, out, 2*time.Minute)
	if strings.Contains(string(lines), `"table":"signal"`) {
		t.Errorf("the signal table's rows are in the output")
	}
	got := isFold(t, lines)
	final, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN(), "--exclude-tables", "ctl.*")
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	want := ssFold(t, final)
	if len(want["rp.later"]) == 0 || len(want["rp.lost"]) == 0 {
		t.Fatalf("the final snapshot lacks tables")
	}
	ssCompareFold(t, got, want)
	t.Logf("%d workload rounds, %d lines (%d snapshot rows)", ops.Load(), strings.Count(string(lines), "\n"), strings.Count(string(lines), `{"op":"snapshot"`))
}

func ssDecode(t *testing.T, l string, x *ssLine) {
	t.Helper()
	if err := json.Unmarshal([]byte(l), x); err != nil {
		t.Fatalf("bad line %q: %v", clip(l), err)
	}
}

// TestIncrementalSnapshotNewTables: a stream restarted with a wider
// --tables and --snapshot-new-tables copies the table it adds (filled
// before the binlogs began) while it streams, under the write load; the
// JSON lines folded by key give the source's tables.
func TestIncrementalSnapshotNewTables(t *testing.T) {
	g := rpSeed(t)
	src := isSource(t, g)
	stop := make(chan struct{})
	done, ops := isWorkload(t, src, g, stop)
	dir := t.TempDir()
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	args := []string{"--snapshot", "--source", src.DSN(), "-o", out, "--checkpoint", cp, "--snapshot-new-tables", "--snapshot-chunk", "700", "--tables", "rp.lost"}

	r := stStart(t, dir, "1", nil, args...)
	stPoll(t, 2*time.Minute, r, "the selection in the checkpoint", func() bool {
		_, err := os.Stat(cp)
		return err == nil && strings.Contains(string(stLoadCP(t, cp).Incremental), `"selection"`)
	})
	at := ops.Load()
	stPoll(t, time.Minute, r, "changes", func() bool { return ops.Load() > at+3 })
	r.kill9()

	r = stStart(t, dir, "2", nil, append(args, "--tables", "rp.later")...)
	stPoll(t, 3*time.Minute, r, "the new table's incremental snapshot", func() bool {
		return strings.Contains(r.errText(), "incremental snapshot of `rp`.`later` done")
	})
	if !strings.Contains(r.errText(), "--snapshot-new-tables: newly selected: `rp`.`later`") {
		t.Errorf("the restart did not name the new table:\n%s", r.errText())
	}
	close(stop)
	<-done
	lines := ssStopCaughtUp(t, src, r, cp, out, 2*time.Minute)
	got := isFold(t, lines)
	final, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN(), "--tables", "rp.lost", "--tables", "rp.later")
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	want := ssFold(t, final)
	for _, name := range []string{"rp.lost", "rp.later"} {
		if g, w := strings.Join(got[name], "\n"), strings.Join(want[name], "\n"); g != w || len(want[name]) == 0 {
			t.Errorf("%s: folded lines give %d rows, the source %d", name, len(got[name]), len(want[name]))
		}
	}
	if len(got) != 2 {
		t.Errorf("folded lines hold %d tables, want 2", len(got))
	}
}

// TestIncrementalSnapshotKafka: --to kafka:// gets a requested table's
// rows as snapshot records on its topic, each keyed by its primary key,
// each row once (the source is idle meanwhile).
func TestIncrementalSnapshotKafka(t *testing.T) {
	g := rpSeed(t)
	src := isSource(t, g)
	brokers := kafkatest.Cluster(t)
	prefix := kafkatest.Prefix(t)
	dir := t.TempDir()
	// --from earliest (the binlogs begin after isSource's tables were
	// filled): with --from now the signal, inserted once the stream
	// says it connected, could land before the position it starts at,
	// which it reads after saying so, and never be seen.
	r := stStart(t, dir, "1", nil, "--source", src.DSN(), "--from", "earliest", "--tables", "rp.lost", "--signal-table", "ctl.signal",
		"--to", "kafka://"+strings.Join(brokers, ","), "--kafka-topic-prefix", prefix, "--checkpoint", filepath.Join(dir, "cp.json"))
	stPoll(t, time.Minute, r, "the stream to start", r.ready)
	src.Exec(t, "INSERT INTO ctl.signal (type, data) VALUES ('snapshot', 'rp.later')")
	stPoll(t, 2*time.Minute, r, "the incremental snapshot", func() bool {
		return strings.Contains(r.errText(), "incremental snapshot of `rp`.`later` done")
	})
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}
	recs := kafkatest.Consume(t, brokers, []string{prefix + ".rp.later"}, false)
	seen := map[string]bool{}
	for _, rec := range recs {
		var l kfLine
		if err := json.Unmarshal(rec.Value, &l); err != nil {
			t.Fatal(err)
		}
		if l.Op != "snapshot" {
			t.Fatalf("a %s record on %s", l.Op, rec.Topic)
		}
		id := string(l.After["id"])
		l.Op = "insert" // key() treats it as an insert
		if k := l.key(); string(k) != string(rec.Key) {
			t.Errorf("record of id %s keyed %s, want %s", id, rec.Key, k)
		}
		if seen[id] {
			t.Errorf("id %s twice", id)
		}
		seen[id] = true
	}
	if len(seen) != isLaterRows {
		t.Errorf("%d rows of rp.later on Kafka, want %d", len(seen), isLaterRows)
	}
}
