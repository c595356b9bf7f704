package main

import (
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/internal/metrics"
	"github.com/binlogcdc/binlogcdc/sink/kafka"
)

// MetricsOptions are --metrics-addr and --health-window (stream, read).
type MetricsOptions struct {
	Addr         string
	HealthWindow time.Duration
}

// AddFlags binds the flags.
func (o *MetricsOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Addr, "metrics-addr", "", "serve Prometheus metrics on http://`HOST:PORT`/metrics and a health check on /healthz (see the README, \"Metrics\")")
	f.DurationVar(&o.HealthWindow, "health-window", time.Minute, "/healthz fails when the source has been unreachable this long, or transactions have waited this long (plus --checkpoint-interval) for the checkpoint to advance")
}

// check checks the flags before anything starts.
func (o *MetricsOptions) check(f *pflag.FlagSet) error {
	if o.Addr == "" {
		if f.Changed("health-window") {
			return usageError{msg: "--health-window needs --metrics-addr", hint: "--metrics-addr 127.0.0.1:9187"}
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return usageError{msg: fmt.Sprintf("--metrics-addr %q is not HOST:PORT", o.Addr), hint: "--metrics-addr 127.0.0.1:9187 (or :9187 for every interface)"}
	}
	if o.HealthWindow <= 0 {
		return usageError{msg: fmt.Sprintf("--health-window must be positive, not %v", o.HealthWindow), hint: "--health-window 1m"}
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

// metricsOnCommit wraps a pipeline's OnCommit so that m learns where the
// checkpoint stands after each commit: the checkpoint file's position
// when there is one (saved at most every --checkpoint-interval), else
// where the committed transactions end (the replay target and Kafka keep
// theirs with the data).
func metricsOnCommit(m *metrics.Stream, next func(change.TxEnd) error, saver *checkpoint.Saver) func(change.TxEnd) error {
	if m == nil {
		return next
	}
	return func(tx change.TxEnd) error {
		if next != nil {
			if err := next(tx); err != nil {
				return err
			}
		}
		if saver != nil && saver.Path != "" {
			m.Checkpoint(saver.Held())
		} else {
			m.Checkpoint(tx.Next)
		}
		return nil
	}
}
