package binlogcdc

import (
	"context"
	"fmt"
	"github.com/binlogcdc/binlogcdc/schemahist"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/metrics"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
)

// ReadOptions are the flags of 'binlogcdc read'.
type ReadOptions struct {
	Tables, ExcludeTables       []string       // --tables, --exclude-tables
	StartPosition, StopPosition string         // --start-position, --stop-position
	StartDatetime, StopDatetime string         // --start-datetime, --stop-datetime
	DDL                         bool           // --ddl
	Output                      string         // --output
	Progress                    bool           // --progress
	Replay                      ReplayOptions  // --to, --format sql, --flashback (replay.go)
	Kafka                       KafkaOptions   // --to kafka://…, --kafka-* (kafka.go)
	Remote                      RemoteOptions  // --source mysql://… (remote.go)
	Metrics                     MetricsOptions // --metrics-addr (metrics.go)
	Find                        FindOptions    // --find, --stop-before, --stop-before-gtid (archiveread.go)
	mx                          *metrics.Stream
	CPUProfile, MemProfile      string // debugging aids (profile.go)

	checked bool     // CheckFlags passed
	empty   bool     // an archive DIR holds nothing after the start: nothing to read
	notes   []string // what CheckFlags chose (an archive's files), told by Read
}

// AddFlags binds the flags to opts.
func (o *ReadOptions) AddFlags(f *pflag.FlagSet) {
	f.StringArrayVar(&o.Tables, "tables", nil, "only tables matching `db.table` (globs: shop.*, *.orders); repeatable")
	f.StringArrayVar(&o.ExcludeTables, "exclude-tables", nil, "skip tables matching `db.table` (globs); repeatable; wins over --tables")
	f.StringVar(&o.StartPosition, "start-position", "", "start at `FILE:POS`, the start of a transaction (its GTID or BEGIN event)")
	f.StringVar(&o.StopPosition, "stop-position", "", "stop before the first transaction that starts at or after `FILE:POS`")
	f.StringVar(&o.StartDatetime, "start-datetime", "", "skip transactions that started before `TIME` (UTC: '2024-06-15 12:00:00' or RFC 3339)")
	f.StringVar(&o.StopDatetime, "stop-datetime", "", "stop at the first transaction that started at or after `TIME` (UTC)")
	// --ddl[=apply|skip]: bare --ddl emits DDL records in JSON; replay applies DDL unless --ddl=skip (replay.go).
	o.Replay.addDDLFlag(f, &o.DDL)
	f.StringVarP(&o.Output, "output", "o", "", "write to `FILE` instead of stdout")
	f.BoolVar(&o.Progress, "progress", false, "print progress to stderr (default: when stderr is a terminal)")
	o.Replay.AddFlags(f, false) // replay.go
	o.Kafka.AddFlags(f)         // kafka.go
	o.Remote.AddFlags(f, true)  // remote.go: --source, --start-gtid, --from
	o.Metrics.AddFlags(f)       // metrics.go: --metrics-addr, --health-window
	o.Find.AddFlags(f)          // archiveread.go: --find, --stop-before, --stop-before-gtid

	// --cpuprofile, --memprofile: hidden; readUsage describes them (profile.go).
	addProfileFlags(f, &o.CPUProfile, &o.MemProfile)
}

// CheckFlags checks the options as 'binlogcdc read' does after parsing
// its flags (f: the flags that were set, nil when set in code) and the
// files to read (args), before anything connects or is written: no
// output may be an input. It returns the files in the order to read
// them, and a cleanup to call when done (it removes decompressed
// copies).
func (o *ReadOptions) CheckFlags(f *pflag.FlagSet, args []string) (files []string, cleanup func(), err error) {
	cleanup = func() {}
	archDir := ""
	if o.Remote.Conn.Source == "" {
		archDir = archiveDir(args) // archiveread.go: an archive DIR
		o.Remote.archive = archDir != ""
	}
	if err := o.Remote.Check(f, args, o.StartPosition != ""); err != nil { // remote.go
		return nil, cleanup, err
	}
	if err := o.Metrics.check(f); err != nil { // metrics.go
		return nil, cleanup, err
	}
	if len(args) == 0 && o.Remote.Conn.Source == "" {
		return nil, cleanup, UsageError{Msg: "no binlog files given", Hint: "binlogcdc read /var/lib/mysql/binlog.000001 (or the binlog.index file, or --source mysql://user@host:port)"}
	}
	if err := o.Kafka.take(f, &o.Replay.To); err != nil { // kafka.go: claims --to kafka://…
		return nil, cleanup, err
	}
	if err := o.Replay.check(f, &o.DDL); err != nil { // replay.go
		return nil, cleanup, err
	}
	if err := o.Find.check(o.Replay.enabled(), o.Kafka.To != ""); err != nil { // archiveread.go
		return nil, cleanup, err
	}
	// Every argument is checked before anything is opened for writing,
	// connected to or applied: the flags' values, then the files.
	if o.Replay.To != "" {
		if _, err := o.Replay.TargetConfig(); err != nil { // replay.go
			return nil, cleanup, err
		}
	}
	popts, start, err := o.pipelineOptions()
	if err != nil {
		return nil, cleanup, err
	}
	outputs := map[string]string{"-o": o.Output, "--cpuprofile": o.CPUProfile, "--memprofile": o.MemProfile}
	if err := CheckReadFiles(ConnFiles(o.Remote.Conn), outputs); err != nil { // args.go
		return nil, cleanup, err
	}
	if archDir != "" {
		plan, err := planArchive(archDir, o.readRange(popts, start), &o.Remote, outputs, o.note) // archiveread.go
		if err != nil {
			return nil, cleanup, err
		}
		if plan.Empty {
			o.empty, o.checked = true, true
			return nil, cleanup, nil
		}
		// Read as the plan says (OpenParts: remote.go), each file in place.
		o.checked = true
		return plan.Files, cleanup, nil
	}
	if o.Remote.Conn.Source == "" {
		files, cleanup, err = CheckInputs(args, outputs, o.Find.stop != nil) // args.go: --stop-before reads stdin twice
		if err != nil {
			return nil, cleanup, err
		}
	}
	o.checked = true
	return files, cleanup, nil
}

// note keeps a note of CheckFlags for Read to tell.
func (o *ReadOptions) note(format string, args ...any) {
	o.notes = append(o.notes, fmt.Sprintf(format, args...))
}

// Read decodes binlog files (files, as CheckFlags returned them), or
// with o.Remote.Conn.Source a server's binlogs up to their end now, as
// 'binlogcdc read' does: JSON lines to stdout or o.Output, SQL, a replay
// target or Kafka, as o says. Notes and warnings go to stderr.
func Read(ctx context.Context, o ReadOptions, files []string, stdout, stderr io.Writer) (err error) {
	files, done, err := o.begin(ctx, files, nil, stderr)
	defer done()
	if err != nil || o.empty {
		return err
	}
	if o.Replay.enabled() {
		return runReadReplay(ctx, o, files, stdout, stderr)
	}
	return runRead(ctx, o, files, stdout, stderr, nil)
}

// ReadTo is Read with each committed transaction handed to sk instead
// of the output the options name (o.Output, o.Replay, o.Kafka must be
// unset), in commit order; NewHandlerSink makes a Handler one. Notes and
// warnings go to stderr (nil: discarded).
func ReadTo(ctx context.Context, o ReadOptions, files []string, sk sink.Sink, stderr io.Writer) (err error) {
	if stderr == nil {
		stderr = io.Discard
	}
	files, done, err := o.begin(ctx, files, func() error {
		return checkOwnDestination(o.Output, &o.Replay, &o.Kafka) // handler.go
	}, stderr)
	defer done()
	if err != nil || o.empty {
		return err
	}
	return runRead(ctx, o, files, io.Discard, stderr, sk)
}

// runRead is Read's JSON or Kafka output, or (own != nil) ReadTo's.
func runRead(ctx context.Context, o ReadOptions, files []string, stdout, stderr io.Writer, own sink.Sink) error {
	popts, start, err := o.pipelineOptions()
	if err != nil {
		return err
	}
	o.Remote.archiveOptions(&popts) // archiveread.go
	if o.Find.find != nil {
		return runFind(ctx, o, files, start, popts, stdout, stderr) // archiveread.go
	}
	// --format debezium|maxwell|canal (formats.go)
	enc, err := o.Replay.Envelope.encoder(o.Replay.Format, o.Kafka.sinkTopicPrefix())
	if err != nil {
		return err
	}
	o.Kafka.Format = enc
	// --to kafka://… (kafka.go): with --kafka-exactly-once, a run resumes
	// where the last one committed.
	ks, kcp, err := openKafkaSink(ctx, o.Kafka, "", func(format string, args ...any) {
		fmt.Fprintf(stderr, "binlogcdc: "+format+"\n", args...)
	})
	if err != nil {
		return err
	}
	if ks != nil {
		defer ks.Close(ctx) // a no-op after the Close below
	}
	if kcp != nil {
		start = kcp.Position()
		popts.UnknownXA = fmt.Sprintf("Kafka (--kafka-replica-name %s, at %s:%d)", o.Kafka.Replica, kcp.File, kcp.Offset)
	}
	if err := o.findStop(ctx, files, start, &popts, infof(stderr)); err != nil { // archiveread.go
		return err
	}
	src, err := o.Remote.Open(ctx, files, start) // remote.go: the files, or --source
	if err != nil {
		return err
	}
	defer src.Close()

	out, closeOut, err := createOutput(o.Output, stdout)
	if err != nil {
		return err
	}
	defer closeOut() // a no-op after the checked closeOut below
	// stdin is read as it arrives: each transaction goes out at its
	// commit, not when a block of output is full.
	stdin := len(files) == 1 && files[0] == "-"
	var sk sink.Sink = jsonl.New(out, jsonl.Options{Format: enc, FlushEachCommit: stdin})
	if ks != nil { // --to kafka://…
		sk = ks
	}
	if own != nil { // ReadTo
		sk = own
	}
	popts.Logf = warnf(stderr)
	popts.Metrics, popts.OnCommit = o.mx, metricsOnCommit(o.mx, popts.OnCommit, nil, nil) // metrics.go
	watchKafka(o.mx, ks)
	runErr := o.runPipeline(ctx, pipeline.New(src, sk, popts), popts.Filter, stderr)
	if err := sk.Close(ctx); err != nil && runErr == nil {
		runErr = err
	}
	// -o: a write the kernel reports only at close is an error too.
	if err := closeOut(); err != nil && runErr == nil {
		runErr = fmt.Errorf("-o %s: %w", o.Output, err)
	}
	return runErr
}

func (o *ReadOptions) pipelineOptions() (pipeline.Options, change.Position, error) {
	var popts pipeline.Options
	var start change.Position
	var err error
	if popts.Filter, err = pipeline.NewFilter(o.Tables, o.ExcludeTables); err != nil {
		return popts, start, UsageError{Msg: err.Error(), Hint: "--tables shop.orders --tables 'shop.*'"}
	}
	popts.DDL, popts.RowQuery = o.DDL, o.Replay.Envelope.RowQuery
	if o.Replay.Format == "maxwell" || o.Replay.Format == "debezium" {
		// A schema history of the DDL read (the flavor follows the
		// binlog): their DDL records describe each table before and
		// after the statement, Debezium's schemas give defaults, and
		// MariaDB columns declared JSON are Maxwell's embedded JSON.
		popts.Schema = schemahist.New(false)
		if o.DDL {
			popts.DDLSplit = ddlSplit(o.Replay.Format)
		}
	}
	if o.StartPosition != "" {
		if start, err = ParsePosition(o.StartPosition); err != nil {
			return popts, start, UsageError{Msg: "--start-position: " + err.Error(), Hint: "--start-position binlog.000042:4"}
		}
	}
	if o.StopPosition != "" {
		if popts.Stop, err = ParsePosition(o.StopPosition); err != nil {
			return popts, start, UsageError{Msg: "--stop-position: " + err.Error(), Hint: "--stop-position binlog.000042:1234"}
		}
	}
	if o.StartDatetime != "" {
		if popts.StartTime, err = ParseTime(o.StartDatetime); err != nil {
			return popts, start, UsageError{Msg: "--start-datetime: " + err.Error(), Hint: "--start-datetime '2024-06-15 12:00:00' (UTC)"}
		}
	}
	if o.StopDatetime != "" {
		if popts.StopTime, err = ParseTime(o.StopDatetime); err != nil {
			return popts, start, UsageError{Msg: "--stop-datetime: " + err.Error(), Hint: "--stop-datetime '2024-06-15 13:00:00' (UTC)"}
		}
	}
	return popts, start, nil
}

// ParsePosition parses FILE:POS.
func ParsePosition(s string) (change.Position, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return change.Position{}, fmt.Errorf("%q is not FILE:POS", s)
	}
	off, err := strconv.ParseUint(s[i+1:], 10, 64)
	if err != nil {
		return change.Position{}, fmt.Errorf("%q: offset is not a number", s)
	}
	file := s[:i]
	if j := strings.LastIndexByte(file, '/'); j >= 0 {
		// A path names its file; an archive's later server history
		// names its files history-N/NAME (change.History).
		parent := file[:j]
		file = file[j+1:]
		if k := strings.LastIndexByte(parent, '/'); k >= 0 {
			parent = parent[k+1:]
		}
		if n, _ := change.History(parent + "/" + file); n > 1 {
			file = parent + "/" + file
		}
	}
	return change.Position{File: file, Offset: off}, nil
}

// ParseTime parses a UTC time in MySQL's or RFC 3339 form.
func ParseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999", "2006-01-02T15:04:05.999999", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time like '2024-06-15 12:00:00'", s)
}

// runPipeline runs p (read, and read's replay) with its progress line
// when asked for or on a terminal, then checks that a --stop-before or
// stop flag was reached (archiveread.go) and warns about --tables
// patterns that matched nothing.
func (o *ReadOptions) runPipeline(ctx context.Context, p *pipeline.Pipeline, filter *pipeline.Filter, stderr io.Writer) error {
	var stopProgress func()
	if o.Progress || isTerminal(stderr) {
		stopProgress = startProgress(ctx, stderr, p)
	}
	err := p.Run(ctx)
	if stopProgress != nil {
		stopProgress()
	}
	if err == nil {
		err = o.checkStopped(p)
	}
	warnUnmatched(stderr, filter)
	return err
}

// createOutput creates -o's file (stdout when path is ""); closeOut
// closes it, and may be called again (deferred) after a checked call.
func createOutput(path string, stdout io.Writer) (out io.Writer, closeOut func() error, err error) {
	if path == "" {
		return stdout, func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

// begin is what Read and ReadTo do first: CheckFlags when not done yet,
// check (ReadTo's own), CheckFlags' notes, --source's connection and the
// metrics; with o.empty (an archive with nothing after the start) it
// stops after the notes. done undoes what begin set up; call it also
// after an error.
func (o *ReadOptions) begin(ctx context.Context, files []string, check func() error, stderr io.Writer) (_ []string, done func(), err error) {
	var undo []func()
	done = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	if !o.checked {
		var cleanup func()
		files, cleanup, err = o.CheckFlags(nil, files)
		undo = append(undo, cleanup)
		if err != nil {
			return nil, done, err
		}
	}
	if check != nil {
		if err := check(); err != nil {
			return nil, done, err
		}
	}
	for _, n := range o.notes {
		fmt.Fprintln(stderr, "binlogcdc: "+n)
	}
	if o.empty { // an archive with nothing after the start (CheckFlags said so)
		return files, done, nil
	}
	o.Remote.Warnf = warnf(stderr) // a ROTATE that could not be followed
	// --source: check the server and note where its binlog ends now.
	if err := o.Remote.Connect(ctx, infof(stderr)); err != nil { // remote.go
		return nil, done, err
	}
	var stopMetrics func()
	if o.mx, stopMetrics, err = o.Metrics.start(infof(stderr), 0); err != nil { // metrics.go
		return nil, done, err
	}
	undo = append(undo, stopMetrics)
	return files, done, nil
}
