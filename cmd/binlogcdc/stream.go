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
	"syscall"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/pipeline"
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
}

// AddFlags binds the flags to opts.
func (o *StreamOptions) AddFlags(f *pflag.FlagSet) {
	o.Conn.AddFlags(f)
	f.StringArrayVar(&o.Tables, "tables", nil, "only tables matching `db.table` (globs: shop.*, *.orders); repeatable")
	f.StringArrayVar(&o.Exclude, "exclude-tables", nil, "skip tables matching `db.table` (globs); repeatable")
	f.StringVar(&o.StartPosition, "start-position", "", "start at `FILE:POS`, the start of a transaction")
	f.StringVar(&o.StartGTID, "start-gtid", "", "start after the transactions in this GTID `SET` (MySQL uuid:1-100, MariaDB 0-1-100)")
	f.StringVar(&o.From, "from", "", "start at `now` (the current end of the binlog) or `earliest` (the oldest binlog the server has)")
	f.StringVar(&o.Checkpoint, "checkpoint", "", "resume from and save progress to `FILE`; when it exists it wins over the start flags")
	f.DurationVar(&o.CheckpointInterval, "checkpoint-interval", 0, "save the checkpoint at most this often (0: after every transaction); a longer interval means more lines re-sent after a crash")
	f.BoolVar(&o.DDL, "ddl", false, "also emit DDL records")
	f.StringVarP(&o.Output, "output", "o", "", "append to `FILE` instead of writing to stdout (fsynced before each checkpoint)")
	f.BoolVar(&o.Progress, "progress", false, "print a status line to stderr every few seconds (default: when stderr is a terminal)")
	f.DurationVar(&o.Heartbeat, "heartbeat", 10*time.Second, "server heartbeat period; no data for 3× this long counts as a network stall and reconnects")
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

Flags:
`

func runStreamArgs(ctx context.Context, args []string, stdout, stderr io.Writer, sig *signals) error {
	var o StreamOptions
	f := pflag.NewFlagSet("stream", pflag.ContinueOnError)
	f.SetOutput(stderr)
	o.AddFlags(f)
	f.Usage = func() {
		fmt.Fprint(stderr, streamUsage)
		f.PrintDefaults()
	}
	if err := f.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return err
		}
		return usageError{msg: err.Error(), hint: "run 'binlogcdc stream --help'"}
	}
	if f.NArg() > 0 {
		return usageError{msg: "stream takes no arguments", hint: "to read files, use 'binlogcdc read FILE...'"}
	}
	return runStream(ctx, o, stdout, stderr, sig)
}

func runStream(ctx context.Context, o StreamOptions, stdout, stderr io.Writer, sig *signals) error {
	cfg, err := o.Conn.liveConfig(o.Checkpoint)
	if err != nil {
		return err
	}
	filter, err := pipeline.NewFilter(o.Tables, o.Exclude)
	if err != nil {
		return usageError{msg: err.Error(), hint: "--tables shop.orders --tables 'shop.*'"}
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "binlogcdc: "+format+"\n", args...)
	}

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
	case cp != nil:
		start = cp.Position()
		ok, err := binlog.BinlogExists(ctx, cfg, start.File)
		if err != nil {
			return err
		}
		if !ok {
			return &binlog.PreflightError{Problem: fmt.Sprintf("the checkpoint in %s resumes at %s:%d, but the server no longer has %s", o.Checkpoint, start.File, start.Offset, start.File),
				Hint: "it was purged: the changes since the checkpoint are gone from the server. Rebuild from a fresh snapshot and restart with --from now (after moving the checkpoint away), or use --from earliest to accept the gap"}
		}
		logf("resuming from checkpoint %s at %s:%d", o.Checkpoint, start.File, start.Offset)
	case o.StartPosition != "":
		if start, err = parsePosition(o.StartPosition); err != nil {
			return usageError{msg: "--start-position: " + err.Error(), hint: "--start-position binlog.000042:4"}
		}
	case o.StartGTID != "":
		gtid = o.StartGTID
	case o.From == "" || o.From == "now":
		if start, err = binlog.CurrentPosition(ctx, cfg); err != nil {
			return err
		}
	case o.From == "earliest":
		if start, err = binlog.EarliestPosition(ctx, cfg); err != nil {
			return err
		}
	default:
		return usageError{msg: "--from: want now or earliest, not " + o.From, hint: "--from now"}
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
	sk := jsonl.New(out, jsonl.Options{FlushEachCommit: true, Sync: outFile != nil})

	saver := &checkpointSaver{path: o.Checkpoint, interval: o.CheckpointInterval, server: net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))}
	if cp != nil {
		saver.gtids = parseMariaGTIDs(cp.GTIDSet)
	}
	fl := &pipeline.Follower{
		Dial: func(ctx context.Context, from change.Position) (binlog.Source, error) {
			return binlog.DialLive(ctx, cfg, from, gtid)
		},
		Sink:      sk,
		Options:   pipeline.Options{Filter: filter, DDL: o.DDL, OnCommit: saver.commit},
		Retryable: retryable,
		Logf:      logf,
	}
	var stopProgress func()
	if o.Progress || isTerminal(stderr) {
		stopProgress = startStreamProgress(ctx, stderr, fl, saver)
	}
	stopping := sig.onStop(func() {
		fl.RequestStop()
	}, fl.InTransaction)
	err = fl.Run(ctx, start)
	if stopProgress != nil {
		stopProgress()
	}
	if cerr := sk.Close(ctx); cerr != nil && err == nil {
		err = cerr
	}
	if serr := saver.flush(); serr != nil && err == nil {
		err = serr
	}
	if stopping() && (err == nil || errors.Is(err, context.Canceled)) {
		last := saver.last()
		logf("stopped at %s:%d", last.File, last.Offset)
		return nil
	}
	return err
}

// retryable says which errors from a live source are worth a reconnect.
func retryable(err error) bool {
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
}

func (s *checkpointSaver) commit(tx change.TxEnd) error {
	s.mu.Lock()
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
