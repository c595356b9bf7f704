package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/snapshot"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// SnapshotOptions are stream's --snapshot flags (and what the snapshot
// command sets).
type SnapshotOptions struct {
	On         bool // --snapshot
	Only       bool // the snapshot command: stop after the snapshot
	Batch      int
	AllowNonTx bool
}

// AddFlags binds --snapshot and its companions.
func (o *SnapshotOptions) AddFlags(f *pflag.FlagSet, command bool) {
	if !command {
		f.BoolVar(&o.On, "snapshot", false, "with no checkpoint yet: copy the selected tables as they are now (op \"snapshot\" lines, or rows on --to), then stream from exactly that position")
	}
	f.IntVar(&o.Batch, "snapshot-batch", 1000, "snapshot rows per sink transaction: flushed together to -o, applied as one source transaction on --to mysql://")
	f.BoolVar(&o.AllowNonTx, "allow-non-transactional", false, "snapshot MyISAM/Aria/MEMORY tables too (read as they are when read, not at the snapshot's position: only safe when nothing writes to them meanwhile)")
}

const snapshotUsage = `Usage: binlogcdc snapshot --source mysql://user@host:port [flags]

Copies the selected tables as they are at one binlog position, without
stopping the server, then prints that position (file:pos and GTID
position) and saves it with --checkpoint: 'binlogcdc stream --checkpoint
FILE' (or --to the same target) then continues from exactly there, so
every change is delivered once.

Rows are JSON lines with "op":"snapshot" and "after" only (stdout or -o),
encoded exactly as 'read' encodes the same values from a binlog; with
--to mysql://… they are inserted into the target (tables created when
missing, exactly once: see the README, "Start from the data already
there"); with --to kafka://…
they are published like inserts, keyed by primary key.

MariaDB: START TRANSACTION WITH CONSISTENT SNAPSHOT and the
binlog_snapshot_file/position status give the exact position without any
lock. MySQL: FLUSH TABLES WITH READ LOCK is held for the moment the
snapshot starts (needs RELOAD). The user needs SELECT on the tables, and
what stream needs (REPLICATION SLAVE, REPLICATION CLIENT or BINLOG
MONITOR). Tables must be InnoDB (see --allow-non-transactional).

Flags:
`

func runSnapshotArgs(ctx context.Context, args []string, stdout, stderr io.Writer, sig *signals) error {
	var o StreamOptions
	f, err := parseFlags("snapshot", snapshotUsage, args, stderr, func(f *pflag.FlagSet) {
		o.AddFlags(f)
		for _, n := range []string{"start-position", "start-gtid", "from", "checkpoint-interval", "heartbeat", "snapshot", "ddl",
			"metrics-addr", "health-window", "kafka-exactly-once", "kafka-replica-name", "kafka-transaction-timeout",
			"keep-dropped", "replay-accounts", "omit-columns", "create-tables", "fire-triggers", "on-conflict",
			"signal-table", "snapshot-chunk"} {
			if f.Lookup(n) != nil {
				f.MarkHidden(n)
			}
		}
		if c := f.Lookup("checkpoint"); c != nil {
			c.Usage = "save the snapshot's position to `FILE` (it must not exist yet), for 'binlogcdc stream --checkpoint FILE'"
		}
	})
	if err != nil {
		return err
	}
	if f.NArg() > 0 {
		return usageError{msg: "snapshot takes no arguments", hint: "--tables shop.orders"}
	}
	for _, n := range []string{"start-position", "start-gtid", "from", "snapshot", "signal-table"} {
		if f.Changed(n) {
			return usageError{msg: "--" + n + " is not a snapshot flag", hint: "a snapshot starts now; 'binlogcdc stream' takes start flags"}
		}
	}
	o.Snapshot.On, o.Snapshot.Only = true, true
	if err := o.Kafka.take(f, &o.Replay.To); err != nil {
		return err
	}
	if err := o.Replay.check(f, &o.DDL); err != nil {
		return err
	}
	if err := checkStreamArgs(&o); err != nil {
		return err
	}
	if err := o.checkSnapshotArgs(); err != nil {
		return err
	}
	if o.Checkpoint != "" {
		if _, err := os.Stat(o.Checkpoint); err == nil {
			return usageError{msg: "--checkpoint " + o.Checkpoint + " exists: a snapshot starts a stream anew", hint: "resume it with 'binlogcdc stream --checkpoint " + o.Checkpoint + "', or move it away"}
		}
	}
	return runStream(ctx, o, stdout, stderr, sig)
}

// checkSnapshotArgs checks --snapshot against the other flags.
func (o *StreamOptions) checkSnapshotArgs() error {
	if !o.Snapshot.On {
		return nil
	}
	if o.Kafka.ExactlyOnce {
		return usageError{msg: "--snapshot with --kafka-exactly-once is not supported yet", hint: "snapshot at-least-once (without --kafka-exactly-once), or start from the binlogs"}
	}
	if o.Replay.To == "" && o.Replay.enabled() {
		return usageError{msg: "--snapshot writes JSON lines, --to mysql:// or --to kafka://, not SQL text", hint: "drop --format sql, or use --to mysql://…"}
	}
	if o.Snapshot.Batch <= 0 {
		return usageError{msg: "--snapshot-batch must be positive", hint: "--snapshot-batch 1000"}
	}
	return nil
}

// streamSnapshot is a snapshot that stream takes before following.
type streamSnapshot struct {
	src    *snapshot.Source
	tables []snapshot.TableInfo
	redo   bool   // a target's earlier snapshot did not finish
	mark   string // CHECKPOINT.snapshot, while -o gets the snapshot
}

// snapshotTargetResume returns the target's checkpoint unless a snapshot
// into it did not finish: then there is none, and the snapshot is taken
// again (its tables emptied).
func (o *StreamOptions) snapshotTargetResume(rp *replayRun, cp *checkpoint.Checkpoint, logf func(string, ...any)) (*checkpoint.Checkpoint, bool, error) {
	if !o.Snapshot.On || rp == nil || rp.target == nil {
		return cp, false, nil
	}
	unfinished, err := rp.target.SnapshotUnfinished()
	if err != nil || !unfinished {
		return cp, false, err
	}
	logf("the last snapshot into the target (replica %q) did not finish: taking it again", o.Replay.ReplicaName)
	return nil, true, nil
}

// beginSnapshot opens the consistent snapshot and lists its tables.
func (o *StreamOptions) beginSnapshot(ctx context.Context, cfg binlog.LiveConfig, flavor string, filter *pipeline.Filter, rp *replayRun, redo bool, logf func(string, ...any)) (*streamSnapshot, error) {
	var mark string
	if o.Output != "" && o.Checkpoint != "" {
		// No checkpoint yet: -o may end in an unfinished snapshot.
		var err error
		if mark, err = markOutput(o.Output, o.Checkpoint, logf); err != nil {
			return nil, err
		}
	}
	conn, err := binlog.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	src, err := snapshot.Begin(ctx, conn, flavor)
	if err != nil {
		conn.Close()
		return nil, err
	}
	tables, skipped, err := src.Tables(filter, o.Snapshot.AllowNonTx)
	if err != nil {
		src.Close()
		return nil, err
	}
	for _, s := range skipped {
		logf("snapshot: skipped %s", s)
	}
	p := src.Pos
	gt := ""
	if p.GTID != "" {
		gt = " (GTID position " + p.GTID + ")"
	}
	logf("snapshot of %d tables consistent with %s:%d%s", len(tables), p.File, p.Offset, gt)
	if rp != nil && rp.target != nil {
		if !redo { // nothing written yet: every table must be missing or empty
			for _, t := range tables {
				if err := rp.target.CheckSnapshotTable(t.DB, t.Name); err != nil {
					src.Close()
					return nil, err
				}
			}
		}
		if err := rp.target.BeginSnapshot(p.Pos()); err != nil {
			src.Close()
			return nil, err
		}
	}
	return &streamSnapshot{src: src, tables: tables, redo: redo, mark: mark}, nil
}

// outputMark is CHECKPOINT.snapshot: while a snapshot is written to -o
// and its checkpoint is not saved yet, the size -o had before it. A run
// that finds it (killed inside the snapshot) cuts -o back to that size
// and takes the snapshot again, so -o holds each snapshot row once.
type outputMark struct {
	Output string `json:"output"`
	Size   int64  `json:"size"`
}

// markOutput cuts -o back after an unfinished snapshot, then marks the
// one about to start. It returns the mark's path.
func markOutput(output, cp string, logf func(string, ...any)) (string, error) {
	mark := cp + ".snapshot"
	abs, err := filepath.Abs(output)
	if err != nil {
		return "", err
	}
	if data, err := os.ReadFile(mark); err == nil {
		var m outputMark
		if err := json.Unmarshal(data, &m); err != nil || m.Output != abs {
			return "", fmt.Errorf("--snapshot: %s is not the mark of a snapshot into -o %s; move it away", mark, output)
		}
		if st, err := os.Stat(output); err == nil && st.Size() > m.Size {
			if err := os.Truncate(output, m.Size); err != nil {
				return "", &checkpoint.WriteError{What: "-o " + output, Err: err}
			}
		}
		logf("the last snapshot into %s did not finish (%s): cut it back to %d bytes, taking the snapshot again", output, mark, m.Size)
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	var size int64
	if st, err := os.Stat(output); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	data, _ := json.Marshal(outputMark{Output: abs, Size: size})
	if err := writeSynced(mark, data); err != nil {
		return "", &checkpoint.WriteError{What: "the snapshot mark " + mark, Err: err}
	}
	return mark, nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// saved is called once the checkpoint at the snapshot's position is
// saved: the mark has done its work.
func (s *streamSnapshot) saved() error {
	if s == nil || s.mark == "" {
		return nil
	}
	if err := os.Remove(s.mark); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// copy writes the snapshot's rows to sk; then the target (if any) holds
// the snapshot's position as its checkpoint.
func (s *streamSnapshot) copy(ctx context.Context, sk sink.Sink, rp *replayRun, o *StreamOptions, stderr io.Writer) error {
	defer s.src.Close()
	opts := snapshot.Options{Batch: o.Snapshot.Batch}
	if rp != nil && rp.target != nil {
		sk = snapshot.AsInserts(sk)
		opts.BeforeTable = func(t *tablemap.Table) error { return rp.target.PrepareSnapshotTable(t, s.redo) }
	}
	if o.Progress || isTerminal(stderr) {
		var mu sync.Mutex
		last := time.Time{}
		opts.Progress = func(p snapshot.Progress) {
			mu.Lock()
			defer mu.Unlock()
			if time.Since(last) < 5*time.Second && p.TablesDone < p.Tables {
				return
			}
			last = time.Now()
			left := "?"
			if l := p.Left(); l > 0 {
				left = l.Round(time.Second).String()
			}
			fmt.Fprintf(stderr, "binlogcdc: snapshot: %d of %d tables, %d rows (~%d in all), %.0f rows/s, ~%s left; reading %s\n",
				p.TablesDone, p.Tables, p.Rows, p.EstimatedRows, float64(p.Rows)/max(p.Elapsed.Seconds(), 0.001), left, p.Table)
		}
	}
	start := time.Now()
	st, err := s.src.Copy(ctx, sk, s.tables, opts)
	if err != nil {
		return err
	}
	if rp != nil && rp.target != nil {
		if err := rp.target.EndSnapshot(); err != nil {
			return err
		}
	}
	d := time.Since(start)
	fmt.Fprintf(stderr, "binlogcdc: snapshot: %d rows of %d tables in %v (%.0f rows/s), consistent with %s:%d\n",
		st.Rows, st.Tables, d.Round(time.Millisecond), float64(st.Rows)/max(d.Seconds(), 0.001), s.src.Pos.File, s.src.Pos.Offset)
	return nil
}

// finishSnapshot ends the snapshot command: the rows are durable and the
// checkpoint saved.
func finishSnapshot(ctx context.Context, snap *streamSnapshot, sk sink.Sink, saver *checkpoint.Saver, rp *replayRun, stderr io.Writer) error {
	if snap == nil {
		return fmt.Errorf("the target already has a checkpoint (replica %q): it is past its snapshot; resume it with 'binlogcdc stream', or use another --replica-name", rp.o.ReplicaName)
	}
	if err := sk.Close(ctx); err != nil {
		return err
	}
	if err := saver.Flush(); err != nil {
		return err
	}
	p := snap.src.Pos
	fmt.Fprintf(stderr, "binlogcdc: snapshot position %s:%d", p.File, p.Offset)
	if p.GTID != "" {
		fmt.Fprintf(stderr, ", GTID position %s", p.GTID)
	}
	if saver.Path != "" {
		fmt.Fprintf(stderr, "; saved in %s", saver.Path)
	}
	fmt.Fprintln(stderr)
	return nil
}
