package binlogcdc

import (
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/internal/metrics"
	"github.com/binlogcdc/binlogcdc/sink/kafka"
	mysqlsink "github.com/binlogcdc/binlogcdc/sink/mysql"
)

// MetricsOptions are --metrics-addr and --health-window (stream, read).
type MetricsOptions struct {
	Addr         string        // --metrics-addr
	HealthWindow time.Duration // --health-window
}

// AddFlags binds the flags.
func (o *MetricsOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Addr, "metrics-addr", "", "serve Prometheus metrics on http://`HOST:PORT`/metrics and a health check on /healthz (see docs/operations.md)")
	f.DurationVar(&o.HealthWindow, "health-window", time.Minute, "/healthz fails when the source has been unreachable this long, or transactions have waited this long (plus --checkpoint-interval) for the checkpoint to advance")
}

// check checks the flags before anything starts.
func (o *MetricsOptions) check(f *pflag.FlagSet) error {
	if o.Addr == "" {
		if flagChanged(f, "health-window") {
			return UsageError{Msg: "--health-window needs --metrics-addr", Hint: "--metrics-addr 127.0.0.1:9187"}
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return UsageError{Msg: fmt.Sprintf("--metrics-addr %q is not HOST:PORT", o.Addr), Hint: "--metrics-addr 127.0.0.1:9187 (or :9187 for every interface)"}
	}
	if o.HealthWindow <= 0 {
		return UsageError{Msg: fmt.Sprintf("--health-window must be positive, not %v", o.HealthWindow), Hint: "--health-window 1m"}
	}
	return nil
}

// start serves the metrics when --metrics-addr is given; stall is the
// checkpoint interval, added to the health window for the checkpoint
// check. It returns nil (metrics off: every call on it does nothing) and
// a no-op stop otherwise.
func (o *MetricsOptions) start(logf func(string, ...any), stall time.Duration) (*metrics.Stream, func(), error) {
	if o.Addr == "" {
		return nil, func() {}, nil
	}
	m := metrics.New()
	srv, err := metrics.Serve(o.Addr, m, o.HealthWindow, o.HealthWindow+stall)
	if err != nil {
		return nil, nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	logf("serving metrics on http://%s/metrics and health on /healthz", srv.Addr())
	return m, func() { srv.Close() }, nil
}

// watchKafka reports the Kafka sink's buffered records and retries.
func watchKafka(m *metrics.Stream, ks *kafka.Sink) {
	if m != nil && ks != nil {
		m.SetBuffered(ks.Buffered)
		m.SetRetries(ks.Retries)
	}
}

// metricsOnCommit tells m where the checkpoint stands: a replay
// target's, as committed on the target (asked at each scrape: the target
// commits groups on its own); else, through the returned OnCommit that
// wraps next, the checkpoint file's position when it is saved after every
// transaction, or where the committed transactions end (a
// --checkpoint-interval's saves lag behind by design; Kafka with
// --kafka-exactly-once keeps its with each transaction).
func metricsOnCommit(m *metrics.Stream, next func(change.TxEnd) error, saver *checkpoint.Saver, target *mysqlsink.Sink) func(change.TxEnd) error {
	if m == nil {
		return next
	}
	if target != nil {
		m.SetCheckpointFunc(target.Saved)
		return next
	}
	return func(tx change.TxEnd) error {
		if next != nil {
			if err := next(tx); err != nil {
				return err
			}
		}
		if saver != nil && saver.Path != "" && saver.Interval == 0 {
			m.Checkpoint(saver.Held())
		} else {
			m.Checkpoint(tx.Next)
		}
		return nil
	}
}
