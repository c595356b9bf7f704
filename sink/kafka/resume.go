package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlogcdc/binlogcdc/checkpoint"
)

// Resume prepares exactly-once publishing and returns the resume point of
// this replica, read from the checkpoints topic (nil when there is none:
// start afresh). Call it before the first Write; the source must then
// start at the returned position.
//
// It first fences older publishers with the same replica name (a process
// that was killed, or still runs elsewhere): Kafka aborts their open
// transaction, and their later commits fail. Then every transaction of
// this replica is either committed or aborted, so the last committed
// resume point is exactly where the published changes end.
func (s *Sink) Resume(ctx context.Context) (*checkpoint.Checkpoint, error) {
	if !s.opts.ExactlyOnce {
		return nil, errors.New("kafka: Resume needs ExactlyOnce")
	}
	if s.resumed {
		return s.resumeCP, nil
	}
	if err := s.failure(); err != nil {
		return nil, err
	}
	topic := s.opts.CheckpointTopic()
	fail := func(op string, err error) (*checkpoint.Checkpoint, error) {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		e := &Error{Topic: topic, Op: op, Err: err}
		if errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.TransactionalIDAuthorizationFailed) {
			e.Hint = fencedHint
		}
		return nil, s.setFailure(e)
	}
	if _, ok := s.ready[topic]; !ok {
		spec := topicSpec{partitions: 1, configs: map[string]string{"cleanup.policy": "compact"}}
		if err := s.ensureTopic(ctx, topic, spec); err != nil {
			return fail("creating the checkpoints topic", err)
		}
	}
	// Fence: InitProducerID for our transactional.id ends any transaction
	// an older incarnation left open.
	if err := s.retry(ctx, "initializing the transactional producer", func(ctx context.Context) error {
		_, _, err := s.cl.ProducerID(ctx)
		return err
	}); err != nil {
		return fail("initializing the transactional producer "+s.opts.Replica, err)
	}
	// Everything below the high watermarks is now decided.
	var hwm, start map[int32]int64
	if err := s.retry(ctx, "listing the offsets of "+topic, func(ctx context.Context) (err error) {
		if start, err = s.listOffsets(ctx, topic, -2); err != nil {
			return err
		}
		hwm, err = s.listOffsets(ctx, topic, -1)
		return err
	}); err != nil {
		return fail("listing offsets", err)
	}
	cp, err := s.readCheckpoint(ctx, topic, start, hwm)
	if err != nil {
		return fail("reading the checkpoint of replica "+s.opts.Replica, err)
	}
	if err := s.readHistory(ctx, cp); err != nil {
		return fail("reading the schema history of replica "+s.opts.Replica, err)
	}
	s.resumed, s.resumeCP = true, cp
	if cp != nil {
		s.cpGTID = [2]string{cp.LastGTID, cp.GTIDSet}
	}
	return cp, nil
}

// readHistory reads the schema history topic (history.go): the history
// the resume point cp names, into s.resumeHist (or why not, into
// s.histWarn), and how many parts the topic holds for this replica.
func (s *Sink) readHistory(ctx context.Context, cp *checkpoint.Checkpoint) error {
	topic := s.opts.HistoryTopic()
	if _, ok := s.ready[topic]; !ok {
		spec := topicSpec{partitions: 1, configs: map[string]string{"cleanup.policy": "compact"}}
		if err := s.ensureTopic(ctx, topic, spec); err != nil {
			return fmt.Errorf("creating the schema history topic: %w", err)
		}
	}
	var hwm, start map[int32]int64
	if err := s.retry(ctx, "listing the offsets of "+topic, func(ctx context.Context) (err error) {
		if start, err = s.listOffsets(ctx, topic, -2); err != nil {
			return err
		}
		hwm, err = s.listOffsets(ctx, topic, -1)
		return err
	}); err != nil {
		return err
	}
	h := historyReader{replica: s.opts.Replica}
	if err := s.readTopic(ctx, topic, start, hwm, func(r *kgo.Record) error {
		if err := h.add(r.Key, r.Value, r.Headers); err != nil {
			return fmt.Errorf("topic %s: the record at partition %d offset %d is not a part of a schema history: %w", topic, r.Partition, r.Offset, err)
		}
		return nil
	}); err != nil {
		return err
	}
	s.histParts = h.keys
	if cp == nil || cp.SchemaHistory == "" {
		return nil
	}
	data, err := h.assemble(cp.SchemaHistory)
	if err != nil {
		s.histWarn = fmt.Sprintf("topic %s: %v (saved by another publisher or another binlogcdc?): the history starts over (tables follow their TABLE_MAPs until created again)", topic, err)
		return nil
	}
	s.resumeHist, s.histHash = data, cp.SchemaHistory
	return nil
}

// SchemaHistory returns the schema history saved with the resume point
// Resume returned (nil: none), or, when it could not be used, why not
// (warn). Call it after Resume.
func (s *Sink) SchemaHistory() (data []byte, warn string) {
	return s.resumeHist, s.histWarn
}

// SetSchemaHistory makes the next resume point written (the Kafka
// transaction of the next Commit that writes one) save the schema
// history data with it, in the schema history topic.
func (s *Sink) SetSchemaHistory(data []byte) {
	if len(data) > 0 {
		s.hist = data
	}
}

// listOffsets returns the offsets of every partition of topic at ts (-1:
// the high watermark, -2: the log start).
func (s *Sink) listOffsets(ctx context.Context, topic string, ts int64) (map[int32]int64, error) {
	meta := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(topic)
	meta.Topics = append(meta.Topics, mt)
	mresp, err := meta.RequestWith(ctx, s.cl)
	if err != nil {
		return nil, err
	}
	if len(mresp.Topics) != 1 {
		return nil, fmt.Errorf("metadata response with %d topics", len(mresp.Topics))
	}
	if err := kerr.ErrorForCode(mresp.Topics[0].ErrorCode); err != nil {
		return nil, err
	}
	req := kmsg.NewPtrListOffsetsRequest()
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for _, p := range mresp.Topics[0].Partitions {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = p.Partition, ts
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, s.cl)
	if err != nil {
		return nil, err
	}
	out := map[int32]int64{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("partition %d: %w", p.Partition, err)
			}
			out[p.Partition] = p.Offset
		}
	}
	if len(out) != len(rt.Partitions) {
		return nil, fmt.Errorf("offsets of %d of %d partitions", len(out), len(rt.Partitions))
	}
	return out, nil
}

// readCheckpoint reads the partitions of topic, read_committed, from start
// up to hwm, and returns the last resume point of our replica.
func (s *Sink) readCheckpoint(ctx context.Context, topic string, start, hwm map[int32]int64) (*checkpoint.Checkpoint, error) {
	var cp *checkpoint.Checkpoint
	err := s.readTopic(ctx, topic, start, hwm, func(r *kgo.Record) error {
		if string(r.Key) != s.opts.Replica {
			return nil
		}
		if r.Value == nil { // a tombstone: the checkpoint was deleted
			cp = nil
			return nil
		}
		var c checkpoint.Checkpoint
		if jerr := json.Unmarshal(r.Value, &c); jerr != nil || c.File == "" {
			return fmt.Errorf("the record at partition %d offset %d is not a checkpoint (%v): %.100q", r.Partition, r.Offset, jerr, r.Value)
		}
		cp = &c
		return nil
	})
	return cp, err
}

// readTopic hands each committed record of topic from start up to hwm
// to each, in order (read_committed); the first error each returns ends
// the read.
//
// Markers are kept (KeepControlRecords), so that reaching hwm-1 is seen
// even when the last data records were aborted.
func (s *Sink) readTopic(ctx context.Context, topic string, start, hwm map[int32]int64, each func(*kgo.Record) error) error {
	parts := map[int32]kgo.Offset{}
	for p, end := range hwm {
		if end > start[p] {
			parts[p] = kgo.NewOffset().At(start[p])
		}
	}
	if len(parts) == 0 {
		return nil
	}
	opts := append(s.clientOpts(false),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	last := map[int32]int64{}
	for len(parts) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		var ferr error
		fs.EachError(func(_ string, p int32, err error) {
			if !transient(err) && ferr == nil {
				ferr = fmt.Errorf("partition %d: %w", p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			if _, reading := parts[r.Partition]; !reading || ferr != nil {
				return
			}
			if r.Offset >= hwm[r.Partition]-1 {
				delete(parts, r.Partition)
			}
			if l, ok := last[r.Partition]; ok && r.Offset <= l {
				return // fetched again
			}
			last[r.Partition] = r.Offset
			if r.Offset >= hwm[r.Partition] || r.Attrs.IsControl() {
				return
			}
			ferr = each(r)
		})
		if ferr != nil {
			return ferr
		}
	}
	return nil
}
