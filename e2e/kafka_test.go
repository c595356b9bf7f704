package e2e

// Tests of --to kafka://… (issue 7): the CLI runs as a subprocess against a
// Kafka cluster that lives in the test process (franz-go's kfake, on
// 127.0.0.1), or a real one when BINLOGCDC_KAFKA_BROKERS is set (see
// sink/kafka/kafkatest). The oracle is 'binlogcdc read' of the same
// binlogs: the records read back must be its lines, with the documented
// topics, keys and headers.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/sink/kafka"
	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
)

const kfShop = "../testdata/shop.binlog"

// kfLine is one line of 'read', parsed for the checks.
type kfLine struct {
	text          string
	Op, DB, Table string
	PK            []string
	Before, After map[string]json.RawMessage
	Pos           struct {
		File   string
		Offset uint64
		Row    int
	}
	GTID string
}

func (l *kfLine) pos() string { return fmt.Sprintf("%s:%d:%d", l.Pos.File, l.Pos.Offset, l.Pos.Row) }

// key is the README's record key: the primary key's values as a JSON
// array from the row after the change (before, for deletes); the database
// as a JSON string for DDL; nil without a primary key.
func (l *kfLine) key() []byte {
	switch {
	case l.Op == "ddl":
		b, _ := json.Marshal(l.DB)
		return b
	case len(l.PK) == 0:
		return nil
	}
	row := l.After
	if l.Op == "delete" {
		row = l.Before
	}
	return pkOf(l.PK, row)
}

// movedFrom is the old key of an update that changed the primary key
// (nil for any other change).
func (l *kfLine) movedFrom() []byte {
	if l.Op != "update" || len(l.PK) == 0 {
		return nil
	}
	if old := pkOf(l.PK, l.Before); !bytes.Equal(old, l.key()) {
		return old
	}
	return nil
}

func pkOf(pk []string, row map[string]json.RawMessage) []byte {
	var parts []string
	for _, c := range pk {
		parts = append(parts, string(row[c]))
	}
	return []byte("[" + strings.Join(parts, ",") + "]")
}

func kfRecPos(r *kgo.Record) string {
	f, _ := kafkatest.Header(r, kafka.HeaderFile)
	o, _ := kafkatest.Header(r, kafka.HeaderOffset)
	row, _ := kafkatest.Header(r, kafka.HeaderRow)
	return f + ":" + o + ":" + row
}

type kfCheckOpts struct {
	tombstones bool
	dups       bool // at-least-once: a change may be published more than once
}

// kfCheck compares the records of the data and schema topics of prefix
// with read's output: each line published (exactly once unless dups), as
// the record value, on its table's topic (DDL: schema-changes), with its
// key and position headers; within a partition in read's order (with
// dups: first publications in order); each delete followed by its
// tombstone when tombstones. It returns the number of records that
// repeated a change.
func kfCheck(t *testing.T, prefix string, readOut []byte, recs []*kgo.Record, o kfCheckOpts) int {
	t.Helper()
	texts := strings.Split(strings.TrimSuffix(string(readOut), "\n"), "\n")
	lines := make([]kfLine, len(texts))
	idx := map[string]int{}
	for i, text := range texts {
		if err := json.Unmarshal([]byte(text), &lines[i]); err != nil {
			t.Fatalf("read line %d: %v", i+1, err)
		}
		lines[i].text = text
		idx[lines[i].pos()] = i
	}
	seen := make([]int, len(lines))
	moveTombs := make([]int, len(lines)) // tombstones of keys an update moved away from
	maxInPart := map[string]int{}
	wantTomb := map[string]int{} // partition → the delete whose tombstone comes next
	repeats := 0
	for _, r := range recs {
		if r.Topic == prefix+".checkpoints" || r.Topic == prefix+".schema-history" {
			continue
		}
		tp := fmt.Sprintf("%s/%d", r.Topic, r.Partition)
		i, ok := idx[kfRecPos(r)]
		if !ok {
			t.Fatalf("a record at %s on %s is not a change that read prints", kfRecPos(r), r.Topic)
		}
		l := &lines[i]
		if r.Value == nil && l.movedFrom() != nil {
			if !o.tombstones || !bytes.Equal(r.Key, l.movedFrom()) {
				t.Fatalf("tombstone at %s has key %s, want the old key %s", l.pos(), r.Key, l.movedFrom())
			}
			moveTombs[i]++
			continue
		}
		if r.Value == nil {
			if !o.tombstones || wantTomb[tp] != i || !bytes.Equal(r.Key, l.key()) {
				t.Fatalf("tombstone at %s (key %s) does not follow the delete of that key", l.pos(), r.Key)
			}
			wantTomb[tp] = -1
			continue
		}
		if d, ok := wantTomb[tp]; ok && d >= 0 && !(o.dups && seen[i] > 0) {
			// (A run killed between a delete and its tombstone publishes
			// both again after the restart.)
			t.Fatalf("the delete at %s is not followed by its tombstone on %s", lines[d].pos(), tp)
		}
		wantTomb[tp] = -1
		if string(r.Value) != l.text {
			t.Fatalf("record at %s:\n got %s\nwant %s", l.pos(), clip(string(r.Value)), clip(l.text))
		}
		topic := prefix + "." + l.DB + "." + l.Table
		if l.Op == "ddl" {
			topic = prefix + ".schema-changes"
		}
		if r.Topic != topic {
			t.Fatalf("%s: topic %s, want %s", l.pos(), r.Topic, topic)
		}
		if !bytes.Equal(r.Key, l.key()) || (r.Key == nil) != (l.key() == nil) {
			t.Fatalf("%s: key %q, want %q", l.pos(), r.Key, l.key())
		}
		if g, ok := kafkatest.Header(r, kafka.HeaderGTID); g != l.GTID || ok != (l.GTID != "") {
			t.Fatalf("%s: gtid header %q, want %q", l.pos(), g, l.GTID)
		}
		seen[i]++
		if seen[i] > 1 {
			repeats++
			if !o.dups {
				t.Fatalf("%s published %d times", l.pos(), seen[i])
			}
		} else if m, ok := maxInPart[tp]; ok && i < m {
			t.Fatalf("%s: on %s after read's line %d: out of order", l.pos(), tp, m+1)
		}
		if m, ok := maxInPart[tp]; !ok || i > m {
			maxInPart[tp] = i
		}
		if o.tombstones && l.Op == "delete" && l.key() != nil {
			wantTomb[tp] = i
		}
	}
	for tp, d := range wantTomb {
		if d >= 0 {
			t.Fatalf("the delete at %s has no tombstone on %s", lines[d].pos(), tp)
		}
	}
	for i, n := range seen {
		if n == 0 {
			t.Fatalf("read's line %d was not published: %s", i+1, clip(texts[i]))
		}
		if o.tombstones && lines[i].movedFrom() != nil && (moveTombs[i] == 0 || moveTombs[i] > 1 && !o.dups) {
			t.Fatalf("the update at %s moved the row from key %s: %d tombstones for it, want one", lines[i].pos(), lines[i].movedFrom(), moveTombs[i])
		}
	}
	return repeats
}

// kfAll reads every topic of prefix.
func kfAll(t *testing.T, brokers []string, prefix string, committed bool) []*kgo.Record {
	t.Helper()
	return kafkatest.Consume(t, brokers, kafkatest.Topics(t, brokers, prefix+"."), committed)
}

// TestKafkaRead: 'read --to kafka://' of the sample binlog, at-least-once
// with tombstones and DDL, then exactly-once, where a second run resumes
// at the end and publishes nothing.
func TestKafkaRead(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Cluster(t)
	to := "kafka://" + strings.Join(brokers, ",")
	want, errs, code := runCLI(t, nil, "read", "--ddl", kfShop)
	if code != 0 {
		t.Fatalf("read: exit %d: %s", code, errs)
	}

	prefix := kafkatest.Prefix(t)
	if out, errs, code := runCLI(t, nil, "read", "--ddl", "--to", to, "--kafka-topic-prefix", prefix, "--kafka-tombstones", kfShop); code != 0 || len(out) != 0 {
		t.Fatalf("read --to: exit %d, stdout %q: %s", code, out, errs)
	}
	topics := kafkatest.Topics(t, brokers, prefix+".")
	if got, want := strings.Join(topics, " "), strings.ReplaceAll("P.schema-changes P.shop.customers P.shop.orders P.shop.scratch", "P", prefix); got != want {
		t.Fatalf("topics %s, want %s", got, want)
	}
	kfCheck(t, prefix, want, kafkatest.Consume(t, brokers, topics, false), kfCheckOpts{tombstones: true})

	prefix = kafkatest.Prefix(t)
	args := []string{"read", "--ddl", "--to", to, "--kafka-topic-prefix", prefix, "--kafka-exactly-once", "--kafka-replica-name", prefix, kfShop}
	for run := range 2 {
		_, errs, code := runCLI(t, nil, args...)
		if code != 0 {
			t.Fatalf("run %d: exit %d: %s", run, code, errs)
		}
		if run == 1 && !strings.Contains(errs, "resuming from the resume point in topic "+prefix+".checkpoints at shop.binlog:") {
			t.Errorf("the second run does not say where it resumes:\n%s", errs)
		}
	}
	recs := kfAll(t, brokers, prefix, true)
	kfCheck(t, prefix, want, recs, kfCheckOpts{})
}

// TestKafkaBrokersDown: 'read --to' started while no broker listens waits,
// says so, and publishes everything once the cluster is up.
func TestKafkaBrokersDown(t *testing.T) {
	t.Parallel()
	// Always its own fake cluster, started late on a fixed port, even when
	// BINLOGCDC_KAFKA_BROKERS names a real one: a real cluster cannot be
	// made to come up on cue.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	prefix := kafkatest.Prefix(t)
	want, _, _ := runCLI(t, nil, "read", kfShop)
	done := make(chan struct{})
	var errs string
	var code int
	go func() {
		defer close(done)
		_, errs, code = runCLI(t, nil, "read", "--to", fmt.Sprintf("kafka://127.0.0.1:%d", port), "--kafka-topic-prefix", prefix, kfShop)
	}()
	time.Sleep(2 * time.Second)
	select {
	case <-done:
		t.Fatalf("read --to ended (exit %d) with no broker up: %s", code, errs)
	default:
	}
	c := kafkatest.Fake(t, kfake.Ports(port), kfake.NumBrokers(1))
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("read --to did not finish after the broker came up")
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "cannot connect to broker 127.0.0.1:"+strconv.Itoa(port)) {
		t.Errorf("the outage is not reported on stderr:\n%s", errs)
	}
	kfCheck(t, prefix, want, kfAll(t, c.ListenAddrs(), prefix, false), kfCheckOpts{})
}

// TestKafkaMessageTooLarge: a change larger than the broker takes fails
// the run, naming the table and the position; nothing is skipped.
func TestKafkaMessageTooLarge(t *testing.T) {
	t.Parallel()
	c := kafkatest.Fake(t, kfake.BrokerConfigs(map[string]string{"message.max.bytes": "200"}))
	prefix := kafkatest.Prefix(t)
	_, errs, code := runCLI(t, nil, "read", "--tables", "shop.orders", "--to", "kafka://"+strings.Join(c.ListenAddrs(), ","),
		"--kafka-topic-prefix", prefix, kfShop)
	re := regexp.MustCompile(`binlogcdc: kafka: table shop\.orders at shop\.binlog:2178 row [01]: topic ` + regexp.QuoteMeta(prefix) +
		`\.shop\.orders: MESSAGE_TOO_LARGE: .* \(hint: the record is \d+ bytes; raise the topic's max.message.bytes`)
	if code != 1 || !re.MatchString(errs) {
		t.Fatalf("exit %d, stderr:\n%s\nwant exit 1 and %s", code, errs, re)
	}
}

// kfLastCheckpoint is the last committed resume point of replica in the
// checkpoints topic of prefix (nil: none yet).
func kfLastCheckpoint(t *testing.T, brokers []string, prefix, replica string) *checkpoint.Checkpoint {
	t.Helper()
	topic := prefix + ".checkpoints"
	if len(kafkatest.Topics(t, brokers, topic)) == 0 {
		return nil
	}
	var cp *checkpoint.Checkpoint
	for _, r := range kafkatest.Consume(t, brokers, []string{topic}, true) {
		if string(r.Key) != replica {
			continue
		}
		cp = new(checkpoint.Checkpoint)
		if err := json.Unmarshal(r.Value, cp); err != nil {
			t.Fatalf("checkpoint record %q: %v", r.Value, err)
		}
	}
	return cp
}

// TestKafkaStreamKill9 kills 'stream --to kafka://' with SIGKILL at random
// moments while a workload commits small and large transactions (one of
// them 5000 rows), restarting it each time, and then compares what Kafka
// holds with 'read' of the same binlogs:
//
//   - at-least-once (--checkpoint FILE, saved after Flush): every change
//     published, in order per partition, repeats allowed;
//   - exactly-once (--kafka-exactly-once, the resume point in Kafka):
//     every change published exactly once for a read_committed consumer,
//     in order per partition; what killed runs left open is aborted.
func TestKafkaStreamKill9(t *testing.T) {
	t.Parallel()
	for _, exactly := range []bool{false, true} {
		name := "at-least-once"
		if exactly {
			name = "exactly-once"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			kfKill9(t, exactly)
		})
	}
}

func kfKill9(t *testing.T, exactly bool) {
	srv := testserver.Start(t, testserver.Options{})
	var fake *kfake.Cluster // nil with a real cluster
	brokers := kafkatest.RealBrokers()
	if brokers == nil {
		fake = kafkatest.Fake(t)
		brokers = fake.ListenAddrs()
	}
	prefix := kafkatest.Prefix(t)
	dir := t.TempDir()
	srv.Exec(t,
		"CREATE DATABASE kk",
		"CREATE TABLE kk.a (id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT, v VARCHAR(64))",
		"CREATE TABLE kk.b (x INT, y VARCHAR(20))", // no primary key
	)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 1))

	const txns = 400
	var committed atomic.Int64
	wrng := rand.New(rand.NewPCG(uint64(seed), 2))
	pause := func() time.Duration { return time.Duration(5+wrng.IntN(10)) * time.Millisecond }
	workDone := stWorkload(srv.Conn(t), "kk", txns, &committed, pause, func(i int, maxID *int) []string {
		n := 1 + wrng.IntN(50)
		var qs []string
		switch c := wrng.IntN(100); {
		case i == txns/2:
			n = 5000
			qs = []string{fmt.Sprintf("INSERT INTO kk.a (k, v) SELECT seq, CONCAT('big-', seq) FROM seq_1_to_%d", n)}
			*maxID += n
		case i == txns/3:
			qs = []string{"FLUSH BINARY LOGS"}
		case c < 60 || *maxID == 0:
			qs = []string{fmt.Sprintf("INSERT INTO kk.a (k, v) SELECT seq, CONCAT('t%d-', seq) FROM seq_1_to_%d", i, n)}
			*maxID += n
		case c < 75:
			lo := 1 + wrng.IntN(*maxID)
			qs = []string{fmt.Sprintf("UPDATE kk.a SET k = k + 1, v = CONCAT('u%d-', id) WHERE id BETWEEN %d AND %d", i, lo, lo+n)}
		case c < 85:
			lo := 1 + wrng.IntN(*maxID)
			qs = []string{fmt.Sprintf("DELETE FROM kk.a WHERE id BETWEEN %d AND %d", lo, lo+n/4)}
		case c < 90:
			// Moves rows to other keys (negative: never hit again, never
			// taken by AUTO_INCREMENT): a tombstone for each old key.
			lo := 1 + wrng.IntN(*maxID)
			qs = []string{fmt.Sprintf("UPDATE kk.a SET id = -id WHERE id BETWEEN %d AND %d", lo, lo+2)}
		default:
			lo := 1 + wrng.IntN(*maxID)
			qs = []string{"BEGIN",
				fmt.Sprintf("INSERT INTO kk.b SELECT seq, 'tx%d' FROM seq_1_to_%d", i, 1+n/5),
				fmt.Sprintf("UPDATE kk.a SET k = -k WHERE id BETWEEN %d AND %d", lo, lo+n/5),
				fmt.Sprintf("DELETE FROM kk.b WHERE x = %d", 1+wrng.IntN(5)),
				"COMMIT"}
		}
		return qs
	})

	cp := filepath.Join(dir, "cp.json")
	args := []string{"--source", srv.DSN(), "--from", "earliest", "--ddl", "--to", "kafka://" + strings.Join(brokers, ","),
		"--kafka-topic-prefix", prefix, "--kafka-tombstones"}
	if exactly {
		args = append(args, "--kafka-exactly-once", "--kafka-replica-name", prefix)
	} else {
		args = append(args, "--checkpoint", cp)
	}
	runs := 0
	start := func() *stRun {
		runs++
		return stStart(t, dir, fmt.Sprintf("run%d", runs), nil, args...)
	}
	kills := 0
	var workErr error
	working := true
	for working || kills < 8 {
		if working {
			select {
			case workErr = <-workDone:
				working = false
			default:
			}
		}
		r := start()
		time.Sleep(time.Duration(100+rng.IntN(500)) * time.Millisecond)
		if r.exited() {
			t.Fatalf("run %d exited by itself (%v); stderr:\n%s", runs, r.state, r.errText())
		}
		r.kill9()
		kills++
	}
	if workErr != nil {
		t.Fatal(workErr)
	}
	if exactly && fake != nil {
		// One kill at the worst moment: the Kafka transaction is written
		// and its commit (EndTxn) sent, but not answered. Armed once the
		// run has caught up, so that the commit held is the one of the
		// 100 rows below, not one of the backlog the kills left (which
		// made "records aborted" fall short under load).
		var armed atomic.Bool
		stuck := make(chan struct{}, 1)
		fake.ControlKey(int16(kmsg.EndTxn), func(kmsg.Request) (kmsg.Response, error, bool) {
			fake.KeepControl()
			if !armed.Load() {
				return nil, nil, false
			}
			select {
			case stuck <- struct{}{}:
			default:
			}
			return nil, nil, true // no answer: the client waits
		})
		r := start()
		caughtUp := stLastGTID(t, srv)
		stPoll(t, 2*time.Minute, r, "the resume point after "+caughtUp, func() bool {
			c := kfLastCheckpoint(t, brokers, prefix, prefix)
			return c != nil && c.LastGTID == caughtUp
		})
		armed.Store(true)
		srv.Exec(t, "INSERT INTO kk.a (k, v) SELECT seq, 'in doubt' FROM kk.seq_1_to_100")
		select {
		case <-stuck:
		case <-time.After(time.Minute):
			t.Fatalf("no commit reached the cluster; stderr:\n%s", r.errText())
		}
		r.kill9()
		kills++
		armed.Store(false)
	}
	last := stLastGTID(t, srv)
	r := start()
	stPoll(t, 2*time.Minute, r, "the resume point after "+last, func() bool {
		if !r.ready() {
			return false
		}
		if exactly {
			c := kfLastCheckpoint(t, brokers, prefix, prefix)
			return c != nil && c.LastGTID == last
		}
		// (gtid_set: a run that resumes saves the position again at the
		// server's ROTATE, without last_gtid.)
		c, err := checkpoint.Load(cp)
		return err == nil && c != nil && c.GTIDSet == last
	})
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d, want 0; stderr:\n%s", code, r.errText())
	}
	var c *checkpoint.Checkpoint
	if exactly {
		c = kfLastCheckpoint(t, brokers, prefix, prefix)
		if _, err := os.Stat(cp); err == nil {
			t.Errorf("exactly-once wrote a checkpoint file")
		}
	} else if c, _ = checkpoint.Load(cp); c == nil {
		t.Fatal("no checkpoint file")
	}
	if exactly && c.LastGTID != last || !exactly && c.GTIDSet != last || c.Server != srv.Addr() {
		t.Errorf("resume point %+v, want after %s on %s", c, last, srv.Addr())
	}

	ref := stRead(t, srv, "--ddl")
	recs := kfAll(t, brokers, prefix, exactly)
	repeats := kfCheck(t, prefix, ref, recs, kfCheckOpts{tombstones: true, dups: !exactly})
	aborted := 0
	if exactly {
		// What a read_uncommitted consumer sees beyond read_committed: the
		// records of transactions the kills left open, aborted.
		aborted = len(kfAll(t, brokers, prefix, false)) - len(recs)
		if fake != nil && aborted < 100 {
			t.Errorf("%d records aborted; the kill during a commit should have left 100", aborted)
		}
	}
	t.Logf("%d transactions, %d lines; %d kills, %d runs; %d records (%d repeated); %d records aborted",
		committed.Load(), bytes.Count(ref, []byte("\n")), kills, runs, len(recs), repeats, aborted)
}
