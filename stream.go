package binlogcdc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
)

// StreamOptions are the flags of 'binlogcdc stream'.
type StreamOptions struct {
	Conn               ConnOptions        // --source and its connection flags
	Tables, Exclude    []string           // --tables, --exclude-tables
	StartPosition      string             // --start-position
	StartGTID          string             // --start-gtid
	From               string             // --from
	Checkpoint         string             // --checkpoint
	CheckpointInterval time.Duration      // --checkpoint-interval
	DDL                bool               // --ddl
	Output             string             // --output
	Progress           bool               // --progress
	Heartbeat          time.Duration      // --heartbeat
	Replay             ReplayOptions      // --to, --format sql (replay.go)
	Kafka              KafkaOptions       // --to kafka://…, --kafka-* (kafka.go)
	Snapshot           SnapshotOptions    // --snapshot (snapshot.go)
	Incremental        IncrementalOptions // --signal-table (incremental.go)
	Metrics            MetricsOptions     // --metrics-addr, --health-window (metrics.go)
	CPUProfile         string             // debugging aids (profile.go)
	MemProfile         string             // --memprofile

	checked bool // CheckFlags passed
}

// AddFlags binds the flags to opts.
func (o *StreamOptions) AddFlags(f *pflag.FlagSet) {
	o.Conn.AddFlags(f)
	addProfileFlags(f, &o.CPUProfile, &o.MemProfile) // profile.go
	f.StringArrayVar(&o.Tables, "tables", nil, "only tables matching `db.table` (globs: shop.*, *.orders); repeatable")
	f.StringArrayVar(&o.Exclude, "exclude-tables", nil, "skip tables matching `db.table` (globs); repeatable")
	f.StringVar(&o.StartPosition, "start-position", "", "start at `FILE:POS`, the start of a transaction")
	f.StringVar(&o.StartGTID, "start-gtid", "", "start after the transactions in this GTID `SET` (MySQL uuid:1-100, MariaDB 0-1-100)")
	f.StringVar(&o.From, "from", "", "start `AT` now (the current end of the binlog) or earliest (the oldest binlog the server has)")
	f.StringVar(&o.Checkpoint, "checkpoint", "", "resume from and save progress to `FILE`; when it exists it wins over the start flags")
	f.DurationVar(&o.CheckpointInterval, "checkpoint-interval", 0, "save the checkpoint at most this often (0: after every transaction); a longer interval means more lines re-sent after a crash")
	// --ddl[=apply|skip]: bare --ddl emits DDL records in JSON; replay applies DDL unless --ddl=skip (replay.go).
	o.Replay.addDDLFlag(f, &o.DDL)
	f.StringVarP(&o.Output, "output", "o", "", "append to `FILE` instead of writing to stdout (fsynced before each checkpoint)")
	f.BoolVar(&o.Progress, "progress", false, "print a status line to stderr every few seconds (default: when stderr is a terminal)")
	f.DurationVar(&o.Heartbeat, "heartbeat", 10*time.Second, "server heartbeat period; no data for 3× this long counts as a network stall and reconnects")
	o.Replay.AddFlags(f, true)    // replay.go
	o.Kafka.AddFlags(f)           // kafka.go
	o.Snapshot.AddFlags(f, false) // snapshot.go
	o.Incremental.AddFlags(f)     // incremental.go
	o.Metrics.AddFlags(f)         // metrics.go
}

// CheckFlags checks the options as 'binlogcdc stream' does after parsing
// its flags (f: the flags that were set; nil when the options were set
// in code, as Run does), before anything connects or is written. It
// also settles what the flags imply (--to kafka://, replay's DDL
// default).
func (o *StreamOptions) CheckFlags(f *pflag.FlagSet) error {
	if o.checked {
		return nil
	}
	if err := o.Kafka.take(f, &o.Replay.To); err != nil { // kafka.go: claims --to kafka://…
		return err
	}
	if err := o.Replay.check(f, &o.DDL); err != nil { // replay.go
		return err
	}
	if err := checkStreamArgs(o); err != nil { // args.go
		return err
	}
	if err := o.checkSnapshotArgs(); err != nil { // snapshot.go
		return err
	}
	if err := o.Incremental.check(o); err != nil { // incremental.go
		return err
	}
	if err := o.Metrics.check(f); err != nil { // metrics.go
		return err
	}
	o.checked = true
	return nil
}

// Run streams until ctx ends, Stop is called (then it returns nil once
// the open transaction is delivered and the checkpoint saved), or an
// error: a handler's or sink's error, a local write failure, or a
// failure no reconnect can cure.
func (s *Stream) Run(ctx context.Context) (err error) {
	if err := s.Options.CheckFlags(nil); err != nil {
		return err
	}
	if err := s.checkDestination(); err != nil { // handler.go
		return err
	}
	ctx, cancel := s.runContext(ctx) // handler.go: Stop cancels it when idle
	defer cancel()
	o := s.Options
	stdout, stderr := s.Stdout, s.Log
	if stdout == nil {
		stdout = os.Stdout
	}
	if stderr == nil {
		stderr = io.Discard
	}
	cfg, err := o.Conn.LiveConfig(o.serverIDSeed())
	if err != nil {
		return err
	}
	if o.Heartbeat <= 0 {
		return UsageError{Msg: fmt.Sprintf("--heartbeat must be positive, not %v", o.Heartbeat), Hint: "--heartbeat 10s"}
	}
	// The server sends a heartbeat after this long without events, so a
	// read that waits 3× as long is a stalled network (a half-open TCP
	// connection never ends by itself). Without it DialLive's 10 s default
	// applied whatever the flag said. --maxwell-output-row-query needs
	// MariaDB's ANNOTATE_ROWS events, which it sends a replica only when
	// asked.
	cfg.Heartbeat, cfg.AnnotateRows = o.Heartbeat, o.Replay.Envelope.RowQuery
	// Check the start flags before connecting: a usage error is one
	// whether or not the server is up.
	var startPos change.Position
	if o.StartPosition != "" {
		if startPos, err = ParsePosition(o.StartPosition); err != nil {
			return UsageError{Msg: "--start-position: " + err.Error(), Hint: "--start-position binlog.000042:4"}
		}
	}
	if o.From != "" && o.From != "now" && o.From != "earliest" {
		return UsageError{Msg: "--from: want now or earliest, not " + o.From, Hint: "--from now"}
	}
	filter, err := pipeline.NewFilter(o.Tables, o.Exclude)
	if err != nil {
		return UsageError{Msg: err.Error(), Hint: "--tables shop.orders --tables 'shop.*'"}
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "binlogcdc: "+format+"\n", args...)
	}
	// One process per checkpoint, before connecting: a second one must
	// not knock the first off the server or write over its checkpoint.
	if o.Checkpoint != "" {
		unlock, err := checkpoint.Lock(o.Checkpoint)
		if err != nil {
			return err
		}
		defer unlock()
	}
	// -o's cut last line, before connecting (checked again when opened).
	if o.Output != "" {
		var cp *checkpoint.Checkpoint
		if o.Checkpoint != "" {
			if cp, err = checkpoint.Load(o.Checkpoint); err != nil {
				return err
			}
		}
		if err := checkpoint.CheckOutput(o.Output, cp); err != nil {
			return err
		}
	}
	mx, stopMetrics, err := o.Metrics.start(logf, o.CheckpointInterval) // metrics.go; nil: off
	if err != nil {
		return err
	}
	defer stopMetrics()

	// SIGINT/SIGTERM stop gracefully from here on, also while connecting
	// (exit 0, like a stop while streaming; a service manager stopping us
	// during startup is no failure): the follower finishes its open
	// transaction; anything else is cancelled.
	saver := &checkpoint.Saver{Path: o.Checkpoint, Interval: o.CheckpointInterval, Server: net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))}
	stopping := s.stopRequested.Load
	// cleanStop says whether err, the run's end, is a stop requested by
	// SIGINT/SIGTERM (exit 0) rather than a failure.
	cleanStop := func(err error) bool {
		return stopping() && (err == nil || errors.Is(err, context.Canceled) || ctx.Err() != nil)
	}
	defer func() {
		var we *checkpoint.WriteError
		if errors.As(err, &we) {
			// Fatal, stop or no stop: say where the checkpoint stands.
			logf("stopped: %s; free the space or fix the permissions, then restart to resume there", saver)
			return
		}
		if !cleanStop(err) {
			return
		}
		err = nil
		last := saver.Last()
		if o.Checkpoint != "" {
			last = saver.Held()
		}
		if last.File != "" {
			logf("stopped at %s:%d", last.File, last.Offset)
		} else {
			logf("stopped before the first transaction")
		}
	}()

	info, err := o.Conn.Preflight(ctx, &cfg) // dsn.go
	if err != nil {
		return err
	}
	saver.ServerID = info.ServerID
	logf("connected to %s at %s (%s %s, server_id %d), binlog_row_image=%s, as replica server_id %d",
		o.Conn.RedactedSource(), net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)), info.Flavor, info.Version, info.ServerID, info.RowImage, cfg.ServerID)
	if !strings.EqualFold(info.RowImage, "FULL") {
		logf("binlog_row_image is %s: row images lack some columns; they are omitted from before/after (never shown as null)", info.RowImage)
	}
	inc, err := o.Incremental.open(cfg, info, filter, o.Snapshot.Batch, logf) // incremental.go; nil: off
	if err != nil {
		return err
	}

	// Replay (--to, --format sql; replay.go): the target's checkpoint wins
	// over the start flags.
	rp, err := o.Replay.openReplay(ctx, logf)
	if err != nil {
		return err
	}
	// --to kafka://… (kafka.go): with --kafka-exactly-once the resume point
	// kept in Kafka wins over the start flags.
	enc, err := o.Replay.Envelope.encoder(o.Replay.Format, o.Kafka.sinkTopicPrefix()) // formats.go
	if err != nil {
		return err
	}
	o.Kafka.Format = enc
	ks, kcp, err := openKafkaSink(ctx, o.Kafka, net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)), logf)
	if err != nil {
		return err
	}
	if ks != nil {
		defer ks.Close(ctx) // a no-op after the Close below
	}

	// Where to start.
	hist, err := binlog.OpenHistory(ctx, cfg)
	if err != nil {
		return err
	}
	defer hist.Close()
	if saver.ServerUUID, err = hist.ServerUUID(ctx); err != nil {
		return err
	}
	o.noteServerTables(hist, filter, logf) // snapshot_tables.go
	sp, err := o.startPoint(ctx, startInputs{hist: hist, cfg: cfg, flavor: info.Flavor, filter: filter, rp: rp, kcp: kcp,
		server: saver.Server, startPos: startPos, logf: logf})
	if err != nil {
		return err
	}
	start, applyFrom, gtid, unknownXA := sp.start, sp.applyFrom, sp.gtid, sp.unknownXA
	snap, resumed, cov := sp.snap, sp.resumed, sp.cov
	var histCP *checkpoint.Checkpoint
	if o.Checkpoint != "" {
		histCP = resumed
	}
	schema, err := streamHistory(o.Checkpoint, histCP, cfg.Flavor == mysql.MariaDBFlavor, saver, logf) // schemahistory.go
	if err != nil {
		return err
	}
	histToTarget, err := targetHistory(&schema, rp.historyTarget()) // schemahistory.go
	if err != nil {
		return err
	}
	if histToTarget == nil {
		if histToTarget, err = kafkaHistory(&schema, ks, o.Kafka, logf); err != nil { // schemahistory.go
			return err
		}
	}
	snap.seedHistory(schema, logf) // schemahistory.go
	if histToTarget != nil && ks != nil {
		histToTarget() // the seeded history goes with Kafka's first resume point (SaveStart)
	}

	var out io.Writer = stdout
	if o.Output != "" {
		outFile, err := checkpoint.OpenOutput(o.Output, resumed, logf)
		if err != nil {
			return err
		}
		defer outFile.Close()
		out = outFile
		if o.Checkpoint != "" {
			saver.Output = outFile // synced, and its size kept, with each checkpoint
		}
	}
	// With a checkpoint, each transaction is flushed before it is saved;
	// without, output goes out when the source has nothing more at hand
	// (pipeline.Follower), so a catch-up writes in large blocks.
	var sk sink.Sink = jsonl.New(out, jsonl.Options{FlushEachCommit: o.Checkpoint != "", Sync: o.Output != "" && o.Checkpoint == "", Format: enc})
	// A target failure that no call returns ends the run (replay.go):
	// the follower, waiting for a quiet source, is cancelled, and the run
	// returns that failure.
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	// The GTID position at the start, saved with the first checkpoint of
	// every sink that keeps one (the file, the target's row, Kafka's resume
	// point): a restart before the first commit checks the checkpoint
	// against the server by it, as it does a transaction's GTID later.
	keepsCP := o.Checkpoint != "" || rp != nil && rp.applier != nil || ks != nil && o.Kafka.ExactlyOnce
	gtidAt := func(start change.Position) (string, error) {
		pos := gtid // --start-gtid, or the GTID position at the start position
		if start.File != "" && keepsCP {
			if state, ok, err := hist.GTIDPosAt(ctx, start.File, start.Offset); err != nil {
				return "", err
			} else if ok {
				pos = state
			}
		}
		return pos, nil
	}
	var applyFailed atomic.Pointer[error]
	stopRun := func(err error) { applyFailed.CompareAndSwap(nil, &err); cancelRun() }
	if rp != nil { // replay.go: apply to --to, or write SQL
		startGTID := ""
		if rp.applier != nil && rp.resume.File == "" {
			if startGTID, err = gtidAt(start); err != nil {
				return err
			}
		}
		if sk, err = rp.streamSink(out, start, startGTID, stopRun); err != nil {
			return err
		}
	}
	if ks != nil { // kafka.go
		sk = ks
	}
	switch { // a program's own destination (handler.go)
	case s.Sink != nil:
		sk = s.Sink
	case s.Handler != nil:
		sk = &handlerSink{h: s.Handler}
	}

	if ks != nil { // kafka.go: checkpoint only what the brokers acknowledged
		saver.BeforeSave = func() error { return ks.Flush(ctx) }
	}
	switch {
	case snap != nil && snap.state != nil: // snapshot.go: it saves its progress from the start
		if cov, err = snap.copy(ctx, sk, rp, &o, saver, gtidAt, stderr); err != nil {
			return err
		}
	case resumed != nil:
		if cov != nil {
			saver.SetSnapshot(resumed.Snapshot)
		}
		saver.Resume(resumed, start)
		if snap != nil {
			if _, err := snap.copy(ctx, sk, rp, &o, saver, gtidAt, stderr); err != nil {
				return err
			}
		}
	default:
		if snap != nil {
			if _, err := snap.copy(ctx, sk, rp, &o, saver, gtidAt, stderr); err != nil {
				return err
			}
		}
		pos, err := gtidAt(start)
		if err != nil {
			return err
		}
		if err := saver.Start(start, pos); err != nil {
			return err
		}
		if ks != nil && kcp == nil { // kafka.go: exactly-once keeps its start in Kafka
			if err := ks.SaveStart(ctx, start, pos); err != nil {
				return err
			}
		}
		if err := snap.saved(); err != nil { // snapshot.go
			return err
		}
	}
	hist.Close()
	if o.Snapshot.Only { // snapshot.go: the snapshot command ends here
		return finishSnapshot(ctx, snap, sk, saver, rp, stderr)
	}
	// One coverage for the stream: the window a resumed snapshot left (if
	// any), and the tables incremental snapshots re-read. The pipeline
	// reconciles every row change with it.
	if cov == nil {
		cov = pipeline.NewCoverage()
	}
	watchKafka(mx, ks)                                                        // metrics.go
	sk = o.Replay.Live.start(runCtx, sk, rp, cfg, &o, cov, mx, logf, stopRun) // verifyevery.go
	// replay.go, metrics.go
	onCommit := metricsOnCommit(mx, rp.onCommit(coverageOnCommit(cov, saver)), saver, rp.targetSink()) // snapshot.go: coverageOnCommit
	// incremental.go: --signal-table, --snapshot-new-tables
	if sk, err = o.wrapIncremental(ctx, inc, cov, sk, start, rp, resumed, saver, onCommit, logf); err != nil {
		return err
	}
	fl := &pipeline.Follower{
		Dial: func(ctx context.Context, from change.Position) (binlog.Source, error) {
			return binlog.DialLive(ctx, cfg, from, gtid)
		},
		Sink: sk,
		Options: pipeline.Options{Filter: filter, DDL: o.DDL, Accounts: o.Replay.Accounts, Replaying: rp != nil, Logf: warnf(stderr), Metrics: mx,
			RowQuery: cfg.AnnotateRows, OnCommit: onCommit, Coverage: cov, ApplyFrom: applyFrom, UnknownXA: unknownXA, Schema: schema,
			BeforeCommit: histToTarget, DDLSplit: ddlSplit(o.Replay.Format)},
		Retryable: retryable,
		Logf:      logf,
	}
	var stopProgress func()
	if o.Progress || isTerminal(stderr) {
		stopProgress = startStreamProgress(ctx, stderr, fl, saver)
	}
	s.running.Store(fl)
	defer s.running.Store(nil)
	if stopping() {
		fl.RequestStop() // requested before there was a follower
	}
	err = fl.Run(runCtx, start)
	if failed := applyFailed.Load(); failed != nil {
		err = *failed
	}
	if stopProgress != nil {
		stopProgress()
	}
	warnUnmatchedIn(stderr, filter, "on the server or in the binlog read")
	// The last writes and save; a local write failure wins over a stop.
	var we *checkpoint.WriteError
	if cerr := sk.Close(ctx); cerr != nil && (err == nil || errors.As(cerr, &we)) {
		err = cerr
	}
	if serr := saver.Flush(); serr != nil && (err == nil || errors.As(serr, &we)) {
		err = serr
	}
	if rp != nil {
		rp.summary(stderr, err != nil && (!cleanStop(err) || errors.As(err, &we))) // replay.go
	}
	return err
}

// serverIDSeed makes the derived replica server_id stable across
// restarts of one stream and different between streams that may run at
// once from this host: two with the same id knock each other off the
// server. A checkpoint file (absolute path, locked) or a replay target
// and replica name (locked on the target) names one stream; without
// either, each process is its own stream.
func (o *StreamOptions) serverIDSeed() string {
	switch {
	case o.Checkpoint != "":
		if abs, err := filepath.Abs(o.Checkpoint); err == nil {
			return "checkpoint " + abs
		}
	case o.Replay.To != "":
		if u, err := url.Parse(o.Replay.To); err == nil {
			return "to " + u.Host + " replica " + o.Replay.ReplicaName
		}
	case o.Kafka.To != "" && o.Kafka.ExactlyOnce:
		return "kafka " + o.Kafka.To + " replica " + o.Kafka.Replica
	}
	return "pid " + strconv.Itoa(os.Getpid())
}

// retryable says which errors from a live source are worth a reconnect.
func retryable(err error) bool {
	if isKafkaError(err) { // kafka.go: publishing failed; the source is fine
		return false
	}
	var pe *binlog.PreflightError
	if errors.As(err, &pe) {
		return false
	}
	var me *mysql.MyError
	if errors.As(err, &me) {
		switch me.Code {
		case mysql.ER_ACCESS_DENIED_ERROR, mysql.ER_SPECIFIC_ACCESS_DENIED_ERROR, 1236:
			return false
		}
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "connection") || strings.Contains(err.Error(), "timeout")
}

// startStreamProgress prints position, lag and rate every 5 seconds.
func startStreamProgress(ctx context.Context, w io.Writer, fl *pipeline.Follower, s *checkpoint.Saver) func() {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		var lastRows uint64
		lastAt := time.Now()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case now := <-t.C:
				st := fl.Progress()
				lag := "-"
				if ts := s.LastTime(); !ts.IsZero() {
					lag = fmt.Sprintf("%.0fs", now.Sub(ts).Seconds())
				}
				rate := float64(st.Rows-lastRows) / now.Sub(lastAt).Seconds()
				lastRows, lastAt = st.Rows, now
				fmt.Fprintf(w, "binlogcdc: at %s:%d  lag %s  %.0f rows/s  %d rows in %d transactions\n",
					st.Last.File, st.Last.Offset, lag, rate, st.Rows, st.Transactions)
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}
