package e2e

// stream --snapshot: tables filled before the binlogs began (RESET MASTER:
// their rows are in no binlog), a write workload running all along, and
// binlogcdc killed with SIGKILL inside the snapshot and inside the stream.
// After the workload stops and the stream catches up, the copy equals the
// source: on a --to target (ordered rows, HEX, CHECKSUM TABLE, verify),
// and as JSON lines folded by primary key.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

const ssBigRows = 100000

// ssSource starts a source whose tables hold rows that no binlog has.
func ssSource(t *testing.T, g *rpGen) *testserver.Server {
	src := testserver.Start(t, testserver.Options{})
	src.Exec(t, rpSchema...)
	rpWorkload(t, src, g, 300, false)
	src.Exec(t, "CREATE TABLE rp.big (id INT PRIMARY KEY, v VARCHAR(40), n BIGINT)",
		fmt.Sprintf("INSERT INTO rp.big SELECT seq, CONCAT('row ', seq), seq * seq FROM rp.seq_1_to_%d", ssBigRows),
		"RESET MASTER")
	return src
}

// ssWorkload writes to src until stop is closed; it also changes rp.big
// (updates, deletes, new keys), so rows change while the snapshot reads
// them.
func ssWorkload(t *testing.T, src *testserver.Server, g *rpGen, stop chan struct{}) (done chan struct{}, ops *atomic.Int64) {
	return rpUntil(stop, func(i int) {
		rpWorkload(t, src, g, 20, false)
		id := 1 + g.pick(ssBigRows)
		src.Exec(t, "BEGIN",
			fmt.Sprintf("UPDATE rp.big SET n = n + 1, v = 'changed' WHERE id = %d", id),
			fmt.Sprintf("DELETE FROM rp.big WHERE id = %d", ssBigRows-id+1),
			fmt.Sprintf("INSERT INTO rp.big VALUES (%d, 'new', %d)", ssBigRows+i+1, i),
			"COMMIT")
	})
}

// ssCaughtUp reports whether pos (FILE:POS) is the end of src's last
// transaction in GTID domain 0.
func ssCaughtUp(t *testing.T, src *testserver.Server, pos string) bool {
	last := stLastGTID(t, src)
	for _, g := range strings.Split(last, ",") {
		if strings.HasPrefix(g, "0-") { // the tests write their changes in domain 0
			last = g
		}
	}
	f, end := stTxEnd(t, src, last)
	return pos == fmt.Sprintf("%s:%d", f, end)
}

func TestSnapshotStreamToMySQL(t *testing.T) {
	g := rpSeed(t)
	src := ssSource(t, g)
	dst := testserver.Start(t, testserver.Options{})
	stop := make(chan struct{})
	done, ops := ssWorkload(t, src, g, stop)
	dir := t.TempDir()
	args := []string{"--snapshot", "--source", src.DSN(), "--to", dst.DSN() + "/", "--group-time", "20ms", "--snapshot-batch", "200"}
	bigRows := func() int {
		r := dst.QueryStrings(t, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'rp' AND TABLE_NAME = 'big'")
		if *r[0][0] == "0" {
			return 0
		}
		n := 0
		fmt.Sscan(*dst.QueryStrings(t, "SELECT COUNT(*) FROM rp.big")[0][0], &n)
		return n
	}
	finished := func(r *stRun) bool {
		return strings.Contains(r.errText(), "binlogcdc: snapshot: ") && strings.Contains(r.errText(), " rows of ")
	}

	// 1: killed inside the snapshot, once some of rp.big is on the target.
	r := stStart(t, dir, "1", nil, args...)
	stPoll(t, 2*time.Minute, r, "rows of rp.big on the target", func() bool { return bigRows() > 0 })
	r.kill9()
	killedInside := !finished(r)
	t.Logf("first run killed inside the snapshot: %v (rp.big had %d rows on the target)", killedInside, bigRows())

	// 2: the snapshot is taken again; killed inside the stream.
	r = stStart(t, dir, "2", nil, args...)
	stPoll(t, 3*time.Minute, r, "the snapshot to finish", func() bool { return finished(r) })
	if killedInside && !strings.Contains(r.errText(), "did not finish") && !strings.Contains(r.errText(), "continuing the interrupted snapshot") {
		t.Errorf("the restart neither continued the unfinished snapshot nor took it again:\n%s", r.errText())
	}
	from := rpCheckpoint(t, dst)
	at := ops.Load()
	stPoll(t, 2*time.Minute, r, "the stream to apply changes", func() bool { return ops.Load() > at+5 && rpCheckpoint(t, dst) != from })
	r.kill9()

	// 3: resumes from the target's checkpoint; the workload stops.
	r = stStart(t, dir, "3", nil, args...)
	stPoll(t, time.Minute, r, "the restart", func() bool { return strings.Contains(r.errText(), "resuming at") })
	time.Sleep(200 * time.Millisecond) // more changes while it streams (not a timing assertion)
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
	if strings.Contains(r.errText(), "snapshot of ") {
		t.Errorf("the third run took a snapshot instead of resuming:\n%s", r.errText())
	}
	t.Logf("%d workload rounds; rp.big has %s rows", ops.Load(), *src.QueryStrings(t, "SELECT COUNT(*) FROM rp.big")[0][0])
	rpCompare(t, src, dst, "stream --snapshot --to with kill -9 in the snapshot and in the stream")
	if out, errOut, code := runCLI(t, nil, "verify", "--source", src.DSN(), "--to", dst.DSN()+"/"); code != 0 {
		t.Errorf("verify: exit %d:\n%s%s", code, out, errOut)
	}
}

// ssLine is one JSON line, for folding.
type ssLine struct {
	Op     string                     `json:"op"`
	DB     string                     `json:"db"`
	Table  string                     `json:"table"`
	PK     []string                   `json:"pk"`
	Before map[string]json.RawMessage `json:"before"`
	After  map[string]json.RawMessage `json:"after"`
	RawB   json.RawMessage            `json:"-"`
}

// ssCompareFold compares JSON lines folded by key (ssFold) with the
// source's tables folded the same way, naming the first difference.
func ssCompareFold(t *testing.T, got, want map[string][]string) {
	t.Helper()
	for name, w := range want {
		gr := got[name]
		if strings.Join(gr, "\n") == strings.Join(w, "\n") {
			continue
		}
		i := 0
		for i < len(gr) && i < len(w) && gr[i] == w[i] {
			i++
		}
		at := func(l []string) string {
			if i < len(l) {
				return clip(l[i])
			}
			return "(end)"
		}
		t.Errorf("%s: folded lines give %d rows, the source %d; first difference at %d:\n got  %s\n want %s", name, len(gr), len(w), i, at(gr), at(w))
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("folded lines hold table %s, which the source has not", name)
		}
	}
}

// ssFold applies JSON lines (snapshot rows, then changes) to tables of
// rows: keyed by the primary key, or a multiset of whole rows for a
// table without one. It returns each table's rows, sorted.
func ssFold(t *testing.T, out []byte) map[string][]string {
	t.Helper()
	type table struct {
		byKey map[string]string
		bag   map[string]int
	}
	tables := map[string]*table{}
	rowText := func(m map[string]json.RawMessage) string {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%q=%s;", k, m[k])
		}
		return b.String()
	}
	keyOf := func(pk []string, m map[string]json.RawMessage) string {
		var b strings.Builder
		for _, k := range pk {
			fmt.Fprintf(&b, "%s;", m[k])
		}
		return b.String()
	}
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if l == "" {
			continue
		}
		var x ssLine
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("bad line %q: %v", clip(l), err)
		}
		if x.Op == "ddl" {
			continue
		}
		name := x.DB + "." + x.Table
		tb := tables[name]
		if tb == nil {
			tb = &table{byKey: map[string]string{}, bag: map[string]int{}}
			tables[name] = tb
		}
		if x.Before != nil {
			if len(x.PK) > 0 {
				delete(tb.byKey, keyOf(x.PK, x.Before))
			} else if tb.bag[rowText(x.Before)]--; tb.bag[rowText(x.Before)] < 0 {
				t.Fatalf("%s: %s removes a row that is not there: %s", name, x.Op, clip(l))
			}
		}
		if x.After != nil {
			if len(x.PK) > 0 {
				tb.byKey[keyOf(x.PK, x.After)] = rowText(x.After)
			} else {
				tb.bag[rowText(x.After)]++
			}
		}
	}
	res := map[string][]string{}
	for name, tb := range tables {
		var rows []string
		for _, r := range tb.byKey {
			rows = append(rows, r)
		}
		for r, n := range tb.bag {
			for ; n > 0; n-- {
				rows = append(rows, r)
			}
		}
		sort.Strings(rows)
		res[name] = rows
	}
	return res
}

func TestSnapshotStreamJSONFold(t *testing.T) {
	g := rpSeed(t)
	src := ssSource(t, g)
	stop := make(chan struct{})
	done, ops := ssWorkload(t, src, g, stop)
	dir := t.TempDir()
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	args := []string{"--snapshot", "--source", src.DSN(), "-o", out, "--checkpoint", cp}

	// 1: killed inside the snapshot, once part of it is in the file.
	r := stStart(t, dir, "1", nil, args...)
	stPoll(t, 2*time.Minute, r, "snapshot lines in -o", func() bool { st, err := os.Stat(out); return err == nil && st.Size() > 1<<20 })
	r.kill9()

	// 2: cuts the file back, continues the snapshot; killed in the stream.
	r = stStart(t, dir, "2", nil, args...)
	stPoll(t, 3*time.Minute, r, "the end of the snapshot", func() bool {
		return strings.Contains(r.errText(), " rows of ") || strings.Contains(r.errText(), "resuming at") && !strings.Contains(r.errText(), "continuing the interrupted snapshot")
	})
	first := stLoadCP(t, cp)
	at := ops.Load()
	stPoll(t, 2*time.Minute, r, "the stream to write changes", func() bool { return ops.Load() > at+5 && stLoadCP(t, cp).Offset != first.Offset })
	r.kill9()

	if _, err := os.Stat(cp + ".snapshot"); err == nil {
		t.Errorf("the snapshot's mark %s.snapshot is still there after its checkpoint", cp)
	}

	// 3: resumes from the checkpoint; the workload stops.
	r = stStart(t, dir, "3", nil, args...)
	stPoll(t, time.Minute, r, "the restart", func() bool { return strings.Contains(r.errText(), "resuming at") })
	close(stop)
	<-done
	lines := ssStopCaughtUp(t, src, r, cp, out, 2*time.Minute)
	got := ssFold(t, lines)

	// The source's final tables, as a snapshot (whose values TestSnapshotValueParity proves).
	final, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN())
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	want := ssFold(t, final)
	if len(want["rp.big"]) == 0 || len(want["rp.types"]) == 0 {
		t.Fatalf("the final snapshot lacks tables: %v", len(want))
	}
	ssCompareFold(t, got, want)
	t.Logf("%d workload rounds, %d lines (%d snapshot rows, %d inserts, %d updates, %d deletes)", ops.Load(), strings.Count(string(lines), "\n"),
		strings.Count(string(lines), `{"op":"snapshot"`), strings.Count(string(lines), `{"op":"insert"`),
		strings.Count(string(lines), `{"op":"update"`), strings.Count(string(lines), `{"op":"delete"`))
}

// ssStopCaughtUp waits (up to wait) until the stream r's checkpoint file
// cp is at the end of src's last transaction, stops r with SIGTERM (it
// must exit 0), and returns its output file out.
func ssStopCaughtUp(t *testing.T, src *testserver.Server, r *stRun, cp, out string, wait time.Duration) []byte {
	t.Helper()
	stPoll(t, wait, r, "the stream to catch up", func() bool {
		c := stLoadCP(t, cp)
		return ssCaughtUp(t, src, fmt.Sprintf("%s:%d", c.File, c.Offset))
	})
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("stream exit %d after SIGTERM:\n%s", code, r.errText())
	}
	lines, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}
