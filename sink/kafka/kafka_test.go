package kafka_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
	"github.com/binlogcdc/binlogcdc/sink/kafka"
	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

const shop = "../../testdata/shop.binlog"

// lastCommit records the resume point of the last committed transaction.
type lastCommit struct {
	sink.Sink
	next change.Position
}

func (l *lastCommit) Commit(ctx context.Context, tx change.TxEnd) error {
	err := l.Sink.Commit(ctx, tx)
	if err == nil {
		l.next = tx.Next
	}
	return err
}

// runShop runs shop.binlog (with DDL records) from start into sk, closes
// sk, and returns where its last committed transaction ended.
func runShop(t *testing.T, s sink.Sink, start change.Position) (change.Position, error) {
	t.Helper()
	src, err := binlog.OpenFiles([]string{shop}, start)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sk := &lastCommit{Sink: s}
	err = pipeline.New(src, sk, pipeline.Options{DDL: true}).Run(ctx)
	if cerr := sk.Close(ctx); err == nil {
		err = cerr
	}
	return sk.next, err
}

// readLines is what 'binlogcdc read --ddl' prints for shop.binlog.
func readLines(t *testing.T) []string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := runShop(t, jsonl.New(&buf, jsonl.Options{}), change.Position{}); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

// line is one parsed JSON line.
type line struct {
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

func parse(t testing.TB, text string) line {
	t.Helper()
	var l line
	if err := json.Unmarshal([]byte(text), &l); err != nil {
		t.Fatalf("%v: %s", err, text)
	}
	l.text = text
	return l
}

func (l line) pos() string { return fmt.Sprintf("%s:%d:%d", l.Pos.File, l.Pos.Offset, l.Pos.Row) }

// key is the record key the README promises for l: the primary key's
// values, as JSON, from the row after the change (before, for deletes).
func (l line) key() []byte {
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
	var parts []string
	for _, c := range l.PK {
		parts = append(parts, string(row[c]))
	}
	return []byte("[" + strings.Join(parts, ",") + "]")
}

func recPos(r *kgo.Record) string {
	f, _ := kafkatest.Header(r, kafka.HeaderFile)
	o, _ := kafkatest.Header(r, kafka.HeaderOffset)
	row, _ := kafkatest.Header(r, kafka.HeaderRow)
	return f + ":" + o + ":" + row
}

// checkPublished compares the records of the data and schema topics with
// the JSON lines: every line published once (dups allows repeats), with
// its topic, key, value, headers, a tombstone after each delete when
// tombstones is set, and in the lines' order within each partition.
func checkPublished(t *testing.T, prefix string, lines []string, recs []*kgo.Record, tombstones, dups bool) {
	t.Helper()
	idx := map[string]int{}
	parsed := make([]line, len(lines))
	for i, text := range lines {
		parsed[i] = parse(t, text)
		idx[parsed[i].pos()] = i
	}
	seen := make([]int, len(lines))
	lastInPart := map[string]int{} // topic/partition → line index of the last record
	prevDelete := map[string]int{} // topic/partition → index of a delete waiting for its tombstone
	for _, r := range recs {
		if r.Topic == prefix+".checkpoints" {
			continue
		}
		tp := fmt.Sprintf("%s/%d", r.Topic, r.Partition)
		i, ok := idx[recPos(r)]
		if !ok {
			t.Fatalf("record at %s (topic %s) is not a change of the binlog", recPos(r), r.Topic)
		}
		l := parsed[i]
		if r.Value == nil { // a tombstone
			if !tombstones {
				t.Fatalf("tombstone at %s without Tombstones", recPos(r))
			}
			if d, ok := prevDelete[tp]; !ok || d != i || !bytes.Equal(r.Key, l.key()) {
				t.Fatalf("tombstone at %s key %s does not follow the delete of that key", recPos(r), r.Key)
			}
			delete(prevDelete, tp)
			continue
		}
		if d, ok := prevDelete[tp]; ok && parsed[d].Op == "delete" {
			t.Fatalf("the delete at %s is not followed by its tombstone", parsed[d].pos())
		}
		delete(prevDelete, tp)
		seen[i]++
		if string(r.Value) != l.text {
			t.Errorf("value at %s:\n got %s\nwant %s", l.pos(), r.Value, l.text)
		}
		wantTopic := prefix + "." + l.DB + "." + l.Table
		if l.Op == "ddl" {
			wantTopic = prefix + ".schema-changes"
		}
		if r.Topic != wantTopic {
			t.Errorf("%s: topic %s, want %s", l.pos(), r.Topic, wantTopic)
		}
		if !bytes.Equal(r.Key, l.key()) || (r.Key == nil) != (l.key() == nil) {
			t.Errorf("%s: key %q, want %q", l.pos(), r.Key, l.key())
		}
		if g, ok := kafkatest.Header(r, kafka.HeaderGTID); g != l.GTID || ok != (l.GTID != "") {
			t.Errorf("%s: gtid header %q, want %q", l.pos(), g, l.GTID)
		}
		if len(r.Headers) != 3+btoi(l.GTID != "") {
			t.Errorf("%s: headers %v", l.pos(), r.Headers)
		}
		if last, ok := lastInPart[tp]; ok && i <= last && !dups {
			t.Errorf("%s: partition %s has line %d after line %d: out of order", l.pos(), tp, i+1, last+1)
		}
		lastInPart[tp] = i
		if tombstones && l.Op == "delete" && l.key() != nil {
			prevDelete[tp] = i
		}
	}
	for tp, d := range prevDelete {
		t.Errorf("the delete at %s has no tombstone in %s", parsed[d].pos(), tp)
	}
	for i, n := range seen {
		if n == 0 || (n > 1 && !dups) {
			t.Errorf("line %d published %d times: %s", i+1, n, lines[i])
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func newSink(t *testing.T, o kafka.Options) *kafka.Sink {
	t.Helper()
	s, err := kafka.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestKafkaShop publishes the sample binlog at-least-once and reads it back:
// one record per JSON line, on the table's topic (DDL on schema-changes),
// keyed by the primary key, with position headers, tombstones after
// deletes, in order.
func TestKafkaShop(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Cluster(t)
	prefix := kafkatest.Prefix(t)
	lines := readLines(t)
	s := newSink(t, kafka.Options{Brokers: brokers, TopicPrefix: prefix, Tombstones: true, FlushEachCommit: true})
	if _, err := runShop(t, s, change.Position{}); err != nil {
		t.Fatal(err)
	}
	topics := kafkatest.Topics(t, brokers, prefix+".")
	want := []string{prefix + ".schema-changes", prefix + ".shop.customers", prefix + ".shop.orders", prefix + ".shop.scratch"}
	if fmt.Sprint(topics) != fmt.Sprint(want) {
		t.Fatalf("topics %v, want %v", topics, want)
	}
	recs := kafkatest.Consume(t, brokers, topics, false)
	if n := len(lines) + 1; len(recs) != n { // one tombstone
		t.Errorf("%d records, want %d (lines and one tombstone)", len(recs), n)
	}
	checkPublished(t, prefix, lines, recs, true, false)
}

// TestKafkaShopExactlyOnce publishes the sample in Kafka transactions, reads it
// back read_committed, and checks the resume point: a second run resumes
// at the end of the binlog and publishes nothing.
func TestKafkaShopExactlyOnce(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Cluster(t)
	prefix := kafkatest.Prefix(t)
	lines := readLines(t)
	o := kafka.Options{Brokers: brokers, TopicPrefix: prefix, ExactlyOnce: true, Replica: prefix, Server: "test"}
	ctx := context.Background()
	s := newSink(t, o)
	cp, err := s.Resume(ctx)
	if err != nil || cp != nil {
		t.Fatalf("first Resume: %+v, %v; want no checkpoint", cp, err)
	}
	end, err := runShop(t, s, change.Position{})
	if err != nil {
		t.Fatal(err)
	}
	topics := kafkatest.Topics(t, brokers, prefix+".")
	recs := kafkatest.Consume(t, brokers, topics, true)
	checkPublished(t, prefix, lines, recs, false, false)

	s2 := newSink(t, o)
	cp, err = s2.Resume(ctx)
	if err != nil || cp == nil {
		t.Fatalf("second Resume: %+v, %v", cp, err)
	}
	if cp.Position() != end || cp.LastGTID != "0-1-11" || cp.Server != "test" {
		t.Fatalf("resume point %+v, want %s:%d after 0-1-11", cp, end.File, end.Offset)
	}
	if _, err := runShop(t, s2, cp.Position()); err != nil {
		t.Fatal(err)
	}
	again := kafkatest.Consume(t, brokers, topics, true)
	n := func(rs []*kgo.Record) (k int) {
		for _, r := range rs {
			if r.Topic != prefix+".checkpoints" {
				k++
			}
		}
		return k
	}
	if n(again) != n(recs) {
		t.Errorf("a run from the resume point published %d records more", n(again)-n(recs))
	}
}

// fakeTable is a table with a composite primary key (b, a) and a column v.
var fakeTable = &tablemap.Table{DB: "d", Name: "t", Columns: []tablemap.Column{{Name: "a"}, {Name: "b"}, {Name: "v"}},
	PrimaryKey: []int{1, 0}, PrimaryKeyPrefix: []int{0, 0}, PKNames: []string{"b", "a"}}

var noPKTable = &tablemap.Table{DB: "d", Name: "nopk", Columns: []tablemap.Column{{Name: "x"}}}

func row(a int64, b string, v string) change.Row {
	return change.Row{change.IntValue(a), change.TextValue(change.String, []byte(b)), change.TextValue(change.String, []byte(v))}
}

var txNo atomic.Uint64

// write writes cs as one transaction and commits it. The transaction's
// number is txNo's value, n: its changes are at b.000001:100n, rows 0….
func write(t *testing.T, s sink.Sink, cs ...change.Change) error {
	_, err := writeN(t, s, cs...)
	return err
}

func writeN(t *testing.T, s sink.Sink, cs ...change.Change) (uint64, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n := txNo.Add(1)
	for i := range cs {
		c := &cs[i]
		c.Pos, c.RowIndex, c.Time = change.Position{File: "b.000001", Offset: 100 * n}, i, time.Unix(1700000000, 0)
		if err := s.Write(ctx, c); err != nil {
			return n, err
		}
	}
	return n, s.Commit(ctx, change.TxEnd{Next: change.Position{File: "b.000001", Offset: 100*n + 50}})
}

// TestKafkaKeys: composite keys in key order; an update that moves a row to
// another key is followed by a tombstone for the old key; MINIMAL after
// images take unchanged key columns from the before image; no primary
// key, no key.
func TestKafkaKeys(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Cluster(t)
	prefix := kafkatest.Prefix(t)
	s := newSink(t, kafka.Options{Brokers: brokers, TopicPrefix: prefix, Tombstones: true, FlushEachCommit: true,
		Topic: "{prefix}-{table}-in-{db}"})
	minimalAfter := change.Row{{}, {}, change.TextValue(change.String, []byte("w"))}
	n, err := writeN(t, s,
		change.Change{Op: change.Insert, Table: fakeTable, After: row(1, "x", "v")},
		change.Change{Op: change.Update, Table: fakeTable, Before: row(1, "x", "v"), After: row(2, "x", "v")},
		change.Change{Op: change.Update, Table: fakeTable, Before: row(2, "x", "v"), After: minimalAfter},
		change.Change{Op: change.Delete, Table: fakeTable, Before: row(2, "x", "w")},
		change.Change{Op: change.Insert, Table: noPKTable, After: change.Row{change.NullValue()}},
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs := kafkatest.Consume(t, brokers, []string{prefix + "-t-in-d", prefix + "-nopk-in-d"}, false)
	var got []string
	for _, r := range recs {
		kind := "value"
		if r.Value == nil {
			kind = "tombstone"
		}
		got = append(got, fmt.Sprintf("%s %s %s@%s", r.Topic[len(prefix):], r.Key, kind, recPos(r)))
	}
	// The records of one key are in order; the two keys may share a
	// partition or not.
	byKey := map[string][]string{}
	for _, g := range got {
		k := strings.Fields(g)[1]
		byKey[k] = append(byKey[k], g)
	}
	p := func(row int) string { return fmt.Sprintf("b.000001:%d:%d", 100*n, row) }
	want := map[string][]string{
		`["x",1]`: {`-t-in-d ["x",1] value@` + p(0), `-t-in-d ["x",1] tombstone@` + p(1)},
		`["x",2]`: {`-t-in-d ["x",2] value@` + p(1), `-t-in-d ["x",2] value@` + p(2), `-t-in-d ["x",2] value@` + p(3), `-t-in-d ["x",2] tombstone@` + p(3)},
		`[]`:      nil,
	}
	if fmt.Sprint(byKey[`["x",1]`]) != fmt.Sprint(want[`["x",1]`]) || fmt.Sprint(byKey[`["x",2]`]) != fmt.Sprint(want[`["x",2]`]) {
		t.Errorf("records:\n%s\nwant per key:\n%s\n%s", strings.Join(got, "\n"), strings.Join(want[`["x",1]`], "\n"), strings.Join(want[`["x",2]`], "\n"))
	}
	if len(recs) != 7 || recs[0].Topic != prefix+"-nopk-in-d" || recs[0].Key != nil {
		t.Errorf("want 7 records, one on -nopk-in-d with a null key:\n%s", strings.Join(got, "\n"))
	}
}

// TestKafkaExactlyOnceFencing: a publisher killed inside a transaction leaves
// records that read_committed consumers never see; its successor resumes
// at the last committed point, and the old one can no longer commit.
func TestKafkaExactlyOnceFencing(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Cluster(t)
	prefix := kafkatest.Prefix(t)
	o := kafka.Options{Brokers: brokers, TopicPrefix: prefix, ExactlyOnce: true, Replica: prefix}
	ctx := context.Background()
	old := newSink(t, o)
	committedAt, err := writeN(t, old, change.Change{Op: change.Insert, Table: fakeTable, After: row(1, "a", "committed")})
	if err != nil {
		t.Fatal(err)
	}
	// The next transaction is written and flushed, never committed: as if
	// the process died here.
	if err := old.Write(ctx, &change.Change{Op: change.Insert, Table: fakeTable, After: row(2, "a", "open"),
		Pos: change.Position{File: "b.000001", Offset: 999999}}); err != nil {
		t.Fatal(err)
	}
	if err := old.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	topic := prefix + ".d.t"
	if n := len(kafkatest.Consume(t, brokers, []string{topic}, false)); n != 2 {
		t.Fatalf("read_uncommitted sees %d records, want 2 (the open transaction's too)", n)
	}

	s := newSink(t, o)
	cp, err := s.Resume(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (change.Position{File: "b.000001", Offset: 100*committedAt + 50}); cp == nil || cp.Position() != want {
		t.Fatalf("resume point %+v, want %v", cp, want)
	}
	recs := kafkatest.Consume(t, brokers, []string{topic}, true)
	if len(recs) != 1 || !strings.Contains(string(recs[0].Value), "committed") {
		t.Fatalf("read_committed sees %d records, want only the committed one", len(recs))
	}
	// The fenced publisher fails, and says why.
	err = old.Commit(ctx, change.TxEnd{Next: change.Position{File: "b.000001", Offset: 1000000}})
	var ke *kafka.Error
	if !errors.As(err, &ke) || !strings.Contains(err.Error(), "replica-name") {
		t.Fatalf("commit of the fenced publisher: %v, want a *kafka.Error about fencing", err)
	}
	old.Close(ctx)
	// The successor goes on.
	if err := write(t, s, change.Change{Op: change.Insert, Table: fakeTable, After: row(3, "a", "after")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(kafkatest.Consume(t, brokers, []string{topic}, true)); n != 2 {
		t.Fatalf("read_committed sees %d records, want 2", n)
	}
}

// TestKafkaRollback: with exactly-once, a rolled-back transaction is never
// visible; the next one is.
func TestKafkaRollback(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Cluster(t)
	prefix := kafkatest.Prefix(t)
	ctx := context.Background()
	s := newSink(t, kafka.Options{Brokers: brokers, TopicPrefix: prefix, ExactlyOnce: true, Replica: prefix})
	if err := s.Write(ctx, &change.Change{Op: change.Insert, Table: fakeTable, After: row(1, "a", "rolled back")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := write(t, s, change.Change{Op: change.Insert, Table: fakeTable, After: row(1, "a", "resent")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	recs := kafkatest.Consume(t, brokers, []string{prefix + ".d.t"}, true)
	if len(recs) != 1 || !strings.Contains(string(recs[0].Value), "resent") {
		t.Fatalf("read_committed: %d records, want the resent one only", len(recs))
	}
}

func TestKafkaOptions(t *testing.T) {
	for _, tc := range []struct {
		o       kafka.Options
		wantErr string
	}{
		{kafka.Options{}, "no brokers"},
		{kafka.Options{Brokers: []string{"b:9092"}, Topic: "{prefix}.{schema}"}, "unknown placeholder {schema}"},
		{kafka.Options{Brokers: []string{"b:9092"}, Topic: "{prefix}/{db}"}, `has '/'`},
		{kafka.Options{Brokers: []string{"b:9092"}, Topic: "{db"}, "unclosed"},
		{kafka.Options{Brokers: []string{"b:9092"}, TopicPrefix: "a b"}, "topic prefix"},
		{kafka.Options{Brokers: []string{"b:9092"}, MaxMessageBytes: 100}, "out of range"},
		{kafka.Options{Brokers: []string{"b:9092"}, Topic: "{table}"}, ""},
	} {
		err := tc.o.Validate()
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.wantErr)
		}
	}
	for in, want := range map[string]string{"orders": "orders", "my table": "my_table", "naïve$1": "na_ve_1", "a.b-c_d": "a.b-c_d"} {
		if got := kafka.SanitizeTopicPart(in); got != want {
			t.Errorf("SanitizeTopicPart(%q) = %q, want %q", in, got, want)
		}
	}
	if got := (kafka.Options{TopicPrefix: "p"}).CheckpointTopic() + " " + (kafka.Options{}).SchemaTopic(); got != "p.checkpoints binlogcdc.schema-changes" {
		t.Errorf("topics %s", got)
	}
}

func TestKafkaRecordErrorText(t *testing.T) {
	e := &kafka.Error{Topic: "p.d.t", DB: "d", Table: "t", HasPos: true, Pos: change.Position{File: "binlog.000001", Offset: 42}, Row: 3,
		Err: kerr.MessageTooLarge, Hint: "h"}
	if got, want := e.Error(), "kafka: table d.t at binlog.000001:42 row 3: topic p.d.t: "+kerr.MessageTooLarge.Error()+" (hint: h)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
