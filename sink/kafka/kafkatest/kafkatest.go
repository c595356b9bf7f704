// Package kafkatest gives tests a Kafka cluster and reads back what was
// published.
//
// By default the cluster is franz-go's kfake, an in-process fake that
// speaks the Kafka protocol (transactions and read_committed included).
// Set BINLOGCDC_KAFKA_BROKERS=host:port[,host:port…] to run the same tests
// against a real cluster (plaintext, allowed to create topics and to use
// transactions); tests that need to control the cluster (stop it, limit
// message sizes, inject errors) are then skipped. Every test uses its own
// topic prefix, so runs do not see each other's records.
package kafkatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// EnvBrokers names the environment variable that selects a real cluster.
const EnvBrokers = "BINLOGCDC_KAFKA_BROKERS"

// RealBrokers returns the brokers of BINLOGCDC_KAFKA_BROKERS, or nil.
func RealBrokers() []string {
	v := strings.TrimSpace(os.Getenv(EnvBrokers))
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// Cluster returns the seed brokers of a cluster for tb: the real one of
// BINLOGCDC_KAFKA_BROKERS, or a new kfake cluster (3 brokers, opts
// applied) closed when tb ends.
func Cluster(tb testing.TB, opts ...kfake.Opt) []string {
	tb.Helper()
	if b := RealBrokers(); b != nil {
		return b
	}
	return Fake(tb, opts...).ListenAddrs()
}

// Fake starts a kfake cluster on 127.0.0.1, closed when tb ends. It skips
// the test when BINLOGCDC_KAFKA_BROKERS selects a real cluster.
func Fake(tb testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	tb.Helper()
	if RealBrokers() != nil {
		tb.Skipf("needs a fake cluster it can control; %s is set", EnvBrokers)
	}
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}

// Prefix returns a topic prefix of its own for tb.
func Prefix(tb testing.TB) string {
	var b [4]byte
	rand.Read(b[:])
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, tb.Name())
	if len(name) > 40 {
		name = name[:40]
	}
	return "t-" + name + "-" + hex.EncodeToString(b[:])
}

// Topics lists the topics whose names start with prefix, sorted.
func Topics(tb testing.TB, brokers []string, prefix string, opts ...kgo.Opt) []string {
	tb.Helper()
	cl := client(tb, brokers, opts...)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, t := range resp.Topics {
		if t.Topic != nil && strings.HasPrefix(*t.Topic, prefix) {
			out = append(out, *t.Topic)
		}
	}
	sort.Strings(out)
	return out
}

func client(tb testing.TB, brokers []string, opts ...kgo.Opt) *kgo.Client {
	tb.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	return cl
}

// Consume reads every record of topics, from the start to the current end
// of each partition. With committed it reads like a read_committed
// consumer (records of aborted or open transactions left out); otherwise
// like a default (read_uncommitted) one. Records come in partition order,
// partitions one after the other. Control records are left out.
func Consume(tb testing.TB, brokers []string, topics []string, committed bool, opts ...kgo.Opt) []*kgo.Record {
	tb.Helper()
	if len(topics) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := client(tb, brokers, opts...)
	ends, err := endOffsets(ctx, cl, topics, committed)
	cl.Close()
	if err != nil {
		tb.Fatal(err)
	}
	parts := map[string]map[int32]kgo.Offset{}
	left := 0
	for tp, end := range ends {
		if end > 0 {
			if parts[tp.topic] == nil {
				parts[tp.topic] = map[int32]kgo.Offset{}
			}
			parts[tp.topic][tp.part] = kgo.NewOffset().AtStart()
			left++
		}
	}
	if left == 0 {
		return nil
	}
	copts := append([]kgo.Opt{kgo.ConsumePartitions(parts), kgo.KeepControlRecords()}, opts...)
	if committed {
		copts = append(copts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl = client(tb, brokers, copts...)
	defer cl.Close()
	got := map[tp][]*kgo.Record{}
	done := map[tp]bool{}
	for left > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			tb.Fatalf("consuming %v: timed out with %d partitions not read to the end", topics, left)
		}
		fs.EachError(func(t string, p int32, err error) {
			if !kerr.IsRetriable(err) {
				tb.Fatalf("consuming %s partition %d: %v", t, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			k := tp{r.Topic, r.Partition}
			if done[k] || r.Offset >= ends[k] {
				return
			}
			if !r.Attrs.IsControl() {
				got[k] = append(got[k], r)
			}
			if r.Offset >= ends[k]-1 {
				done[k] = true
				left--
			}
		})
	}
	keys := make([]tp, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].topic != keys[j].topic {
			return keys[i].topic < keys[j].topic
		}
		return keys[i].part < keys[j].part
	})
	var out []*kgo.Record
	for _, k := range keys {
		out = append(out, got[k]...)
	}
	return out
}

type tp struct {
	topic string
	part  int32
}

// endOffsets returns the high watermark of every partition of topics.
// endOffsets lists where each partition of topics ends: the high
// watermark, or with committed the last stable offset (a read_committed
// consumer cannot pass an open transaction, so it waits for no more).
func endOffsets(ctx context.Context, cl *kgo.Client, topics []string, committed bool) (map[tp]int64, error) {
	meta := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(t)
		meta.Topics = append(meta.Topics, mt)
	}
	mresp, err := meta.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrListOffsetsRequest()
	if committed {
		req.IsolationLevel = 1 // read_committed: the last stable offset
	}
	for _, t := range mresp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return nil, fmt.Errorf("topic %s: %w", *t.Topic, err)
		}
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = *t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp = p.Partition, -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	out := map[tp]int64{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("topic %s partition %d: %w", t.Topic, p.Partition, err)
			}
			out[tp{t.Topic, p.Partition}] = p.Offset
		}
	}
	return out, nil
}

// Header returns the value of r's header key ("" when absent) and whether
// it is present.
func Header(r *kgo.Record, key string) (string, bool) {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value), true
		}
	}
	return "", false
}
