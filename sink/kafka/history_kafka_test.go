package kafka_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/kafka"
	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
)

// bigHistory is a schema history of n tables, as schemahist writes it.
func bigHistory(n int, tag string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"version":1,"mariadb":true,"tables":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"db":"shop","name":"t%05d_%s","file":"b.000001","offset":%d}`, i, tag, 4+i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// TestKafkaSchemaHistory: a history larger than the brokers take in one
// record is saved in parts, in the transaction of the resume point, and
// read back whole by the next publisher of the replica; a shorter one
// replaces it; another replica has none.
func TestKafkaSchemaHistory(t *testing.T) {
	t.Parallel()
	const limit = 20000
	brokers := kafkatest.Fake(t, kfake.BrokerConfigs(map[string]string{"message.max.bytes": fmt.Sprint(limit)})).ListenAddrs()
	prefix := kafkatest.Prefix(t)
	o := kafka.Options{Brokers: brokers, TopicPrefix: prefix, ExactlyOnce: true, Replica: prefix, MaxMessageBytes: limit}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	big := bigHistory(2000, "a") // about 130 kB: 7 parts
	s := newSink(t, o)
	if cp, err := s.Resume(ctx); err != nil || cp != nil {
		t.Fatalf("Resume: %+v, %v", cp, err)
	}
	s.SetSchemaHistory(big)
	if err := s.SaveStart(ctx, change.Position{File: "b.000001", Offset: 4}, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	recs := kafkatest.Consume(t, brokers, []string{o.HistoryTopic()}, true)
	if len(recs) < 2 {
		t.Fatalf("the history of %d bytes is %d records, want several of at most %d bytes", len(big), len(recs), limit)
	}

	resume := func(o kafka.Options) (*kafka.Sink, []byte, string) {
		t.Helper()
		s := newSink(t, o)
		cp, err := s.Resume(ctx)
		if err != nil {
			t.Fatal(err)
		}
		data, warn := s.SchemaHistory()
		if data != nil && (cp == nil || cp.SchemaHistory == "") {
			t.Fatalf("a history without a resume point naming it")
		}
		return s, data, warn
	}
	s, got, warn := resume(o)
	if !bytes.Equal(got, big) || warn != "" {
		t.Fatalf("read back %d bytes (warning %q), want the %d saved", len(got), warn, len(big))
	}
	// A resume point without a change of history names the same one.
	if err := s.Commit(ctx, change.TxEnd{Next: change.Position{File: "b.000001", Offset: 100}}); err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	s, got, _ = resume(o)
	if !bytes.Equal(got, big) {
		t.Fatalf("after a commit without a new history: %d bytes", len(got))
	}
	small := bigHistory(3, "b")
	s.SetSchemaHistory(small)
	if err := s.Commit(ctx, change.TxEnd{Next: change.Position{File: "b.000001", Offset: 200}}); err != nil {
		t.Fatal(err)
	}
	s.Close(ctx)
	s, got, warn = resume(o)
	if !bytes.Equal(got, small) || warn != "" {
		t.Fatalf("after a shorter history: %q (warning %q)", got, warn)
	}
	s.Close(ctx)

	other := o
	other.Replica = prefix + "-other"
	s, got, warn = resume(other)
	if got != nil || warn != "" {
		t.Fatalf("another replica reads %d bytes of history (warning %q)", len(got), warn)
	}
	s.Close(ctx)

	// A part the resume point does not name (written by something else):
	// not used, and said so.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	stray := &kgo.Record{Topic: o.HistoryTopic(), Key: []byte(prefix + "/0"), Value: []byte("{}"), Headers: []kgo.RecordHeader{
		{Key: kafka.HeaderHistorySHA256, Value: []byte(strings.Repeat("0", 64))}, {Key: kafka.HeaderHistoryParts, Value: []byte("1")}}}
	if err := cl.ProduceSync(ctx, stray).FirstErr(); err != nil {
		t.Fatal(err)
	}
	s, got, warn = resume(o)
	if got != nil || !strings.Contains(warn, "not the one the resume point names") {
		t.Fatalf("with a stray part: %d bytes, warning %q", len(got), warn)
	}
	s.Close(ctx)
}
