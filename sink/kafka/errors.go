package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/binlogcdc/binlogcdc/change"
)

// Error is a failure to publish. When it concerns a change, it names the
// table and the change's binlog position.
type Error struct {
	Op        string // what was being done, when no single record failed
	Topic     string
	DB, Table string // the change's table ("" for DDL records and checkpoints)
	HasPos    bool
	Pos       change.Position
	Row       int
	Err       error
	Hint      string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("kafka: ")
	if e.Table != "" {
		fmt.Fprintf(&b, "table %s.%s ", e.DB, e.Table)
	}
	if e.HasPos {
		fmt.Fprintf(&b, "at %s:%d row %d", e.Pos.File, e.Pos.Offset, e.Row)
	}
	if e.Table != "" || e.HasPos {
		b.WriteString(": ")
	}
	if e.Topic != "" {
		fmt.Fprintf(&b, "topic %s: ", e.Topic)
	}
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	if e.Hint != "" {
		b.WriteString(" (hint: ")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// recordError describes the failure of record r: its table and position
// come from its value and headers.
func recordError(r *kgo.Record, err error) *Error {
	e := &Error{Topic: r.Topic, Err: err}
	for _, h := range r.Headers {
		switch h.Key {
		case HeaderFile:
			e.Pos.File, e.HasPos = string(h.Value), true
		case HeaderOffset:
			e.Pos.Offset, _ = strconv.ParseUint(string(h.Value), 10, 64)
		case HeaderRow:
			e.Row, _ = strconv.Atoi(string(h.Value))
		}
	}
	if r.Value != nil && e.HasPos {
		var v struct{ DB, Table string }
		if json.Unmarshal(r.Value, &v) == nil {
			e.DB, e.Table = v.DB, v.Table
		}
	}
	size := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		size += len(h.Key) + len(h.Value)
	}
	history := false
	for _, h := range r.Headers {
		history = history || h.Key == HeaderHistoryParts
	}
	switch {
	case history && (errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)):
		e.Op = fmt.Sprintf("writing part %s of the schema history", r.Key)
		e.Hint = fmt.Sprintf("the record is %d bytes: the schema history is cut into parts of --kafka-max-message-bytes; set it at most the topic's max.message.bytes", size)
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge):
		e.Hint = fmt.Sprintf("the record is %d bytes; raise the topic's max.message.bytes (the broker's message.max.bytes) and --kafka-max-message-bytes, or leave the table out with --exclude-tables", size)
	case errors.Is(err, kerr.TopicAuthorizationFailed):
		e.Hint = "the Kafka user may not write to this topic: grant it WRITE"
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.UnknownTopicID):
		e.Hint = "the topic does not exist (was it deleted?)"
	case errors.Is(err, kgo.ErrRecordTimeout), errors.Is(err, kgo.ErrRecordRetries):
		e.Hint = "the brokers did not take it within --kafka-delivery-timeout; nothing after it is checkpointed, so a restart publishes it again"
	case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch), errors.Is(err, kerr.TransactionalIDAuthorizationFailed):
		e.Hint = fencedHint
	}
	return e
}

const fencedHint = "another publisher with the same --kafka-replica-name took over, or the Kafka transaction outlived --kafka-transaction-timeout"

// transient reports errors worth retrying: the brokers are unreachable or
// busy. Errors that a retry cannot fix (authorization, bad certificates,
// invalid requests) are not.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable
	}
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var cv *tls.CertificateVerificationError
	var rh tls.RecordHeaderError
	if errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) || errors.As(err, &cv) || errors.As(err, &rh) {
		return false
	}
	return !errors.Is(err, kgo.ErrClientClosed)
}

// outageLog reports broker outages and recoveries, at most every
// logEvery for the same kind of message. It is the client's connection
// hook.
type outageLog struct {
	logf func(format string, args ...any)

	mu      sync.Mutex
	down    bool
	lastLog time.Time
}

const logEvery = 5 * time.Second

var _ kgo.HookBrokerConnect = (*outageLog)(nil)

func (l *outageLog) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if l.logf == nil {
		return
	}
	addr := net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		if !l.down || time.Since(l.lastLog) >= logEvery {
			hint := ""
			if errors.Is(err, io.EOF) {
				hint = " (the broker closed the connection: are the --kafka-sasl-* settings right? does it want --kafka-tls?)"
			}
			l.logf("kafka: cannot connect to broker %s: %v%s; retrying (nothing is dropped: reading waits while the buffer is full)", addr, err, hint)
			l.lastLog = time.Now()
		}
		l.down = true
		return
	}
	if l.down {
		l.logf("kafka: connected to broker %s", addr)
		l.down = false
	}
}

// retrying reports a request that will be tried again.
func (l *outageLog) retrying(what string, err error, wait time.Duration) {
	if l.logf == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.lastLog) >= logEvery {
		l.logf("kafka: %s: %v; retrying in %v", what, err, wait.Round(time.Millisecond))
		l.lastLog = time.Now()
	}
}

// retry calls fn until it succeeds, fails for good (see transient), ctx
// ends, or Options.DeliveryTimeout has passed; with backoff.
func (s *Sink) retry(ctx context.Context, what string, fn func(context.Context) error) error {
	start := time.Now()
	wait := 200 * time.Millisecond
	for {
		fctx, cancel := ctx, context.CancelFunc(func() {})
		if s.opts.DeliveryTimeout > 0 {
			fctx, cancel = context.WithDeadline(ctx, start.Add(s.opts.DeliveryTimeout))
		}
		err := fn(fctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		giveUp := s.opts.DeliveryTimeout > 0 && time.Since(start)+wait > s.opts.DeliveryTimeout
		if giveUp && (transient(err) || errors.Is(err, context.DeadlineExceeded)) {
			return fmt.Errorf("gave up after %v (--kafka-delivery-timeout): %w", time.Since(start).Round(time.Millisecond), err)
		}
		if !transient(err) {
			return err
		}
		s.retries.Add(1)
		s.log.retrying(what, err, wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}
