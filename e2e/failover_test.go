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

// foPos matches the position of a JSON line: the only part of a change
// that differs between A's binlog and R's copy of it.
var foPos = regexp.MustCompile(`"pos":\{"file":"[^"]*","offset":\d+,"row":\d+\},`)

// foLines splits JSON lines and drops their positions.
func foLines(b []byte) []string {
	var out []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" {
			out = append(out, foPos.ReplaceAllString(l, ""))
		}
	}
	return out
}

// foSame fails unless got and want are the same lines, positions aside.
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
//     transactions, then R's own) once, in order, positions aside;
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

func foFailover(t *testing.T, rotated bool) {
	g := rpSeed(t)
	a, r := foPair(t, rotated)
	dst := testserver.Start(t, testserver.Options{})
	brokers := kafkatest.Cluster(t)
	prefix := kafkatest.Prefix(t)
	dir := t.TempDir()
	cp, out := filepath.Join(dir, "cp.json"), filepath.Join(dir, "out.jsonl")

	a.Exec(t, rpSchema...)
	rpWorkload(t, a, g, 40, true)
	args := map[string]func(*testserver.Server) []string{
		"json": func(s *testserver.Server) []string {
			return []string{"--source", s.DSN(), "--from", "earliest", "--ddl", "--checkpoint", cp, "--output", out}
		},
		"to": func(s *testserver.Server) []string {
			return []string{"--source", s.DSN(), "--from", "earliest", "--to", dst.DSN() + "/", "--group-time", "20ms"}
		},
		"kafka": func(s *testserver.Server) []string {
			return []string{"--source", s.DSN(), "--from", "earliest", "--ddl", "--to", "kafka://" + strings.Join(brokers, ","),
				"--kafka-topic-prefix", prefix, "--kafka-exactly-once", "--kafka-replica-name", "fo"}
		},
	}
	names := []string{"json", "to", "kafka"}
	runs := map[string]*stRun{}
	for _, n := range names {
		runs[n] = stStart(t, dir, n+"-a", nil, args[n](a)...)
	}
	for _, n := range names {
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
	to.signal(syscall.SIGTERM)
	if code := to.wait(time.Minute); code != 0 {
		t.Fatalf("--to stream: SIGTERM while retrying: exit %d; stderr:\n%s", code, to.errText())
	}

	rpWorkload(t, r, g, 100, false)
	rLast := stLastGTID(t, r)
	if !strings.HasPrefix(rLast, "0-2-") {
		t.Fatalf("R's last GTID %s, want one of its own (server id 2)", rLast)
	}
	for _, n := range names {
		runs[n] = stStart(t, dir, n+"-r", nil, args[n](r)...)
	}
	rFile, rEnd := stTxEnd(t, r, rLast)
	done := map[string]func() bool{
		"json": func() bool { return stHasGTID(out, rLast) },
		"to": func() bool {
			c := dst.QueryStrings(t, "SELECT CONCAT(file, ':', pos) FROM binlogcdc.checkpoint WHERE replica = 'default'")
			return len(c) == 1 && *c[0][0] == fmt.Sprintf("%s:%d", rFile, rEnd)
		},
		"kafka": func() bool {
			c := kfLastCheckpoint(t, brokers, prefix, "fo")
			return c != nil && c.LastGTID == rLast
		},
	}
	for _, n := range names {
		run := runs[n]
		stPoll(t, 3*time.Minute, run, n+" on R to reach "+rLast, done[n])
		run.signal(syscall.SIGTERM)
		if code := run.wait(time.Minute); code != 0 {
			t.Fatalf("%s on R: SIGTERM: exit %d; stderr:\n%s", n, code, run.errText())
		}
		if rotated && !strings.Contains(run.errText(), "resuming after GTID position "+aLast) && !strings.Contains(run.errText(), "resuming after GTID position 0-1-") {
			t.Errorf("%s on R did not resume by GTID:\n%s", n, run.errText())
		}
	}
	t.Logf("A's last transaction %s, R's %s", aLast, rLast)

	// Every change R's binlog holds (A's transactions as R logged them,
	// then R's own): the union, each once.
	want := stRead(t, r, "--ddl")
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	foSame(t, "stream -o across the failover", got, want)
	cpAfter := stLoadCP(t, cp)
	if cpAfter.File != rFile || cpAfter.Offset != rEnd || cpAfter.LastGTID != rLast || cpAfter.Server != r.Addr() {
		t.Errorf("checkpoint %+v, want %s:%d after %s on %s", cpAfter, rFile, rEnd, rLast, r.Addr())
	}

	rpCompare(t, r, dst, "stream --to across the failover")
	if v, _ := rpRun(t, 0, "verify", "--source", r.DSN(), "--to", dst.DSN()+"/"); !strings.Contains(string(v), "tables are equal") {
		t.Errorf("verify:\n%s", v)
	}

	foKafkaOnce(t, prefix, want, kafkatest.Consume(t, brokers, kafkatest.Topics(t, brokers, prefix+"."), true))
}

// foKafkaOnce checks that the data and schema records of prefix (read
// committed) are the lines of want, each once, positions aside, on one topic per
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
		if rec.Topic == prefix+".checkpoints" || rec.Value == nil {
			continue
		}
		l := foPos.ReplaceAllString(string(rec.Value), "") + "\n"
		idx := at[l]
		if len(idx) == 0 {
			t.Fatalf("a record on %s is not a change of R's binlog, or is there twice: %s", rec.Topic, clip(l))
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
