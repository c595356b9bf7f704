package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
	"github.com/binlogcdc/binlogcdc/sink/kafka"
	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
)

// TestKafkaSchemaHistory: with --kafka-exactly-once the schema history is
// kept in Kafka (PREFIX.schema-history) with the resume point, in parts
// when it is larger than the brokers take in one record, so a stream
// stopped (SIGTERM, kill -9) and restarted across DDL — CREATE, ALTER …
// ADD COLUMN … DEFAULT, RENAME, DROP, read before and after the stops —
// publishes exactly what one uninterrupted run publishes: Debezium's
// column defaults, Maxwell's DDL records with their old and new
// definitions.
func TestKafkaSchemaHistory(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"debezium", "maxwell"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			khRun(t, format)
		})
	}
}

// khLimit is the brokers' message.max.bytes: the history of the 150
// tables below is several times larger.
const khLimit = 20000

func khRun(t *testing.T, format string) {
	srv := testserver.Start(t, testserver.Options{})
	brokers := kafkatest.Fake(t, kfake.BrokerConfigs(map[string]string{"message.max.bytes": strconv.Itoa(khLimit)})).ListenAddrs()
	dir := t.TempDir()
	stmts := []string{"CREATE DATABASE kh"}
	for i := range 150 {
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE kh.f%03d (id INT PRIMARY KEY, a VARCHAR(20) DEFAULT 'filler', b INT DEFAULT 1)", i))
	}
	stmts = append(stmts, "CREATE TABLE kh.t (id INT PRIMARY KEY, a INT NOT NULL DEFAULT 5)", "INSERT INTO kh.t (id) VALUES (1)")
	srv.Exec(t, stmts...)

	args := func(prefix string) []string {
		a := []string{"--source", srv.DSN(), "--from", "earliest", "--format", format,
			"--to", "kafka://" + strings.Join(brokers, ","), "--kafka-topic-prefix", prefix,
			"--kafka-exactly-once", "--kafka-replica-name", prefix, "--kafka-max-message-bytes", strconv.Itoa(khLimit)}
		if format == "debezium" {
			a = append(a, "--with-schema") // (which has no --ddl records yet)
		} else {
			a = append(a, "--ddl")
		}
		return a
	}
	prefix := kafkatest.Prefix(t)
	runs := 0
	start := func(prefix string) *stRun {
		runs++
		return stStart(t, dir, fmt.Sprintf("run%d", runs), nil, args(prefix)...)
	}
	caughtUp := func(r *stRun, prefix string) {
		t.Helper()
		last := stLastGTID(t, srv)
		stPoll(t, 2*time.Minute, r, "the resume point after "+last, func() bool {
			c := kfLastCheckpoint(t, brokers, prefix, prefix)
			return c != nil && c.LastGTID == last
		})
	}
	stop := func(r *stRun) {
		t.Helper()
		r.signal(syscall.SIGTERM)
		if code := r.wait(time.Minute); code != 0 {
			t.Fatalf("SIGTERM: exit code %d; stderr:\n%s", code, r.errText())
		}
	}
	noWarning := func(r *stRun) {
		t.Helper()
		if strings.Contains(r.errText(), "schema history") {
			t.Errorf("run %d: a schema history warning:\n%s", runs, r.errText())
		}
	}

	r := start(prefix)
	caughtUp(r, prefix)
	stop(r)
	noWarning(r)
	// DDL while stopped: read after a restart from the history in Kafka.
	srv.Exec(t, "ALTER TABLE kh.t ADD COLUMN b VARCHAR(9) DEFAULT 'bee'", "INSERT INTO kh.t (id) VALUES (2)")
	r = start(prefix)
	caughtUp(r, prefix)
	srv.Exec(t, "RENAME TABLE kh.t TO kh.u", "INSERT INTO kh.u (id) VALUES (3)")
	caughtUp(r, prefix)
	r.kill9()
	noWarning(r)
	srv.Exec(t, "ALTER TABLE kh.u ADD COLUMN c INT DEFAULT 9", "DROP TABLE kh.f000", "INSERT INTO kh.u (id) VALUES (4)")
	r = start(prefix)
	caughtUp(r, prefix)
	srv.Exec(t, "CREATE TABLE kh.v (id INT PRIMARY KEY, s VARCHAR(5) DEFAULT 'vee')", "INSERT INTO kh.v (id) VALUES (1)")
	caughtUp(r, prefix)
	r.kill9()
	noWarning(r)
	r = start(prefix)
	srv.Exec(t, "INSERT INTO kh.u (id) VALUES (5)", "INSERT INTO kh.v (id) VALUES (2)")
	caughtUp(r, prefix)
	stop(r)
	noWarning(r)
	if !strings.Contains(r.errText(), "resuming from the resume point") {
		t.Errorf("the last run did not resume:\n%s", r.errText())
	}

	// The history in Kafka: in parts, each within the limit.
	parts := 0
	for _, rec := range kafkatest.Consume(t, brokers, []string{prefix + ".schema-history"}, true) {
		if n, _ := kafkatest.Header(rec, kafka.HeaderHistoryParts); n != "" && n != "1" {
			parts++
		}
	}
	if parts == 0 {
		t.Errorf("no history in several parts in %s.schema-history (limit %d bytes)", prefix, khLimit)
	}

	// One uninterrupted run publishes the same.
	ref := kafkatest.Prefix(t)
	r = start(ref)
	caughtUp(r, ref)
	stop(r)
	got, want := khRecords(t, brokers, prefix), khRecords(t, brokers, ref)
	if len(got) == 0 || len(got) != len(want) {
		t.Fatalf("%d topics published with restarts, %d without", len(got), len(want))
	}
	for topic, w := range want {
		g := got[topic]
		w = strings.ReplaceAll(w, ref, prefix)
		if g != w {
			t.Errorf("topic %s with restarts:\n%s\nwithout:\n%s", topic, g, w)
		}
	}
	for _, check := range []string{`"default":5,"field":"a"`, `"default":"bee","field":"b"`, `"default":9,"field":"c"`, `"default":"vee","field":"s"`} {
		if format == "debezium" && !strings.Contains(got["kh.u"]+got["kh.v"], check) {
			t.Errorf("no %s in the records of kh.u and kh.v", check)
		}
	}
	if format == "maxwell" {
		// The ALTER read after the kill: its old definition has the column
		// added before the SIGTERM, and the table's name after the RENAME.
		alter := regexp.MustCompile(`(?m)^.*ALTER TABLE kh.u ADD COLUMN c.*$`).FindString(got["schema-changes"])
		old := `"old":{"database":"kh","charset":"utf8mb4","table":"u","columns":[{"type":"int","name":"id","signed":true},{"type":"int","name":"a","signed":true},{"type":"varchar","name":"b","charset":"utf8mb4"}]`
		if !strings.Contains(alter, old) {
			t.Errorf("the ALTER of kh.u after the kill: %s\nwant %s", alter, old)
		}
	}
}

// khRecords returns, by topic (prefix cut off), the committed records of
// prefix's data and DDL topics, key and value a line, sorted,
// processing times and Maxwell's random keys taken out.
func khRecords(t *testing.T, brokers []string, prefix string) map[string]string {
	t.Helper()
	var topics []string
	for _, tp := range kafkatest.Topics(t, brokers, prefix) {
		if tp != prefix+".checkpoints" && tp != prefix+".schema-history" {
			topics = append(topics, tp)
		}
	}
	now := regexp.MustCompile(`"ts_(ms|us|ns)":\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	out := map[string][]string{}
	for _, r := range kafkatest.Consume(t, brokers, topics, true) {
		name := strings.TrimPrefix(strings.TrimPrefix(r.Topic, prefix), ".")
		out[name] = append(out[name], now.ReplaceAllString(string(r.Key)+" "+string(r.Value), `"ts":T`))
	}
	// (Sorted: Debezium's keys name the prefix, so the partitions differ.)
	m := map[string]string{}
	for k, v := range out {
		sort.Strings(v)
		m[k] = strings.Join(v, "\n")
	}
	return m
}

// TestKafkaSchemaHistoryCheckpointFile: an at-least-once stream to Kafka
// (--checkpoint FILE) keeps the history in FILE.schema-history, and a
// restart across an ALTER publishes the defaults of the columns known
// before it.
func TestKafkaSchemaHistoryCheckpointFile(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	brokers := kafkatest.Cluster(t)
	prefix := kafkatest.Prefix(t)
	dir := t.TempDir()
	cp := filepath.Join(dir, "cp.json")
	args := []string{"--source", srv.DSN(), "--from", "now", "--format", "debezium", "--with-schema", "--checkpoint", cp,
		"--to", "kafka://" + strings.Join(brokers, ","), "--kafka-topic-prefix", prefix}
	saved := func(r *stRun) {
		t.Helper()
		last := stLastGTID(t, srv)
		stPoll(t, time.Minute, r, "the checkpoint after "+last, func() bool {
			c, err := checkpoint.Load(cp)
			return err == nil && c != nil && c.LastGTID == last
		})
		shStop(t, r)
	}
	r := stStart(t, dir, "s1", nil, args...)
	stPoll(t, time.Minute, r, "connected", r.ready)
	srv.Exec(t, "CREATE DATABASE kf", "CREATE TABLE kf.t (id INT PRIMARY KEY, a INT NOT NULL DEFAULT 5)", "INSERT INTO kf.t (id) VALUES (1)")
	saved(r)
	if got, want := shCols(shLoad(t, cp).Table("kf", "t")), "id a=5"; got != want {
		t.Errorf("first run: kf.t is %s, want %s", got, want)
	}
	srv.Exec(t, "ALTER TABLE kf.t ADD COLUMN b VARCHAR(9) DEFAULT 'bee'", "INSERT INTO kf.t (id) VALUES (2)")
	r = stStart(t, dir, "s2", nil, args...)
	saved(r)
	if got, want := shCols(shLoad(t, cp).Table("kf", "t")), "id a=5 b='bee'"; got != want {
		t.Errorf("after the restart: kf.t is %s, want %s", got, want)
	}
	var last string
	for _, rec := range kafkatest.Consume(t, brokers, []string{prefix + ".kf.t"}, false) {
		if strings.Contains(string(rec.Value), `"after":{"id":2,`) {
			last = string(rec.Value)
		}
	}
	for _, want := range []string{`"default":5,"field":"a"`, `"default":"bee","field":"b"`, `"after":{"id":2,"a":5,"b":"bee"}`} {
		if !strings.Contains(last, want) {
			t.Errorf("the insert after the restart has no %s: %s", want, last)
		}
	}
}
