package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server serves /metrics (Prometheus' text format) and /healthz.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Serve listens on addr (HOST:PORT; port 0 picks a free one) and serves
// s's metrics, the Go runtime's and the process's on /metrics, and on
// /healthz 200 "ok" or 503 with the reason (Stream.Health with window
// and stall).
func Serve(addr string, s *Stream, window, stall time.Duration) (*Server, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(&collector{s: s}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := s.Health(window, stall); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, err)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	hs := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln, done: make(chan struct{})}
	go func() {
		defer close(hs.done)
		if err := hs.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener failed: nothing to serve on any more
		}
	}()
	return hs, nil
}

// Addr is the address served on.
func (h *Server) Addr() string { return h.ln.Addr().String() }

// Close stops serving.
func (h *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := h.srv.Shutdown(ctx)
	<-h.done
	return err
}

var (
	descRows         = prometheus.NewDesc("binlogcdc_rows_total", "Row changes delivered to the sink in committed transactions, by op.", []string{"op"}, nil)
	descDDL          = prometheus.NewDesc("binlogcdc_ddl_total", "DDL statements delivered to the sink.", nil, nil)
	descTransactions = prometheus.NewDesc("binlogcdc_transactions_total", "Source transactions with at least one change delivered to the sink, committed there (transactions whose changes were all filtered out are not counted).", nil, nil)
	descSourceTx     = prometheus.NewDesc("binlogcdc_source_transactions_total", "Source transactions read to their commit, whether or not any of their changes passed the filters.", nil, nil)
	descEvents       = prometheus.NewDesc("binlogcdc_events_total", "Binlog events read from the source.", nil, nil)
	descBytes        = prometheus.NewDesc("binlogcdc_read_bytes_total", "Bytes of binlog events read from the source.", nil, nil)
	descReconnects   = prometheus.NewDesc("binlogcdc_reconnects_total", "Attempts to connect to the source again after it was lost.", nil, nil)
	descConnected    = prometheus.NewDesc("binlogcdc_source_connected", "1 while connected to the source, 0 while not.", nil, nil)
	descLag          = prometheus.NewDesc("binlogcdc_source_lag_seconds", "How far behind the source the last delivered transaction was: the time from its commit at the source to its commit in the sink; 0 once the source says it has nothing more to send (a heartbeat).", nil, nil)
	descLastCommit   = prometheus.NewDesc("binlogcdc_last_commit_timestamp_seconds", "Source commit time of the last delivered transaction (Unix time); 0 until this process delivered one.", nil, nil)
	descCPAge        = prometheus.NewDesc("binlogcdc_checkpoint_age_seconds", "Seconds since the checkpoint last advanced.", nil, nil)
	descSinkErrors   = prometheus.NewDesc("binlogcdc_sink_errors_total", "Failed writes to the sink (target server, Kafka, output file).", nil, nil)
	descRetries      = prometheus.NewDesc("binlogcdc_sink_retries_total", "Transient errors of the sink that were retried (Kafka brokers unreachable or not ready).", nil, nil)
	descBuffered     = prometheus.NewDesc("binlogcdc_sink_buffered_records", "Records handed to Kafka and not acknowledged yet.", nil, nil)
	descVerifyRuns   = prometheus.NewDesc("binlogcdc_verify_runs_total", "Live verification passes that compared the target with the source to the end (--verify-every).", nil, nil)
	descVerifyDiffs  = prometheus.NewDesc("binlogcdc_verify_differences_total", "Tables found differing between the source and the target, summed over the verification passes.", nil, nil)
	descVerifyErrors = prometheus.NewDesc("binlogcdc_verify_errors_total", "Live verification passes that could not compare (a server unreachable, a query refused).", nil, nil)
	descVerifyLastOK = prometheus.NewDesc("binlogcdc_verify_last_success_timestamp_seconds", "When the last verification pass that found every table equal ended (Unix time); 0 until one did.", nil, nil)
	descVerifyChunks = prometheus.NewDesc("binlogcdc_verify_chunks_total", "Chunks (key ranges of --verify-chunk-rows rows, or whole tables) compared by the live verification, each in its own pair of snapshots.", nil, nil)
	descVerifyPause  = prometheus.NewDesc("binlogcdc_verify_applier_pause_max_seconds", "The longest time the applier was held for one chunk's snapshots in the last verification pass.", nil, nil)
	descVerifyUnver  = prometheus.NewDesc("binlogcdc_verify_unverified_tables", "Tables the last verification pass could not verify: not transactional (MyISAM, Aria...), so no snapshot covers them.", nil, nil)
)

var opLabels = [...]string{"insert", "update", "delete"}

// collector reads a Stream's counters at each scrape.
type collector struct{ s *Stream }

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRows, descDDL, descTransactions, descSourceTx, descEvents, descBytes, descReconnects,
		descConnected, descLag, descLastCommit, descCPAge, descSinkErrors, descRetries, descBuffered,
		descVerifyRuns, descVerifyDiffs, descVerifyErrors, descVerifyLastOK, descVerifyChunks, descVerifyPause, descVerifyUnver} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v)
	}
	for i, op := range opLabels {
		counter(descRows, s.rows[i].Load(), op)
	}
	counter(descDDL, s.rows[3].Load())
	counter(descTransactions, s.transactions.Load())
	counter(descSourceTx, s.sourceTx.Load())
	counter(descEvents, s.events.Load())
	counter(descBytes, s.bytes.Load())
	counter(descReconnects, s.reconnects.Load())
	counter(descSinkErrors, s.sinkErrors.Load())
	connected := 0.0
	if s.connected.Load() {
		connected = 1
	}
	gauge(descConnected, connected)
	gauge(descLag, time.Duration(s.lagNanos.Load()).Seconds())
	gauge(descLastCommit, float64(s.lastCommitTS.Load())/1e9) // 0 until the first one
	cpAt, _ := s.checkpointState()
	gauge(descCPAge, s.clock().Sub(cpAt).Seconds())
	if s.verify.on.Load() { // verify.go: stream --verify-every
		counter(descVerifyRuns, s.verify.runs.Load())
		counter(descVerifyDiffs, s.verify.differences.Load())
		counter(descVerifyErrors, s.verify.errors.Load())
		gauge(descVerifyLastOK, s.verifyLastOK())
		counter(descVerifyChunks, s.verify.chunks.Load())
		gauge(descVerifyPause, time.Duration(s.verify.pauseMax.Load()).Seconds())
		gauge(descVerifyUnver, float64(s.verify.unverified.Load()))
	}
	if f := s.retriesFunc.Load(); f != nil {
		counter(descRetries, (*f)())
	}
	if f := s.bufferedFunc.Load(); f != nil {
		gauge(descBuffered, float64((*f)()))
	}
}
