package e2e

// Failover: a primary A with a replica R (MariaDB GTID replication,
// log_slave_updates, gtid_strict_mode) dies (SIGKILL), R is promoted, and
// every kind of consumer resumes on R by GTID at the first transaction it
// had not delivered: nothing lost, nothing twice.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
	"github.com/twmb/franz-go/pkg/kgo"
)

// foPair starts a primary A and a replica R of it (GTID replication from
// the start, log_slave_updates, gtid_strict_mode on both). flush rotates
// R's binlog first, so that A's positions name nothing in R's binlog.
func foPair(t *testing.T, flush bool) (a, r *testserver.Server) {
	t.Helper()
	gtid := []string{"--gtid-strict-mode=ON", "--log-slave-updates=ON"}
	a = testserver.Start(t, testserver.Options{ExtraArgs: gtid})
	r = testserver.Start(t, testserver.Options{ExtraArgs: append([]string{"--server-id=2"}, gtid...)})
	if flush {
		r.FlushLogs(t)
	}
	r.Exec(t, fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_USE_GTID=slave_pos", a.Port),
		"START SLAVE")
	return a, r
}

// foCatchUp waits until R has logged every transaction of A.
func foCatchUp(t *testing.T, a, r *testserver.Server) {
	t.Helper()
	want := stLastGTID(t, a)
	stPoll(t, 2*time.Minute, nil, "the replica to reach "+want, func() bool { return stLastGTID(t, r) == want })
}

// foPromote kills A with SIGKILL and makes R a primary.
func foPromote(t *testing.T, a, r *testserver.Server) {
	t.Helper()
	a.Kill(t)
	r.Exec(t, "STOP SLAVE", "RESET SLAVE ALL")
}

// foPos matches the position of a JSON line, and foTS its time: what
// differs between a change of A's binlog and R's copy of it. (MariaDB
// logs a replicated transaction with the replica's time, which may be a
// second later than the primary's.)
var (
	foPos = regexp.MustCompile(`"pos":\{"file":"[^"]*","offset":\d+,"row":\d+\},`)
	foTS  = regexp.MustCompile(`"ts":"[^"]*",`)
)

// foNorm drops a JSON line's position and, for A's transactions (server
// id 1), its time.
func foNorm(l string) string {
	l = foPos.ReplaceAllString(l, "")
	if strings.Contains(l, `"gtid":"0-1-`) {
		l = foTS.ReplaceAllString(l, "")
	}
	return l
}

// foLines splits JSON lines and normalizes them (foNorm).
func foLines(b []byte) []string {
	var out []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" {
			out = append(out, foNorm(l))
		}
	}
	return out
}

// foSame fails unless got and want are the same lines, positions and
// times of A's transactions aside.
func foSame(t *testing.T, what string, got, want []byte) {
	t.Helper()
	stSameOutput(t, what, []byte(strings.Join(foLines(got), "")), []byte(strings.Join(foLines(want), "")))
}

// TestFailover runs three consumers of A at once: stream --checkpoint
// -o (JSON), stream --to (replay into a third server) and stream --to
// kafka:// --kafka-exactly-once. A workload runs on A while each is
// killed with SIGKILL at a random moment (the --to one instead keeps
// running into A's death, and is stopped with SIGTERM while it retries).
// Once R has every transaction of A, A is killed with SIGKILL and R
// promoted; more changes are made on R, and each consumer is restarted
// against R. Each resumes after its last delivered transaction by GTID:
//
//   - JSON: the output file holds every change of R's binlog (A's
//     transactions, then R's own) once, in order, positions aside
//     (and the times of A's transactions: R logs its own);
//   - --to: the target equals R ('binlogcdc verify', ordered rows with
//     HEX of every column, CHECKSUM TABLE);
//   - Kafka: a read_committed consumer sees every change once, in order
//     within each partition.
//
// Twice: with R's binlog rotated before it replicates, so that A's
// positions name nothing in R's binlog (the consumers resume by GTID),
// and without, where R, having followed A from the start, logged A's
// transactions at A's positions, with XIDs of its own (they resume at
// the position, where the same GTIDs end).
func TestFailover(t *testing.T) {
	t.Parallel()
	for _, rotated := range []bool{true, false} {
		name := "R's binlog like A's"
		if rotated {
			name = "R's binlog rotated"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			foFailover(t, rotated)
		})
	}
}

// foConsumers are the three consumers of a failover test: stream
// --checkpoint -o, stream --to a third server, stream --to kafka://
// --kafka-exactly-once.
type foConsumers struct {
	t                    *testing.T
	dir, cp, out, prefix string
	dst                  *testserver.Server
	brokers              []string
}

var foNames = []string{"json", "to", "kafka"}

func newFoConsumers(t *testing.T) *foConsumers {
	dir := t.TempDir()
	return &foConsumers{t: t, dir: dir, cp: filepath.Join(dir, "cp.json"), out: filepath.Join(dir, "out.jsonl"),
		dst: testserver.Start(t, testserver.Options{}), brokers: kafkatest.Cluster(t), prefix: kafkatest.Prefix(t)}
}

// start starts consumer n against s.
func (c *foConsumers) start(n string, s *testserver.Server, tag string) *stRun {
	args := map[string][]string{
		"json": {"--ddl", "--checkpoint", c.cp, "--output", c.out},
		"to":   {"--to", c.dst.DSN() + "/", "--group-time", "20ms"},
		"kafka": {"--ddl", "--to", "kafka://" + strings.Join(c.brokers, ","),
			"--kafka-topic-prefix", c.prefix, "--kafka-exactly-once", "--kafka-replica-name", "fo"},
	}[n]
	run := stStart(c.t, c.dir, n+"-"+tag, nil, append([]string{"--source", s.DSN(), "--from", "earliest"}, args...)...)
	c.t.Cleanup(func() {
		if c.t.Failed() {
			c.t.Logf("%s-%s stderr:\n%s", n, tag, run.errText())
		}
	})
	return run
}

// done returns whether consumer n delivered transaction gtid of s, its
// last one.
func (c *foConsumers) done(n string, s *testserver.Server, gtid string) func() bool {
	t := c.t
	file, end := stTxEnd(t, s, gtid)
	return map[string]func() bool{
		"json": func() bool { return stHasGTID(c.out, gtid) },
		"to": func() bool {
			if len(c.dst.QueryStrings(t, "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'binlogcdc' AND TABLE_NAME = 'checkpoint'")) == 0 {
				return false
			}
			r := c.dst.QueryStrings(t, "SELECT CONCAT(file, ':', pos) FROM binlogcdc.checkpoint WHERE replica = 'default'")
			return len(r) == 1 && *r[0][0] == fmt.Sprintf("%s:%d", file, end)
		},
		"kafka": func() bool {
			cp := kfLastCheckpoint(t, c.brokers, c.prefix, "fo")
			return cp != nil && cp.LastGTID == gtid
		},
	}[n]
}

// stop stops run with SIGTERM, which must exit 0.
func (c *foConsumers) stop(n string, run *stRun) {
	c.t.Helper()
	run.signal(syscall.SIGTERM)
	if code := run.wait(time.Minute); code != 0 {
		c.t.Fatalf("%s: SIGTERM: exit %d; stderr:\n%s", n, code, run.errText())
	}
}

func foFailover(t *testing.T, rotated bool) {
	g := rpSeed(t)
	a, r := foPair(t, rotated)
	c := newFoConsumers(t)

	a.Exec(t, rpSchema...)
	rpWorkload(t, a, g, 40, true)
	runs := map[string]*stRun{}
	for _, n := range foNames {
		runs[n] = c.start(n, a, "a")
	}
	for _, n := range foNames {
		stPoll(t, time.Minute, runs[n], n+" to connect to A", runs[n].ready)
	}
	// SIGKILL the JSON and Kafka streams at random moments of the
	// workload.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	var kills sync.WaitGroup
	for _, n := range []string{"json", "kafka"} {
		kills.Add(1)
		go func(run *stRun, after time.Duration) {
			defer kills.Done()
			time.Sleep(after)
			run.kill9()
		}(runs[n], time.Duration(200+rng.IntN(1500))*time.Millisecond)
	}
	rpWorkload(t, a, g, 300, false)
	kills.Wait()
	foCatchUp(t, a, r)
	aLast := stLastGTID(t, a)
	foPromote(t, a, r)
	// The --to stream lost its source: it retries until stopped.
	to := runs["to"]
	stPoll(t, time.Minute, to, "the --to stream to retry", func() bool { return strings.Contains(to.errText(), "reconnecting") })
	c.stop("--to stream retrying", to)

	rpWorkload(t, r, g, 100, false)
	rLast := stLastGTID(t, r)
	if !strings.HasPrefix(rLast, "0-2-") {
		t.Fatalf("R's last GTID %s, want one of its own (server id 2)", rLast)
	}
	for _, n := range foNames {
		runs[n] = c.start(n, r, "r")
	}
	for _, n := range foNames {
		run := runs[n]
		stPoll(t, 3*time.Minute, run, n+" on R to reach "+rLast, c.done(n, r, rLast))
		c.stop(n+" on R", run)
		// (A consumer killed before its first transaction resumes at the
		// start, binlog.000001:4, which holds on R too.)
		if rotated && !strings.Contains(run.errText(), "resuming after GTID position 0-1-") && !strings.Contains(run.errText(), "resuming at binlog.000001:4 ") {
			t.Errorf("%s on R did not resume by GTID:\n%s", n, run.errText())
		}
	}
	t.Logf("A's last transaction %s, R's %s", aLast, rLast)

	// Every change R's binlog holds (A's transactions as R logged them,
	// then R's own): the union, each once.
	want := stRead(t, r, "--ddl")
	got, err := os.ReadFile(c.out)
	if err != nil {
		t.Fatal(err)
	}
	foSame(t, "stream -o across the failover", got, want)
	stCheckCPAtEnd(t, r, c.cp, rLast, r.Addr())

	rpCompare(t, r, c.dst, "stream --to across the failover")
	if v, _ := rpRun(t, 0, "verify", "--source", r.DSN(), "--to", c.dst.DSN()+"/"); !strings.Contains(string(v), "tables are equal") {
		t.Errorf("verify:\n%s", v)
	}

	foKafkaOnce(t, c.prefix, want, kafkatest.Consume(t, c.brokers, kafkatest.Topics(t, c.brokers, c.prefix+"."), true))
}

// foKafkaOnce checks that the data and schema records of prefix (read
// committed) are the lines of want, each once (foNorm), on one topic per
// table (DDL: schema-changes), and in want's order within each partition.
func foKafkaOnce(t *testing.T, prefix string, want []byte, recs []*kgo.Record) {
	t.Helper()
	lines := foLines(want)
	at := map[string][]int{} // line → its indexes in want, unused ones
	for i, l := range lines {
		at[l] = append(at[l], i)
	}
	last := map[string]int{}
	topics := map[string]string{}
	n := 0
	for _, rec := range recs {
		if rec.Topic == prefix+".checkpoints" || rec.Topic == prefix+".schema-history" || rec.Value == nil {
			continue
		}
		l := foNorm(string(rec.Value) + "\n")
		idx := at[l]
		if len(idx) == 0 {
			n := 0
			for _, w := range lines {
				if w == l {
					n++
				}
			}
			var same []string
			for _, o := range recs {
				if foNorm(string(o.Value)+"\n") == l {
					same = append(same, fmt.Sprintf("partition %d offset %d pos %s", o.Partition, o.Offset, kfRecPos(o)))
				}
			}
			t.Fatalf("a record on %s is in R's binlog %d times, in Kafka %d times (%s): %s", rec.Topic, n, len(same), strings.Join(same, "; "), clip(l))
		}
		i := idx[0]
		at[l] = idx[1:]
		var k kfLine
		if err := json.Unmarshal([]byte(l), &k); err != nil {
			t.Fatal(err)
		}
		// (Topic names are sanitized table names: one topic per table.)
		table := k.DB + "." + k.Table
		if k.Op == "ddl" {
			table = ""
		}
		if prev, ok := topics[table]; ok && prev != rec.Topic || table == "" && rec.Topic != prefix+".schema-changes" {
			t.Fatalf("%s on topic %s (the table's other records: %s)", clip(l), rec.Topic, prev)
		}
		topics[table] = rec.Topic
		tp := fmt.Sprintf("%s/%d", rec.Topic, rec.Partition)
		if p, ok := last[tp]; ok && i < p {
			t.Fatalf("on %s, line %d of read comes after line %d: out of order", tp, i+1, p+1)
		}
		last[tp] = i
		n++
	}
	if n != len(lines) {
		for l, idx := range at {
			if len(idx) > 0 {
				t.Fatalf("%d records for %d changes; line %d was not published: %s", n, len(lines), idx[0]+1, clip(l))
			}
		}
	}
	if bytes.Count(want, []byte("\n")) != n {
		t.Fatalf("%d records, want %d", n, bytes.Count(want, []byte("\n")))
	}
}

// TestFailoverCheckpointAhead: R stops replicating (its connection to A
// lost), A commits more, and the consumers deliver all of it; then A
// dies and R is promoted without those transactions. Each consumer's
// resume point is ahead of R: all three refuse (exit 5), naming the
// transactions R never logged, and change nothing: the output file and
// checkpoint, the target's checkpoint, Kafka's records.
func TestFailoverCheckpointAhead(t *testing.T) {
	t.Parallel()
	a, r := foPair(t, true)
	c := newFoConsumers(t)
	a.Exec(t, "CREATE DATABASE ah", "CREATE TABLE ah.t (id INT PRIMARY KEY, v VARCHAR(20))")
	for i := 1; i <= 5; i++ {
		a.Exec(t, fmt.Sprintf("INSERT INTO ah.t VALUES (%d, 'both')", i))
	}
	foCatchUp(t, a, r)
	rHas := stLastGTID(t, r)
	r.Exec(t, "STOP SLAVE")
	for i := 6; i <= 9; i++ {
		a.Exec(t, fmt.Sprintf("INSERT INTO ah.t VALUES (%d, 'lost')", i))
	}
	aLast := stLastGTID(t, a)
	for _, n := range foNames {
		run := c.start(n, a, "a")
		stPoll(t, time.Minute, run, n+" to reach "+aLast, c.done(n, a, aLast))
		c.stop(n, run)
	}
	a.Kill(t)
	r.Exec(t, "RESET SLAVE ALL", "INSERT INTO ah.t VALUES (100, 'r')")

	outBefore, _ := os.ReadFile(c.out)
	cpBefore, _ := os.ReadFile(c.cp)
	dstBefore := rpRows(t, c.dst, "SELECT * FROM binlogcdc.checkpoint") + rpRows(t, c.dst, "SELECT * FROM ah.t ORDER BY id")
	kBefore := len(kafkatest.Consume(t, c.brokers, kafkatest.Topics(t, c.brokers, c.prefix+"."), false))
	h, _ := checkpoint.ParseMariaGTID(rHas)
	missing := fmt.Sprintf("the transactions 0-1-%d … %s were delivered, and this server never logged them", h.Seq+1, aLast)
	for _, n := range foNames {
		run := c.start(n, r, "r")
		code := run.wait(time.Minute)
		errs := run.errText()
		if code != 5 || !strings.Contains(errs, "is ahead of this server ("+r.Addr()+"): it was saved after "+aLast) ||
			!strings.Contains(errs, missing) || !strings.Contains(errs, "reconcile them first") {
			t.Errorf("%s on R: exit %d, want 5 and %q; stderr:\n%s", n, code, missing, errs)
		} else if n == "json" {
			t.Logf("refused:\n%s", errs)
		}
	}
	if b, _ := os.ReadFile(c.out); !bytes.Equal(b, outBefore) {
		t.Errorf("the output changed")
	}
	if b, _ := os.ReadFile(c.cp); !bytes.Equal(b, cpBefore) {
		t.Errorf("the checkpoint changed:\n%s\nwas:\n%s", b, cpBefore)
	}
	if got := rpRows(t, c.dst, "SELECT * FROM binlogcdc.checkpoint") + rpRows(t, c.dst, "SELECT * FROM ah.t ORDER BY id"); got != dstBefore {
		t.Errorf("the target changed:\n%s\nwas:\n%s", got, dstBefore)
	}
	if k := len(kafkatest.Consume(t, c.brokers, kafkatest.Topics(t, c.brokers, c.prefix+"."), false)); k != kBefore {
		t.Errorf("Kafka holds %d records, %d before", k, kBefore)
	}
}
