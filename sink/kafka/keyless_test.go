package kafka_test

import (
	"context"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/envelope"
	"github.com/binlogcdc/binlogcdc/sink/kafka"
	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
)

// TestKafkaKeylessMaxwell: a table without a primary key gets Maxwell's
// key with a random _uuid, and its deletes no tombstone (the key is not
// the row's: a tombstone would compact nothing).
func TestKafkaKeylessMaxwell(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Cluster(t)
	prefix := kafkatest.Prefix(t)
	enc, err := envelope.New(envelope.Options{Format: "maxwell"})
	if err != nil {
		t.Fatal(err)
	}
	s := newSink(t, kafka.Options{Brokers: brokers, TopicPrefix: prefix, Tombstones: true, FlushEachCommit: true, Format: enc})
	if _, err := writeN(t, s,
		change.Change{Op: change.Insert, Table: noPKTable, After: change.Row{change.IntValue(1)}},
		change.Change{Op: change.Delete, Table: noPKTable, Before: change.Row{change.IntValue(1)}},
	); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs := kafkatest.Consume(t, brokers, []string{prefix + ".d.nopk"}, false)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2 (no tombstone)", len(recs))
	}
	for _, r := range recs {
		if r.Value == nil || !strings.HasPrefix(string(r.Key), `{"database":"d","table":"nopk","_uuid":"`) {
			t.Errorf("record key %s value %s", r.Key, r.Value)
		}
	}
	if string(recs[0].Key) == string(recs[1].Key) {
		t.Errorf("the same _uuid twice: %s", recs[0].Key)
	}
}
