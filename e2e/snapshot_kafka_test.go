package e2e

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
)

// TestSnapshotKafka: 'snapshot --to kafka://' publishes each row as its
// JSON line (op "snapshot"), keyed by its primary key (no key without
// one), on its table's topic, and no tombstones.
func TestSnapshotKafka(t *testing.T) {
	src := testserver.Start(t, testserver.Options{})
	spCreate(t, src)
	brokers := kafkatest.Cluster(t)
	prefix := kafkatest.Prefix(t)
	want, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN(), "--tables", "sp.*", "--allow-non-transactional")
	if code != 0 {
		t.Fatalf("snapshot: exit %d: %s", code, errOut)
	}
	out, errOut, code := runCLI(t, nil, "snapshot", "--source", src.DSN(), "--tables", "sp.*", "--to", "kafka://"+strings.Join(brokers, ","), "--kafka-topic-prefix", prefix, "--kafka-tombstones", "--allow-non-transactional")
	if code != 0 || len(out) != 0 {
		t.Fatalf("snapshot --to kafka: exit %d, stdout %q: %s", code, out, errOut)
	}
	topics := kafkatest.Topics(t, brokers, prefix+".")
	recs := kafkatest.Consume(t, brokers, topics, false)
	ts := regexp.MustCompile(`"ts":"[^"]*"`)
	var got []string
	for _, r := range recs {
		if r.Value == nil {
			t.Fatalf("a tombstone on %s", r.Topic)
		}
		var l kfLine
		if err := json.Unmarshal(r.Value, &l); err != nil {
			t.Fatal(err)
		}
		if r.Topic != prefix+"."+l.DB+"."+l.Table {
			t.Errorf("record of %s.%s on topic %s", l.DB, l.Table, r.Topic)
		}
		l.Op = "insert" // key() treats it as an insert
		if k := l.key(); string(k) != string(r.Key) {
			t.Errorf("%s: key %s, want %s", r.Topic, r.Key, k)
		}
		got = append(got, ts.ReplaceAllString(string(r.Value), "TS"))
	}
	wl := strings.Split(strings.TrimRight(ts.ReplaceAllString(string(want), "TS"), "\n"), "\n")
	sort.Strings(got)
	sort.Strings(wl)
	if strings.Join(got, "\n") != strings.Join(wl, "\n") {
		t.Fatalf("the records are not the snapshot's lines: %d records, %d lines", len(got), len(wl))
	}
}
