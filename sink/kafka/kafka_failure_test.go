package kafka_test

// Failures: records too large, topics that cannot be created, brokers
// down, deliveries that time out.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/kafka"
	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
)

// bigRow has a value of n random (incompressible) bytes, in base64.
func bigRow(n int) change.Row {
	b := make([]byte, n*3/4)
	rand.Read(b)
	return row(1, "k", base64.StdEncoding.EncodeToString(b))
}

// TestKafkaMessageTooLarge: a record over the client's or the broker's limit
// fails the run with an error naming the table and the position.
func TestKafkaMessageTooLarge(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, n uint64, err error) {
		t.Helper()
		var ke *kafka.Error
		want := fmt.Sprintf("table d.t at b.000001:%d row 1: ", 100*n)
		if !errors.As(err, &ke) || !errors.Is(err, kerr.MessageTooLarge) || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), "max.message.bytes") {
			t.Fatalf("got %v; want a *kafka.Error wrapping MESSAGE_TOO_LARGE, with %q and a hint", err, want)
		}
	}
	t.Run("client", func(t *testing.T) {
		t.Parallel()
		s := newSink(t, kafka.Options{Brokers: kafkatest.Cluster(t), TopicPrefix: kafkatest.Prefix(t), MaxMessageBytes: 1000, FlushEachCommit: true})
		n, err := writeN(t, s,
			change.Change{Op: change.Insert, Table: fakeTable, After: row(1, "a", "small")},
			change.Change{Op: change.Insert, Table: fakeTable, After: bigRow(2000)})
		check(t, n, err)
		// Sticky: nothing after it goes through, and Close says so too.
		if err := write(t, s, change.Change{Op: change.Insert, Table: fakeTable, After: row(1, "a", "small")}); err == nil {
			t.Fatal("a write after the failure succeeded")
		}
		if err := s.Close(context.Background()); err == nil {
			t.Fatal("Close after the failure returned nil")
		}
	})
	t.Run("buffer", func(t *testing.T) {
		// A record larger than MaxBufferedBytes is refused before kgo
		// buffers it, its promise run later: Close still reports it (it
		// once could return nil, the record lost, the run "done").
		t.Parallel()
		s := newSink(t, kafka.Options{Brokers: kafkatest.Cluster(t), TopicPrefix: kafkatest.Prefix(t), MaxBufferedBytes: 1000})
		if _, err := writeN(t, s, change.Change{Op: change.Insert, Table: fakeTable, After: bigRow(2000)}); err != nil {
			t.Logf("write: %v", err)
		}
		if err := s.Close(context.Background()); !errors.Is(err, kerr.MessageTooLarge) {
			t.Fatalf("Close: %v, want MESSAGE_TOO_LARGE", err)
		}
	})
	t.Run("above 100 MiB", func(t *testing.T) {
		// kgo's write limit (100 MiB) follows MaxMessageBytes.
		t.Parallel()
		s, err := kafka.New(kafka.Options{Brokers: []string{"127.0.0.1:1"}, MaxMessageBytes: 200 << 20})
		if err != nil {
			t.Fatal(err)
		}
		s.Close(context.Background())
	})
	t.Run("broker", func(t *testing.T) {
		t.Parallel()
		c := kafkatest.Fake(t, kfake.BrokerConfigs(map[string]string{"message.max.bytes": "1500"}))
		s := newSink(t, kafka.Options{Brokers: c.ListenAddrs(), TopicPrefix: kafkatest.Prefix(t), FlushEachCommit: true})
		n, err := writeN(t, s,
			change.Change{Op: change.Insert, Table: fakeTable, After: row(1, "a", "small")},
			change.Change{Op: change.Insert, Table: fakeTable, After: bigRow(3000)})
		check(t, n, err)
		s.Close(context.Background())
	})
}

// TestKafkaTopicCannotBeCreated: a refused CreateTopics fails the run with an
// error naming the topic, the table and the position.
func TestKafkaTopicCannotBeCreated(t *testing.T) {
	t.Parallel()
	c := kafkatest.Fake(t)
	c.ControlKey(int16(kmsg.CreateTopics), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		creq := req.(*kmsg.CreateTopicsRequest)
		resp := creq.ResponseKind().(*kmsg.CreateTopicsResponse)
		for _, rt := range creq.Topics {
			st := kmsg.NewCreateTopicsResponseTopic()
			st.Topic = rt.Topic
			st.ErrorCode = kerr.PolicyViolation.Code
			st.ErrorMessage = kmsg.StringPtr("no new topics on Sundays")
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	prefix := kafkatest.Prefix(t)
	s := newSink(t, kafka.Options{Brokers: c.ListenAddrs(), TopicPrefix: prefix, FlushEachCommit: true})
	n, err := writeN(t, s, change.Change{Op: change.Insert, Table: fakeTable, After: row(1, "a", "v")})
	want := fmt.Sprintf("kafka: table d.t at b.000001:%d row 0: topic %s.d.t: cannot create the topic: POLICY_VIOLATION", 100*n, prefix)
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "Sundays") {
		t.Fatalf("got %v\nwant %s…", err, want)
	}
	s.Close(context.Background())
}

// freePort returns a port nothing listens on (yet).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(&l.b, format+"\n", args...)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestKafkaBrokersUnavailable: with the cluster down, writes go on until the
// buffer is full and then block (bounded memory); the outage is logged;
// when the cluster comes up everything is delivered, nothing dropped.
func TestKafkaBrokersUnavailable(t *testing.T) {
	t.Parallel()
	// Always its own fake cluster, started late on a fixed port, even when
	// BINLOGCDC_KAFKA_BROKERS names a real one: a real cluster cannot be
	// made to come up on cue.
	port := freePort(t)
	prefix := kafkatest.Prefix(t)
	var log logBuf
	s := newSink(t, kafka.Options{Brokers: []string{fmt.Sprintf("127.0.0.1:%d", port)}, TopicPrefix: prefix,
		FlushEachCommit: true, MaxBufferedRecords: 5, Logf: log.logf})
	// The topic exists once the cluster is up; before, topicFor retries.
	const n = 20
	var written atomic.Int64
	done := make(chan error, 1)
	go func() {
		var cs []change.Change
		for i := range n {
			cs = append(cs, change.Change{Op: change.Insert, Table: fakeTable, After: row(int64(i), "k", "v")})
		}
		done <- write(t, &countingSink{Sink: s, n: &written}, cs...)
	}()
	time.Sleep(1500 * time.Millisecond)
	if w := written.Load(); w != 0 {
		t.Fatalf("%d writes went through with no cluster (the topic cannot be looked up)", w)
	}
	t.Logf("%v: starting the cluster", time.Now().Format("15:04:05.000"))
	c := kafkatest.Fake(t, kfake.Ports(port), kfake.NumBrokers(1), kfake.SeedTopics(1, prefix+".d.t"))
	// Hold produce requests back: the buffer fills up and Write blocks.
	var hold atomic.Bool
	hold.Store(true)
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if hold.Load() {
			return nil, errors.New("not now"), true // closes the connection
		}
		return nil, nil, false
	})
	deadline := time.Now().Add(20 * time.Second)
	for written.Load() < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	if w := written.Load(); w < 5 || w > 6 {
		t.Fatalf("%d writes returned while produce requests fail, want the buffer's 5 (+1 blocked)", w)
	}
	t.Logf("%v: releasing produce requests", time.Now().Format("15:04:05.000"))
	hold.Store(false)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the transaction was not delivered after the cluster came up")
	}
	t.Logf("%v: delivered", time.Now().Format("15:04:05.000"))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs := kafkatest.Consume(t, c.ListenAddrs(), []string{prefix + ".d.t"}, false)
	if len(recs) != n {
		t.Fatalf("%d records delivered, want %d", len(recs), n)
	}
	for i, r := range recs {
		if want := fmt.Sprintf(`[%q,%d]`, "k", i); string(r.Key) != want {
			t.Fatalf("record %d has key %s, want %s: out of order", i, r.Key, want)
		}
	}
	if l := log.String(); !strings.Contains(l, "retrying") {
		t.Errorf("the outage was not reported:\n%s", l)
	}
}

// countingSink counts the Writes that returned.
type countingSink struct {
	*kafka.Sink
	n *atomic.Int64
}

func (c *countingSink) Write(ctx context.Context, ch *change.Change) error {
	err := c.Sink.Write(ctx, ch)
	c.n.Add(1)
	return err
}

// TestKafkaDeliveryTimeout: with a delivery timeout and no cluster, the run
// fails: records are never skipped.
func TestKafkaDeliveryTimeout(t *testing.T) {
	t.Parallel()
	s := newSink(t, kafka.Options{Brokers: []string{fmt.Sprintf("127.0.0.1:%d", freePort(t))}, TopicPrefix: "x",
		FlushEachCommit: true, DeliveryTimeout: time.Second})
	start := time.Now()
	err := write(t, s, change.Change{Op: change.Insert, Table: fakeTable, After: row(1, "a", "v")})
	var ke *kafka.Error
	if !errors.As(err, &ke) || !strings.Contains(err.Error(), "table d.t at b.000001:") {
		t.Fatalf("got %v, want a *kafka.Error naming the table and position", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("failing took %v", d)
	}
	s.Close(context.Background())
}
