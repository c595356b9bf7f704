// Package kafka publishes changes to Apache Kafka (or any broker speaking
// its protocol), with github.com/twmb/franz-go.
//
// Each row change becomes one record:
//
//   - topic: one per table, "<prefix>.<db>.<table>" by default (see
//     Options.Topic); DDL records go to "<prefix>.schema-changes";
//   - key: the primary key's values as a JSON array ([42], ["a",1]), so
//     every change of a row lands on the same partition, in order; null
//     for a table without a primary key (such records are spread over the
//     partitions: no order between them unless the topic has one partition);
//   - value: the same JSON object as a line of 'binlogcdc read';
//   - headers: binlogcdc.file, binlogcdc.offset, binlogcdc.row (the
//     change's position) and binlogcdc.gtid (when the binlog has GTIDs).
//
// With Options.Tombstones a delete is followed by a tombstone (same key,
// null value), so log compaction can drop the row.
//
// Delivery. By default at-least-once: records are produced as they are
// written, Flush waits until the brokers acknowledged everything produced
// so far, and the caller checkpoints only after that. After a crash the
// transactions since the last checkpoint are published again
// (deduplicate on the position headers). With Options.ExactlyOnce every
// source transaction is one Kafka transaction that also writes the resume
// point to the compacted topic "<prefix>.checkpoints" (key: the replica
// name); consumers that read with isolation.level=read_committed then see
// every change exactly once, and Resume reads the resume point back. The
// stream's schema history goes into the same transaction when it changed
// (SetSchemaHistory), in the compacted topic "<prefix>.schema-history"
// (history.go), and Resume reads it back too (SchemaHistory).
//
// Records are never dropped: a record that cannot be delivered (after the
// client's retries, or at once for errors that retrying cannot fix, such
// as a message too large) makes every later call fail with an *Error that
// names the table and the binlog position.
package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/sink/envelope"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
)

var _ sink.Sink = (*Sink)(nil)

// Sink publishes changes to Kafka. Its methods, except Flush, must not be
// called concurrently.
type Sink struct {
	opts Options
	cl   *kgo.Client
	tmpl *template
	enc  jsonl.Encoder
	log  *outageLog
	held held // Format.NeedsTail: the open transaction's records (held.go)

	extraHeader kgo.RecordHeader // a header for the records of the change being written

	topics map[tableName]string // table → topic
	ready  map[string]bool      // topics known to exist

	inTxn     bool          // ExactlyOnce: a Kafka transaction is open
	txRecords int           // records written in the open source transaction
	pendingCP *change.TxEnd // ExactlyOnce: a resume point not yet written
	lastCP    time.Time     // when the last resume point was written
	resumed   bool          // Resume ran (ExactlyOnce: the producer is fenced in)
	resumeCP  *checkpoint.Checkpoint
	// cpGTID is the last resume point's LastGTID and GTIDSet, carried on
	// to one after no transaction (a ROTATE).
	cpGTID [2]string

	// The schema history (history.go).
	hist       []byte // SetSchemaHistory's, to write with the next resume point
	histHash   string // of the last one written: every resume point names it
	histParts  int    // the parts the topic holds for this replica
	resumeHist []byte // read back by Resume
	histWarn   string // why the history in the topic was not used

	mu       sync.Mutex
	err      error // the first delivery error: sticky
	closed   bool
	closeErr error
	promise  func(*kgo.Record, error)
	inflight inflight // records produced whose promise has not run

	// Records counts the records produced (tombstones included).
	Records uint64

	retries atomic.Uint64 // transient errors retried (errors.go retry)
}

// Buffered returns how many records were produced and are not
// acknowledged by the brokers yet (for --metrics-addr).
func (s *Sink) Buffered() int64 { return s.cl.BufferedProduceRecords() }

// Retries returns how many transient errors were retried so far (for
// --metrics-addr).
func (s *Sink) Retries() uint64 { return s.retries.Load() }

type tableName struct{ db, table string }

// New returns a Sink. It does no I/O: the brokers are contacted on first
// use.
func New(opts Options) (*Sink, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	tmpl, _ := parseTemplate(opts.Topic, opts.TopicPrefix)
	s := &Sink{opts: opts, tmpl: tmpl, topics: map[tableName]string{}, ready: map[string]bool{},
		log: &outageLog{logf: opts.Logf}, held: held{max: opts.MaxBufferedBytes}}
	s.promise = func(r *kgo.Record, err error) {
		s.delivered(r, err)
		s.inflight.done()
	}
	cl, err := kgo.NewClient(s.clientOpts(true)...)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	s.cl = cl
	return s, nil
}

// clientOpts are the franz-go options; producer adds the producer's.
func (s *Sink) clientOpts(producer bool) []kgo.Opt {
	o := s.opts
	opts := []kgo.Opt{
		kgo.SeedBrokers(o.Brokers...),
		kgo.ClientID("binlogcdc"),
		kgo.WithHooks(s.log),
	}
	if o.TLS != nil {
		opts = append(opts, kgo.DialTLSConfig(o.TLS.Clone()))
	}
	if o.SASL != nil {
		opts = append(opts, kgo.SASL(o.SASL))
	}
	if producer {
		opts = append(opts,
			kgo.MaxBufferedRecords(o.MaxBufferedRecords),
			kgo.MaxBufferedBytes(o.MaxBufferedBytes),
			// Topics are created (or found) before their first record, so an
			// unknown topic is metadata still propagating: keep trying.
			kgo.UnknownTopicRetries(50),
		)
		if o.MaxMessageBytes > 0 {
			opts = append(opts, kgo.ProducerBatchMaxBytes(int32(o.MaxMessageBytes)))
			if o.MaxMessageBytes > o.MaxBufferedBytes {
				// kgo refuses a record larger than MaxBufferedBytes: let
				// one record as large as a batch may be wait.
				opts = append(opts, kgo.MaxBufferedBytes(o.MaxMessageBytes))
			}
			if w := o.MaxMessageBytes + 1<<20; w > 100<<20 {
				// franz-go refuses a batch above its write limit (100 MiB by
				// default, the brokers' socket.request.max.bytes): a
				// request holds a batch and a little more.
				opts = append(opts, kgo.BrokerMaxWriteBytes(int32(min(w, 1<<30))))
			}
		}
		if o.DeliveryTimeout > 0 {
			opts = append(opts, kgo.RecordDeliveryTimeout(o.DeliveryTimeout))
		}
		if o.ExactlyOnce {
			opts = append(opts, kgo.TransactionalID(o.Replica), kgo.TransactionTimeout(o.TransactionTimeout))
		}
	}
	return append(opts, o.ClientOpts...)
}

// delivered is the promise of every record: it keeps the first error.
func (s *Sink) delivered(r *kgo.Record, err error) {
	if err == nil || errors.Is(err, kgo.ErrAborting) { // ErrAborting: our own Rollback
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = recordError(r, err)
	}
}

// failure returns the sticky error, if any.
func (s *Sink) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *Sink) setFailure(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	return s.err
}

// Write produces c's record(s). It blocks while the client's buffer is
// full.
func (s *Sink) Write(ctx context.Context, c *change.Change) error {
	if err := s.failure(); err != nil {
		return err
	}
	topic, err := s.topicFor(ctx, c)
	if err != nil {
		return err
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	if sp, ok := s.opts.Format.(envelope.KeySplitter); ok {
		if del, ins, ok := sp.SplitKeyChange(c); ok {
			// Debezium's headers name the other key: __debezium.newkey on
			// the delete (and its tombstone), __debezium.oldkey on the create.
			newKey, _ := s.opts.Format.AppendKey(nil, &ins)
			oldKey, _ := s.opts.Format.AppendKey(nil, &del)
			s.extraHeader = kgo.RecordHeader{Key: "__debezium.newkey", Value: newKey}
			err := s.Write(ctx, &del)
			if err == nil {
				s.extraHeader = kgo.RecordHeader{Key: "__debezium.oldkey", Value: oldKey}
				err = s.Write(ctx, &ins)
			}
			s.extraHeader = kgo.RecordHeader{}
			return err
		}
	}
	headers := positionHeaders(c)
	if s.extraHeader.Key != "" {
		headers = append(headers, s.extraHeader)
	}
	var val, key []byte
	if f := s.opts.Format; f != nil {
		if val, err = f.AppendValue(make([]byte, 0, 256), c); err != nil {
			return err
		}
		if k, ok := f.AppendKey(nil, c); ok {
			key = k
		}
	} else {
		val = s.enc.AppendChange(make([]byte, 0, 256), c)
		if c.Op == change.DDL {
			key, _ = json.Marshal(c.DB)
		} else if k, ok := s.enc.AppendKey(nil, c); ok {
			key = k
		}
	}
	s.produce(ctx, &kgo.Record{Topic: topic, Key: key, Value: val, Headers: headers})
	// No tombstone for a table without a primary key: its key is null
	// (json, debezium) or random (maxwell's _uuid), never the row's.
	if s.opts.Tombstones && c.Op != change.DDL && key != nil && c.Table != nil && len(c.Table.PrimaryKey) > 0 {
		switch c.Op {
		case change.Delete:
			s.produce(ctx, &kgo.Record{Topic: topic, Key: key, Headers: headers})
		case change.Update:
			if old, ok := s.beforeKey(c); ok && string(old) != string(key) {
				s.produce(ctx, &kgo.Record{Topic: topic, Key: old, Headers: headers})
			}
		}
	}
	return s.failure()
}

func (s *Sink) beforeKey(c *change.Change) ([]byte, bool) {
	if f := s.opts.Format; f != nil {
		return f.AppendBeforeKey(nil, c)
	}
	return s.enc.AppendBeforeKey(nil, c)
}

// tailing reports whether records wait for the transaction's end.
func (s *Sink) tailing() bool { return s.opts.Format != nil && s.opts.Format.NeedsTail() }

// releaseHeld closes the held records with their tails and produces them.
func (s *Sink) releaseHeld(ctx context.Context, tx change.TxEnd) error {
	err := s.held.each(func(r *kgo.Record, last bool) {
		if r.Value != nil {
			r.Value = s.opts.Format.AppendTail(r.Value, tx, last)
		}
		s.send(ctx, r)
	})
	if err != nil {
		return s.setFailure(err)
	}
	return nil
}

func (s *Sink) produce(ctx context.Context, r *kgo.Record) {
	s.Records++
	s.txRecords++
	if s.tailing() && r.Topic != s.opts.CheckpointTopic() {
		if err := s.held.add(r); err != nil {
			s.setFailure(err)
		}
		return
	}
	s.send(ctx, r)
}

// send produces r. Every record goes through it, so that flushed can wait
// for every promise.
func (s *Sink) send(ctx context.Context, r *kgo.Record) {
	s.inflight.add()
	s.cl.Produce(ctx, r, s.promise)
}

// flushed waits until every record produced so far is acknowledged or
// failed, its promise run. kgo's Flush alone does not wait for a record
// failed before it was buffered (one larger than MaxBufferedBytes or a
// batch): its promise runs later, on another goroutine, and a checkpoint
// saved or an exit 0 in between would pass over a record never published.
func (s *Sink) flushed(ctx context.Context) error {
	if err := s.cl.Flush(ctx); err != nil {
		return err
	}
	return s.inflight.wait(ctx)
}

// begin opens a Kafka transaction when ExactlyOnce needs one.
func (s *Sink) begin(ctx context.Context) error {
	if !s.opts.ExactlyOnce || s.inTxn {
		return nil
	}
	if !s.resumed {
		// Fence older publishers with this name before writing.
		if _, err := s.Resume(ctx); err != nil {
			return err
		}
	}
	if err := s.cl.BeginTransaction(); err != nil {
		return s.setFailure(&Error{Op: "beginning a transaction", Err: err})
	}
	s.inTxn = true
	return nil
}

func positionHeaders(c *change.Change) []kgo.RecordHeader {
	h := make([]kgo.RecordHeader, 3, 4)
	h[0] = kgo.RecordHeader{Key: HeaderFile, Value: []byte(c.Pos.File)}
	h[1] = kgo.RecordHeader{Key: HeaderOffset, Value: strconv.AppendUint(nil, c.Pos.Offset, 10)}
	h[2] = kgo.RecordHeader{Key: HeaderRow, Value: strconv.AppendInt(nil, int64(c.RowIndex), 10)}
	if c.GTID != "" {
		h = append(h, kgo.RecordHeader{Key: HeaderGTID, Value: []byte(c.GTID)})
	}
	return h
}

// checkpointEvery is how often, at most, ExactlyOnce writes the resume
// point after source transactions that published nothing (filtered out).
// Skipping it is safe: those transactions are read again after a restart,
// and publish nothing again.
const checkpointEvery = time.Second

// Commit ends the source transaction. With ExactlyOnce, it commits the
// Kafka transaction with the resume point tx.Next; with FlushEachCommit,
// it waits for the records to be acknowledged. It returns the first
// delivery error, if any.
func (s *Sink) Commit(ctx context.Context, tx change.TxEnd) error {
	if err := s.failure(); err != nil {
		return err
	}
	n := s.txRecords
	s.txRecords = 0
	if s.held.n > 0 {
		if err := s.releaseHeld(ctx, tx); err != nil {
			return err
		}
	}
	if !s.opts.ExactlyOnce {
		if s.opts.FlushEachCommit {
			return s.Flush(ctx)
		}
		return nil
	}
	if n == 0 && time.Since(s.lastCP) < checkpointEvery {
		s.pendingCP = &tx
		return nil
	}
	return s.commitTxn(ctx, tx, "")
}

// SaveStart writes next, where the source starts and its GTID position
// is gtidPos ("" when none or unknown), as the resume point of a replica
// that has none (ExactlyOnce; Resume returned nil), in a Kafka transaction
// of its own: a start point resolved once (--from now) must not be
// resolved again after a stop or a crash before the first commit, which
// would skip what the source logged meanwhile.
func (s *Sink) SaveStart(ctx context.Context, next change.Position, gtidPos string) error {
	if !s.opts.ExactlyOnce || s.resumeCP != nil || next.File == "" {
		return nil
	}
	if err := s.failure(); err != nil {
		return err
	}
	return s.commitTxn(ctx, change.TxEnd{Next: next}, gtidPos)
}

// commitTxn writes the resume point (with gtidSet, the GTID position
// there, when tx has no GTID) and commits the Kafka transaction.
func (s *Sink) commitTxn(ctx context.Context, tx change.TxEnd, gtidSet string) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	cp := checkpoint.Checkpoint{File: tx.Next.File, Offset: tx.Next.Offset, LastGTID: tx.GTID,
		Server: s.opts.Server, Saved: time.Now().UTC()}
	switch {
	case gtidSet != "":
		cp.GTIDSet = gtidSet
	case tx.GTID == "":
		cp.LastGTID, cp.GTIDSet = s.cpGTID[0], s.cpGTID[1]
	}
	histHash, histParts := s.histHash, s.histParts
	if s.hist != nil {
		// Before the resume point that names it, in its transaction.
		topic := s.opts.HistoryTopic()
		if _, ok := s.ready[topic]; !ok {
			spec := topicSpec{partitions: 1, configs: map[string]string{"cleanup.policy": "compact"}}
			if err := s.ensureTopic(ctx, topic, spec); err != nil {
				return s.setFailure(&Error{Topic: topic, Op: "creating the schema history topic", Err: err})
			}
		}
		for _, r := range historyRecords(topic, s.opts.Replica, s.hist, s.opts.historyPartBytes(), s.histParts) {
			s.Records++
			s.send(ctx, r)
		}
		histHash, histParts = historyHash(s.hist), historyParts(len(s.hist), s.opts.historyPartBytes())
	}
	cp.SchemaHistory = histHash
	val, _ := json.Marshal(&cp)
	s.Records++
	s.send(ctx, &kgo.Record{Topic: s.opts.CheckpointTopic(), Key: []byte(s.opts.Replica), Value: val})
	if err := s.flushed(ctx); err != nil {
		return err
	}
	if err := s.failure(); err != nil {
		return err
	}
	// Never cancel an EndTxn half-way: its outcome would be unknown.
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.TransactionTimeout)
	defer cancel()
	if err := s.cl.EndTransaction(ectx, kgo.TryCommit); err != nil {
		return s.setFailure(&Error{Op: fmt.Sprintf("committing the transaction that ends at %s:%d", tx.Next.File, tx.Next.Offset), Err: err,
			Hint: "its outcome is unknown; restart: the run resumes from the last committed checkpoint, without loss or duplicates"})
	}
	s.inTxn = false
	s.pendingCP = nil
	s.lastCP = time.Now()
	s.cpGTID = [2]string{cp.LastGTID, cp.GTIDSet}
	s.hist, s.histHash, s.histParts = nil, histHash, histParts
	return nil
}

// Flush waits until every record produced so far is acknowledged, and
// returns the first delivery error, if any. After Close it returns Close's
// result. It is safe to call concurrently with Write.
func (s *Sink) Flush(ctx context.Context) error {
	s.mu.Lock()
	closed, closeErr := s.closed, s.closeErr
	s.mu.Unlock()
	if closed {
		return closeErr
	}
	if err := s.flushed(ctx); err != nil {
		return err
	}
	return s.failure()
}

// Rollback drops the open transaction. With ExactlyOnce, its records are
// aborted (read_committed consumers never see them). Otherwise records
// already produced cannot be taken back: they are delivered, and the
// transaction, sent again, is published twice (at-least-once).
func (s *Sink) Rollback(ctx context.Context) error {
	s.txRecords = 0
	s.held.reset()
	if !s.opts.ExactlyOnce || !s.inTxn {
		return nil
	}
	return s.abort(ctx)
}

func (s *Sink) abort(ctx context.Context) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.TransactionTimeout)
	defer cancel()
	err := s.cl.AbortBufferedRecords(actx)
	if err == nil {
		err = s.cl.EndTransaction(actx, kgo.TryAbort)
	}
	s.inTxn = false
	if err != nil {
		return s.setFailure(&Error{Op: "aborting a transaction", Err: err})
	}
	return nil
}

// Close waits (at most Options.CloseTimeout) for the records of committed
// transactions, drops those of an open one, and closes the client. With
// ExactlyOnce it first saves a resume point that is still pending.
func (s *Sink) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		defer s.mu.Unlock()
		return s.closeErr
	}
	s.mu.Unlock()
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.CloseTimeout)
	defer cancel()
	var err error
	if s.opts.ExactlyOnce {
		if s.inTxn {
			err = s.abort(cctx)
		}
		if err == nil && s.pendingCP != nil && s.failure() == nil {
			err = s.commitTxn(cctx, *s.pendingCP, "")
		}
	} else if ferr := s.flushed(cctx); ferr != nil {
		err = &Error{Op: "delivering the last records", Err: ferr,
			Hint: "the brokers did not acknowledge them in time; they may be published again after a restart"}
	}
	if ferr := s.failure(); ferr != nil {
		err = ferr
	}
	s.cl.Close()
	s.held.close()
	s.mu.Lock()
	s.closed, s.closeErr = true, err
	s.mu.Unlock()
	return err
}
