package main

import (
	"context"
	"fmt"
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
	Tables, ExcludeTables       []string
	StartPosition, StopPosition string
	StartDatetime, StopDatetime string
	DDL                         bool
	Output                      string
	Progress                    bool
	Replay                      ReplayOptions  // --to, --format sql, --flashback (replay.go)
	Kafka                       KafkaOptions   // --to kafka://…, --kafka-* (kafka.go)
	Remote                      RemoteOptions  // --source mysql://… (remote.go)
	Metrics                     MetricsOptions // --metrics-addr (metrics.go)
	FindOpts                    FindOptions    // --find, --stop-before, --stop-before-gtid (archiveread.go)
	mx                          *metrics.Stream
	CPUProfile, MemProfile      string // debugging aids (profile.go)
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
	o.FindOpts.AddFlags(f)      // archiveread.go: --find, --stop-before, --stop-before-gtid

	// --cpuprofile, --memprofile: hidden; readUsage describes them (profile.go).
	addProfileFlags(f, &o.CPUProfile, &o.MemProfile)
}

const readUsage = `Usage: binlogcdc read [flags] FILE...
       binlogcdc read [flags] ARCHIVE-DIR
       binlogcdc read --source mysql://user@host:port --from earliest [flags]

Decodes binlog files into JSON lines on stdout: one object per row change,
with column names and types as they were when the change was written (see
the README for the format).

FILE may be binlog files (binlog.000001 binlog.000002 …, also gzip- or
zstd-compressed: binlog.000001.gz), the server's .index file, or - for one
binlog on stdin. The files are read in sequence order, whatever order they were
given in; a gap in the sequence is refused. A ROTATE to the next file is
followed when that file was given or sits in the same directory, plain or
compressed (.gz, .zst); when it is not there, a warning says so, and a gap
(a later file of the series is there) stops the run with exit code 4.
Stdin is decoded as it arrives, each transaction written at its commit.
No output (-o, profiles) may be an input file or any file of its series
beside it. A mistake in which files were named exits with code 2.

ARCHIVE-DIR is a directory 'binlogcdc archive --dir' writes: the files to
read are picked from its manifest by --start-position, --start-gtid,
--start-datetime and the stop flags, without opening the others; each
complete file picked must have the SHA-256 the manifest gives, every file
it lists must be there, and the file still being written is read up to
its last whole transaction. Times are UTC.

--stop-before 'DROP TABLE db.t' (or 'DELETE db.t', --stop-before-gtid)
stops right before the first such transaction, for a point-in-time
restore: restore a backup, then apply the archive from the backup's
binlog position with --to (see the README, "Point-in-time restore").
--find lists the matching transactions and where each starts.

With --source instead of files, the server's binlogs are read over the
replication protocol (like mysqlbinlog --read-from-remote-server), from
--start-position, --start-gtid or --from earliest up to the end of its
binlog when the command starts (or --stop-position/--stop-datetime), and
the output is what reading the same files gives. The user needs
REPLICATION SLAVE and REPLICATION CLIENT (MariaDB: BINLOG MONITOR).

The server must have written the binlog with binlog_format=ROW and
binlog_row_metadata=FULL (MySQL 8.0+, MariaDB 10.5+); otherwise binlogcdc
stops with an error that says how to fix the server.

With --to, the changes are applied to a MySQL/MariaDB server instead,
exactly once (it keeps its position in its binlogcdc.checkpoint table);
--format sql writes them as SQL, --flashback the SQL that undoes them (see
the README, "Replay"). --format debezium, maxwell or canal writes those
tools' JSON instead of binlogcdc's, also to --to kafka:// (see the README,
"Other formats").
` + profileUsage + `
Flags:
`

func runReadArgs(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var o ReadOptions
	f, err := parseFlags("read", readUsage, args, stderr, o.AddFlags)
	if err != nil {
		return err
	}
	archDir := ""
	if o.Remote.Conn.Source == "" {
		archDir = archiveDir(f.Args()) // archiveread.go: an archive DIR
		o.Remote.archive = archDir != ""
	}
	if err := o.Remote.check(f, o.StartPosition != ""); err != nil { // remote.go
		return err
	}
	if err := o.Metrics.check(f); err != nil { // metrics.go
		return err
	}
	if f.NArg() == 0 && o.Remote.Conn.Source == "" {
		return usageError{msg: "no binlog files given", hint: "binlogcdc read /var/lib/mysql/binlog.000001 (or the binlog.index file, or --source mysql://user@host:port)"}
	}
	if err := o.Kafka.take(f, &o.Replay.To); err != nil { // kafka.go: claims --to kafka://…
		return err
	}
	if err := o.Replay.check(f, &o.DDL); err != nil { // replay.go
		return err
	}
	if err := o.FindOpts.check(f, o.Replay.enabled(), o.Kafka.To != ""); err != nil { // archiveread.go
		return err
	}
	// Every argument is checked before anything is opened for writing,
	// connected to or applied: the flags' values, then the files.
	if o.Replay.To != "" {
		if _, err := o.Replay.targetConfig(); err != nil { // replay.go
			return err
		}
	}
	popts, start, err := o.pipelineOptions()
	if err != nil {
		return err
	}
	var files []string
	outputs := map[string]string{"-o": o.Output, "--cpuprofile": o.CPUProfile, "--memprofile": o.MemProfile}
	if err := checkReadFiles(connFiles(o.Remote.Conn), outputs); err != nil { // args.go
		return err
	}
	inputs := f.Args()
	if archDir != "" {
		plan, err := planArchive(archDir, o.readRange(popts, start), &o.Remote, outputs, infof(stderr)) // archiveread.go
		if err != nil || plan.Empty {
			return err
		}
		inputs = plan.Files
	}
	if o.Remote.Conn.Source == "" {
		var cleanup func()
		files, cleanup, err = checkInputs(inputs, outputs, o.FindOpts.stop != nil) // args.go: --stop-before reads stdin twice
		defer cleanup()
		if err != nil {
			return err
		}
	}
	o.Remote.Warnf = warnf(stderr) // a ROTATE that could not be followed
	// --source: check the server and note where its binlog ends now.
	if err := o.Remote.connect(ctx, infof(stderr)); err != nil { // remote.go
		return err
	}
	stopProfile, err := startProfile(o.CPUProfile, o.MemProfile) // profile.go
	if err != nil {
		return err
	}
	defer func() {
		if perr := stopProfile(); perr != nil && err == nil {
			err = perr
		}
	}()
	var stopMetrics func()
	if o.mx, stopMetrics, err = o.Metrics.start(infof(stderr), 0); err != nil { // metrics.go
		return err
	}
	defer stopMetrics()
	if o.Replay.enabled() {
		return runReadReplay(ctx, o, files, stdout, stderr)
	}
	return runRead(ctx, o, files, stdout, stderr)
}

func runRead(ctx context.Context, o ReadOptions, files []string, stdout, stderr io.Writer) error {
	popts, start, err := o.pipelineOptions()
	if err != nil {
		return err
	}
	o.Remote.archiveOptions(&popts) // archiveread.go
	if o.FindOpts.find != nil {
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
	src, err := o.Remote.open(ctx, files, start) // remote.go: the files, or --source
	if err != nil {
		return err
	}
	defer src.Close()

	out, closeOut := stdout, func() error { return nil }
	if o.Output != "" {
		f, err := os.Create(o.Output)
		if err != nil {
			return err
		}
		defer f.Close() // a no-op after closeOut
		out = f
		closeOut = f.Close
	}
	// stdin is read as it arrives: each transaction goes out at its
	// commit, not when a block of output is full.
	stdin := len(files) == 1 && files[0] == "-"
	var sk sink.Sink = jsonl.New(out, jsonl.Options{Format: enc, FlushEachCommit: stdin})
	if ks != nil { // --to kafka://…
		sk = ks
	}
	popts.Logf = warnf(stderr)
	popts.Metrics, popts.OnCommit = o.mx, metricsOnCommit(o.mx, popts.OnCommit, nil, nil) // metrics.go
	watchKafka(o.mx, ks)
	p := pipeline.New(src, sk, popts)

	var stopProgress func()
	if o.Progress || isTerminal(stderr) {
		stopProgress = startProgress(ctx, stderr, p)
	}
	runErr := p.Run(ctx)
	if stopProgress != nil {
		stopProgress()
	}
	if runErr == nil {
		runErr = o.checkStopped(p) // archiveread.go
	}
	warnUnmatched(stderr, popts.Filter)
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
		return popts, start, usageError{msg: err.Error(), hint: "--tables shop.orders --tables 'shop.*'"}
	}
	popts.DDL = o.DDL
	if o.StartPosition != "" {
		if start, err = parsePosition(o.StartPosition); err != nil {
			return popts, start, usageError{msg: "--start-position: " + err.Error(), hint: "--start-position binlog.000042:4"}
		}
	}
	if o.StopPosition != "" {
		if popts.Stop, err = parsePosition(o.StopPosition); err != nil {
			return popts, start, usageError{msg: "--stop-position: " + err.Error(), hint: "--stop-position binlog.000042:1234"}
		}
	}
	if o.StartDatetime != "" {
		if popts.StartTime, err = parseTime(o.StartDatetime); err != nil {
			return popts, start, usageError{msg: "--start-datetime: " + err.Error(), hint: "--start-datetime '2024-06-15 12:00:00' (UTC)"}
		}
	}
	if o.StopDatetime != "" {
		if popts.StopTime, err = parseTime(o.StopDatetime); err != nil {
			return popts, start, usageError{msg: "--stop-datetime: " + err.Error(), hint: "--stop-datetime '2024-06-15 13:00:00' (UTC)"}
		}
	}
	return popts, start, nil
}

// parsePosition parses FILE:POS.
func parsePosition(s string) (change.Position, error) {
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
		file = file[j+1:]
	}
	return change.Position{File: file, Offset: off}, nil
}

// parseTime parses a UTC time in MySQL's or RFC 3339 form.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999", "2006-01-02T15:04:05.999999", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time like '2024-06-15 12:00:00'", s)
}
