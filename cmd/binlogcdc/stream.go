package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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
	Conn               ConnOptions
	Tables, Exclude    []string
	StartPosition      string
	StartGTID          string
	From               string
	Checkpoint         string
	CheckpointInterval time.Duration
	DDL                bool
	Output             string
	Progress           bool
	Heartbeat          time.Duration
	Replay             ReplayOptions // --to, --format sql (replay.go)
	Kafka              KafkaOptions  // --to kafka://…, --kafka-* (kafka.go)
}

// AddFlags binds the flags to opts.
func (o *StreamOptions) AddFlags(f *pflag.FlagSet) {
	o.Conn.AddFlags(f)
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
	o.Replay.AddFlags(f, true) // replay.go
	o.Kafka.AddFlags(f)        // kafka.go
}

const streamUsage = `Usage: binlogcdc stream --source mysql://user@host:port [flags]

Connects to a MySQL or MariaDB server as a replica and prints the same JSON
lines as 'read', as transactions commit, until stopped (SIGINT/SIGTERM:
finishes the current transaction, saves the checkpoint, exits 0).

Start point, first that applies: the --checkpoint file when it exists,
--start-position, --start-gtid, --from now|earliest. Without any, --from now.

Delivery: at-least-once. A transaction's lines are written and flushed
before its checkpoint is saved; if the process dies between the two, that
transaction is printed again after a restart. Deduplicate on
(pos.file, pos.offset, pos.row), or on gtid.

The server needs binlog_format=ROW and binlog_row_metadata=FULL, and the
user REPLICATION SLAVE plus REPLICATION CLIENT (MariaDB: BINLOG MONITOR).

With --to mysql://…, the changes are applied to that server instead,
exactly once: it keeps its position in its binlogcdc.checkpoint table,
which wins over the start flags (see the README, "Replay").

Flags:
`

func runStreamArgs(ctx context.Context, args []string, stdout, stderr io.Writer, sig *signals) error {
	var o StreamOptions
	f, err := parseFlags("stream", streamUsage, args, stderr, o.AddFlags)
	if err != nil {
		return err
	}
	if f.NArg() > 0 {
		return usageError{msg: "stream takes no arguments", hint: "to read files, use 'binlogcdc read FILE...'"}
	}
	if err := o.Kafka.take(f, &o.Replay.To); err != nil { // kafka.go: claims --to kafka://…
		return err
	}
	if err := o.Replay.check(f, &o.DDL); err != nil { // replay.go
		return err
	}
	if err := checkStreamArgs(&o); err != nil { // args.go
		return err
	}
	return runStream(ctx, o, stdout, stderr, sig)
}

func runStream(ctx context.Context, o StreamOptions, stdout, stderr io.Writer, sig *signals) (err error) {
	cfg, err := o.Conn.liveConfig(o.Checkpoint)
	if err != nil {
		return err
	}
	if o.Heartbeat <= 0 {
		return usageError{msg: fmt.Sprintf("--heartbeat must be positive, not %v", o.Heartbeat), hint: "--heartbeat 10s"}
	}
	// The server sends a heartbeat after this long without events, so a
	// read that waits 3× as long is a stalled network (a half-open TCP
	// connection never ends by itself). Without it DialLive's 10 s default
	// applied whatever the flag said.
	cfg.Heartbeat = o.Heartbeat
	// Check the start flags before connecting: a usage error is one
	// whether or not the server is up.
	var startPos change.Position
	if o.StartPosition != "" {
		if startPos, err = parsePosition(o.StartPosition); err != nil {
			return usageError{msg: "--start-position: " + err.Error(), hint: "--start-position binlog.000042:4"}
		}
	}
	if o.From != "" && o.From != "now" && o.From != "earliest" {
		return usageError{msg: "--from: want now or earliest, not " + o.From, hint: "--from now"}
	}
	filter, err := pipeline.NewFilter(o.Tables, o.Exclude)
	if err != nil {
		return usageError{msg: err.Error(), hint: "--tables shop.orders --tables 'shop.*'"}
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "binlogcdc: "+format+"\n", args...)
	}

	// SIGINT/SIGTERM stop gracefully from here on, also while connecting
	// (exit 0, like a stop while streaming; a service manager stopping us
	// during startup is no failure): the follower finishes its open
	// transaction; anything else is cancelled.
	var running atomic.Pointer[pipeline.Follower]
	var saver *checkpointSaver
	stopping := sig.onStop(func() {
		if fl := running.Load(); fl != nil {
			fl.RequestStop()
		}
	}, func() bool {
		fl := running.Load()
		return fl != nil && fl.InTransaction()
	})
	defer func() {
		if !stopping() || (err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil) {
			return
		}
		err = nil
		if last := saver.last(); last.File != "" {
			logf("stopped at %s:%d", last.File, last.Offset)
		} else {
			logf("stopped before the first transaction")
		}
	}()

	if strings.EqualFold(o.Conn.SSLMode, "preferred") && cfg.TLS != nil {
		if conn, err := binlog.Connect(ctx, cfg); err != nil && strings.Contains(err.Error(), "does not support TLS") {
			cfg.TLS = nil
		} else if err == nil {
			conn.Close()
		}
	}
	info, err := binlog.Preflight(ctx, cfg)
	if err != nil {
		return err
	}
	cfg.Flavor = info.Flavor
	logf("connected to %s (%s %s, server_id %d), binlog_row_image=%s, as replica server_id %d",
		o.Conn.redactedSource(), info.Flavor, info.Version, info.ServerID, info.RowImage, cfg.ServerID)
	if !strings.EqualFold(info.RowImage, "FULL") {
		logf("binlog_row_image is %s: row images lack some columns; they are omitted from before/after (never shown as null)", info.RowImage)
	}

	// Replay (--to, --format sql; replay.go): the target's checkpoint wins
	// over the start flags.
	rp, err := o.Replay.openReplay(ctx, logf)
	if err != nil {
		return err
	}
	replayStart, err := rp.streamStart(ctx, cfg, logf)
	if err != nil {
		return err
	}
	// --to kafka://… (kafka.go): with --kafka-exactly-once the resume point
	// kept in Kafka wins over the start flags.
	ks, kcp, err := openKafkaSink(ctx, o.Kafka, net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)), logf)
	if err != nil {
		return err
	}
	if ks != nil {
		defer ks.Close(ctx) // a no-op after the Close below
	}

	// Where to start.
	var start change.Position
	gtid := ""
	var cp *checkpoint.Checkpoint
	if o.Checkpoint != "" {
		if cp, err = checkpoint.Load(o.Checkpoint); err != nil {
			return err
		}
	}
	switch {
	case replayStart.File != "": // replay.go: the target's checkpoint
		start = replayStart
	case kcp != nil: // kafka.go: the resume point kept in Kafka
		if start, err = kafkaStart(ctx, cfg, kcp); err != nil {
			return err
		}
	case cp != nil:
		start = cp.Position()
		ok, err := binlog.BinlogExists(ctx, cfg, start.File)
		if err != nil {
			return err
		}
		if !ok {
			next, state, err := resumeAfterPurge(ctx, cfg, cp)
			if err != nil {
				return err
			}
			if next.File == "" {
				return &binlog.PreflightError{Problem: fmt.Sprintf("the checkpoint in %s resumes at %s:%d, but the server no longer has %s", o.Checkpoint, start.File, start.Offset, start.File),
					Hint: "it was purged: the changes since the checkpoint are gone from the server. Rebuild from a fresh snapshot and restart with --from now (after moving the checkpoint away), or use --from earliest to accept the gap"}
			}
			logf("the server no longer has %s, but lost nothing after the checkpoint: its oldest binlog %s starts at GTID state %s, which the checkpoint's %s covers",
				start.File, next.File, state, cp.GTIDSet)
			start = next
		}
		logf("resuming from checkpoint %s at %s:%d", o.Checkpoint, start.File, start.Offset)
	case o.StartPosition != "":
		start = startPos
	case o.StartGTID != "":
		gtid = o.StartGTID
	case o.From == "" || o.From == "now":
		if start, err = binlog.CurrentPosition(ctx, cfg); err != nil {
			return err
		}
	default: // earliest
		if start, err = binlog.EarliestPosition(ctx, cfg); err != nil {
			return err
		}
	}

	var out io.Writer = stdout
	var outFile *os.File
	if o.Output != "" {
		if outFile, err = os.OpenFile(o.Output, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err != nil {
			return err
		}
		defer outFile.Close()
		out = outFile
	}
	var sk sink.Sink = jsonl.New(out, jsonl.Options{FlushEachCommit: true, Sync: outFile != nil})
	if rp != nil { // replay.go: apply to --to, or write SQL
		if sk, err = rp.streamSink(out, start); err != nil {
			return err
		}
	}
	if ks != nil { // kafka.go
		sk = ks
	}

	saver = &checkpointSaver{path: o.Checkpoint, interval: o.CheckpointInterval, server: net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))}
	if ks != nil { // kafka.go: checkpoint only what the brokers acknowledged
		saver.beforeSave = func() error { return ks.Flush(ctx) }
	}
	saver.lastTx.Next = start
	if cp != nil {
		saver.gtids = parseMariaGTIDs(cp.GTIDSet)
		saver.lastTx.GTID = cp.LastGTID
	} else if start.File != "" {
		// Save the start point before any transaction: --from now is
		// resolved once, so a stop (or a crash) before the first commit
		// would otherwise make the next run resolve "now" again and skip
		// what was committed in between.
		saver.pending = &checkpoint.Checkpoint{File: start.File, Offset: start.Offset, Server: saver.server}
		if err := saver.flush(); err != nil {
			return err
		}
	}
	fl := &pipeline.Follower{
		Dial: func(ctx context.Context, from change.Position) (binlog.Source, error) {
			return binlog.DialLive(ctx, cfg, from, gtid)
		},
		Sink:      sk,
		Options:   pipeline.Options{Filter: filter, DDL: o.DDL, OnCommit: rp.onCommit(saver.commit), Logf: warnf(stderr)}, // replay.go
		Retryable: retryable,
		Logf:      logf,
	}
	var stopProgress func()
	if o.Progress || isTerminal(stderr) {
		stopProgress = startStreamProgress(ctx, stderr, fl, saver)
	}
	running.Store(fl)
	if stopping() {
		fl.RequestStop() // requested before there was a follower
	}
	err = fl.Run(ctx, start)
	if stopProgress != nil {
		stopProgress()
	}
	warnUnmatched(stderr, filter)
	if cerr := sk.Close(ctx); cerr != nil && err == nil {
		err = cerr
	}
	if serr := saver.flush(); serr != nil && err == nil {
		err = serr
	}
	if rp != nil {
		rp.summary(stderr) // replay.go
	}
	return err
}

// resumeAfterPurge is asked when the checkpoint's binlog is gone from the
// server. That loses nothing when no transaction came between the
// checkpoint and the oldest binlog left, which happens to an idle stream:
// its checkpoint moves only at commits, so it stays at the end of a file
// the server rotated away from (FLUSH LOGS, a restart) and may then purge.
// MariaDB tells the GTID state at the start of a binlog; when the
// checkpoint's GTID set covers it, the oldest binlog is where to resume.
// Otherwise (or on MySQL) it returns a zero position.
func resumeAfterPurge(ctx context.Context, cfg binlog.LiveConfig, cp *checkpoint.Checkpoint) (change.Position, string, error) {
	if cfg.Flavor != "mariadb" || cp.GTIDSet == "" {
		return change.Position{}, "", nil
	}
	oldest, err := binlog.EarliestPosition(ctx, cfg)
	if err != nil {
		return change.Position{}, "", err
	}
	// Only a later file of the same binlog (same base name; the numeric
	// suffixes have a fixed width, so names sort like numbers).
	base, _, _ := strings.Cut(oldest.File, ".")
	cpBase, _, _ := strings.Cut(cp.File, ".")
	if base != cpBase || oldest.File <= cp.File {
		return change.Position{}, "", nil
	}
	state, ok, err := binlog.GTIDStateAt(ctx, cfg, oldest.File)
	if err != nil || !ok || !gtidsCover(cp.GTIDSet, state) {
		return change.Position{}, "", err
	}
	return oldest, state, nil
}

// gtidsCover reports whether the MariaDB GTID set have includes, in every
// domain of need, a sequence number at least as high. An empty need (no
// transaction ever came before) is not covered: the checkpoint's own
// transactions would have to be there.
func gtidsCover(have, need string) bool {
	if strings.TrimSpace(need) == "" {
		return false
	}
	seq := func(g string) (domain uint32, n uint64, ok bool) {
		var server uint32
		_, err := fmt.Sscanf(strings.TrimSpace(g), "%d-%d-%d", &domain, &server, &n)
		return domain, n, err == nil && strings.Count(g, "-") == 2
	}
	got := map[uint32]uint64{}
	for _, g := range strings.Split(have, ",") {
		if d, n, ok := seq(g); ok {
			got[d] = n
		}
	}
	for _, g := range strings.Split(need, ",") {
		d, n, ok := seq(g)
		if !ok {
			return false
		}
		if h, found := got[d]; !found || h < n {
			return false
		}
	}
	return true
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

// checkpointSaver saves the checkpoint after commits, at most every
// interval; flush saves the latest one.
type checkpointSaver struct {
	path     string
	interval time.Duration
	server   string

	mu      sync.Mutex
	pending *checkpoint.Checkpoint
	saved   time.Time
	gtids   map[uint32]string // MariaDB: domain → last GTID
	lastTx  change.TxEnd

	// beforeSave, if set, runs before each save: the Kafka sink's Flush,
	// which waits until the brokers acknowledged the records (kafka.go).
	beforeSave func() error
}

func (s *checkpointSaver) commit(tx change.TxEnd) error {
	s.mu.Lock()
	if tx.GTID == "" && tx.Time.IsZero() {
		// A ROTATE moved the resume point before this run committed a
		// transaction (the artificial one at connect): the pipeline does
		// not know the last transaction, the checkpoint it resumed from does.
		tx.GTID = s.lastTx.GTID
	}
	s.lastTx = tx
	if tx.GTID != "" && strings.Count(tx.GTID, "-") == 2 {
		if s.gtids == nil {
			s.gtids = map[uint32]string{}
		}
		var d uint32
		fmt.Sscanf(tx.GTID, "%d-", &d)
		s.gtids[d] = tx.GTID
	}
	s.pending = &checkpoint.Checkpoint{File: tx.Next.File, Offset: tx.Next.Offset, LastGTID: tx.GTID,
		GTIDSet: formatMariaGTIDs(s.gtids), Server: s.server}
	due := s.interval == 0 || time.Since(s.saved) >= s.interval
	s.mu.Unlock()
	if s.path == "" || !due {
		return nil
	}
	return s.flush()
}

func (s *checkpointSaver) flush() error {
	if s.beforeSave != nil && s.path != "" { // kafka.go
		if err := s.beforeSave(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.path == "" || s.pending == nil {
		return nil
	}
	s.pending.Saved = time.Now().UTC()
	if err := checkpoint.Save(s.path, s.pending); err != nil {
		return err
	}
	s.pending = nil
	s.saved = time.Now()
	return nil
}

func (s *checkpointSaver) last() change.Position {
	if s == nil {
		return change.Position{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastTx.Next
}

func (s *checkpointSaver) lastTime() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastTx.Time
}

func parseMariaGTIDs(set string) map[uint32]string {
	m := map[uint32]string{}
	for _, g := range strings.Split(set, ",") {
		g = strings.TrimSpace(g)
		var d uint32
		if _, err := fmt.Sscanf(g, "%d-", &d); err == nil && strings.Count(g, "-") == 2 {
			m[d] = g
		}
	}
	return m
}

func formatMariaGTIDs(m map[uint32]string) string {
	if len(m) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m))
	for _, g := range m {
		parts = append(parts, g)
	}
	// Stable order: by domain.
	for i := 1; i < len(parts); i++ {
		for j := i; j > 0 && parts[j] < parts[j-1]; j-- {
			parts[j], parts[j-1] = parts[j-1], parts[j]
		}
	}
	return strings.Join(parts, ",")
}

// startStreamProgress prints position, lag and rate every 5 seconds.
func startStreamProgress(ctx context.Context, w io.Writer, fl *pipeline.Follower, s *checkpointSaver) func() {
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
				if ts := s.lastTime(); !ts.IsZero() {
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
