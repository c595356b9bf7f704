package binlogcdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/schemahist"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/snapshot"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// SnapshotOptions are stream's --snapshot flags (and what the snapshot
// command sets).
type SnapshotOptions struct {
	On         bool // --snapshot
	Only       bool // the snapshot command: stop after the snapshot
	Batch      int  // --snapshot-batch
	AllowNonTx bool // --allow-non-transactional
}

// AddFlags binds --snapshot and its companions.
func (o *SnapshotOptions) AddFlags(f *pflag.FlagSet, command bool) {
	if !command {
		f.BoolVar(&o.On, "snapshot", false, "with no checkpoint yet: copy the selected tables as they are now (op \"snapshot\" lines, or rows on --to), then stream from exactly that position; a snapshot killed part-way is continued from its last finished chunk")
	}
	f.IntVar(&o.Batch, "snapshot-batch", 1000, "snapshot rows per sink transaction: flushed together to -o, applied as one source transaction on --to mysql://")
	f.BoolVar(&o.AllowNonTx, "allow-non-transactional", false, "snapshot MyISAM/Aria/MEMORY tables too (read as they are when read, not at the snapshot's position: only safe when nothing writes to them meanwhile)")
}

// CheckSnapshotFlags checks the options as 'binlogcdc snapshot' does
// after parsing its flags (f: nil when set in code), and makes them a
// snapshot's: copy the selected tables, save the position they were
// copied at, and stop (Snapshot.On and Snapshot.Only).
func (o *StreamOptions) CheckSnapshotFlags(f *pflag.FlagSet) error {
	for _, n := range []string{"start-position", "start-gtid", "from", "snapshot", "signal-table", "snapshot-new-tables", "verify-every", "verify-on-diff"} {
		if flagChanged(f, n) {
			return UsageError{Msg: "--" + n + " is not a snapshot flag", Hint: "a snapshot starts now; 'binlogcdc stream' takes start flags (and --verify-every)"}
		}
	}
	o.Snapshot.On, o.Snapshot.Only = true, true
	if err := o.Kafka.take(f, &o.Replay.To); err != nil {
		return err
	}
	if err := o.Replay.check(f, &o.DDL); err != nil {
		return err
	}
	if err := checkStreamArgs(o); err != nil {
		return err
	}
	if err := o.checkSnapshotArgs(); err != nil {
		return err
	}
	if o.Checkpoint != "" {
		// An unfinished snapshot's checkpoint: the same command finishes it.
		if cp, err := checkpoint.Load(o.Checkpoint); err != nil {
			return err
		} else if cp != nil && !unfinishedSnapshot(cp) {
			return UsageError{Msg: "--checkpoint " + o.Checkpoint + " exists and holds no unfinished snapshot: a snapshot starts a stream anew", Hint: "resume it with 'binlogcdc stream --checkpoint " + o.Checkpoint + "', or move it away"}
		}
	}
	o.checked = true
	return nil
}

// unfinishedSnapshot reports whether cp holds the progress of a snapshot
// that did not finish copying.
func unfinishedSnapshot(cp *checkpoint.Checkpoint) bool {
	var st snapshot.ResumeState
	return cp.Snapshot != nil && st.UnmarshalJSON(cp.Snapshot) == nil && !st.Done
}

// checkSnapshotArgs checks --snapshot against the other flags.
func (o *StreamOptions) checkSnapshotArgs() error {
	if !o.Snapshot.On {
		return nil
	}
	if o.Kafka.ExactlyOnce {
		return UsageError{Msg: "--snapshot with --kafka-exactly-once is not supported yet", Hint: "snapshot at-least-once (without --kafka-exactly-once), or start from the binlogs"}
	}
	if o.Replay.To == "" && o.Replay.enabled() {
		return UsageError{Msg: "--snapshot writes JSON lines, --to mysql:// or --to kafka://, not SQL text", Hint: "drop --format sql, or use --to mysql://…"}
	}
	if o.Snapshot.Batch <= 0 {
		return UsageError{Msg: "--snapshot-batch must be positive", Hint: "--snapshot-batch 1000"}
	}
	return nil
}

// streamSnapshot is a snapshot that stream takes before following.
type streamSnapshot struct {
	src     *snapshot.Source
	tables  []snapshot.TableInfo
	creates []string // SHOW CREATE TABLE of each table, for the schema history
	hist    *schemahist.History
	redo    bool   // a target's earlier snapshot did not finish: empty its tables
	mark    string // CHECKPOINT.snapshot, an older version's mark on -o
	// state is the snapshot's progress, kept with the checkpoint (nil
	// when there is none to keep it with); resumed: it continues an
	// interrupted one, whose checkpoint the stream resumed from.
	state   *snapshot.ResumeState
	resumed bool
	// cutTo, when >= 0, is the size -o had before an interrupted
	// snapshot that is taken again as a whole.
	cutTo int64
}

// snapshotTargetResume returns the target's checkpoint unless a snapshot
// into it did not finish and saved no progress: then there is none, and
// the snapshot is taken again (its tables emptied). state is the
// progress a snapshot into it saved, if any.
func (o *StreamOptions) snapshotTargetResume(rp *replayRun, cp *checkpoint.Checkpoint, logf func(string, ...any)) (_ *checkpoint.Checkpoint, redo bool, state []byte, err error) {
	if rp == nil || rp.target == nil {
		return cp, false, nil, nil
	}
	unfinished, state, err := rp.target.SnapshotUnfinished()
	if err != nil || !unfinished {
		return cp, false, nil, err
	}
	if state != nil && cp != nil {
		return cp, false, state, nil
	}
	if !o.Snapshot.On {
		return cp, false, nil, fmt.Errorf("the last snapshot into the target (replica %q) did not finish: finish it with --snapshot (the same command as before)", o.Replay.ReplicaName)
	}
	logf("the last snapshot into the target (replica %q) did not finish, and saved no progress: taking it again", o.Replay.ReplicaName)
	return nil, true, nil, nil
}

// openSnapshot starts a consistent snapshot and lists its tables.
func (o *StreamOptions) openSnapshot(ctx context.Context, cfg binlog.LiveConfig, flavor string, filter *pipeline.Filter, logf func(string, ...any)) (*streamSnapshot, error) {
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
	logSkipped(skipped, logf) // snapshot_tables.go
	if err := o.checkSelected(tables, skipped, filter, logf); err != nil {
		src.Close()
		return nil, err
	}
	// The schema history's seed (schemahistory.go), read first thing in
	// the snapshot's session.
	creates := make([]string, len(tables))
	for i, t := range tables {
		if creates[i], err = src.ShowCreateTable(t.DB, t.Name); err != nil {
			src.Close()
			return nil, err
		}
	}
	p := src.Pos
	gt := ""
	if p.GTID != "" {
		gt = " (GTID position " + p.GTID + ")"
	}
	logf("snapshot of %d tables consistent with %s:%d%s", len(tables), p.File, p.Offset, gt)
	return &streamSnapshot{src: src, tables: tables, creates: creates, cutTo: -1}, nil
}

// keepsState reports whether the snapshot's progress has somewhere to be
// kept: the checkpoint file, or the target.
func (o *StreamOptions) keepsState(rp *replayRun) bool {
	return o.Checkpoint != "" || (rp != nil && rp.target != nil)
}

// beginSnapshot opens the consistent snapshot and lists its tables.
func (o *StreamOptions) beginSnapshot(ctx context.Context, cfg binlog.LiveConfig, flavor string, filter *pipeline.Filter, rp *replayRun, redo bool, logf func(string, ...any)) (*streamSnapshot, error) {
	var mark string
	if o.Output != "" && o.Checkpoint != "" {
		// An older version's mark: -o may end in an unfinished snapshot.
		var err error
		if mark, err = cutMarkedOutput(o.Output, o.Checkpoint, logf); err != nil {
			return nil, err
		}
	}
	snap, err := o.openSnapshot(ctx, cfg, flavor, filter, logf)
	if err != nil {
		return nil, err
	}
	snap.redo, snap.mark = redo, mark
	if o.keepsState(rp) {
		var size int64
		if st, err := os.Stat(o.Output); o.Output != "" && err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		snap.state = snapshot.NewResumeState(snap.src.Pos, size)
	}
	if rp != nil && rp.target != nil {
		if !redo { // nothing written yet: every table must be missing or empty
			for _, t := range snap.tables {
				if err := rp.target.CheckSnapshotTable(t.DB, t.Name); err != nil {
					snap.src.Close()
					return nil, err
				}
			}
		}
		if err := rp.target.BeginSnapshot(snap.src.Pos.Pos()); err != nil {
			snap.src.Close()
			return nil, err
		}
	}
	return snap, nil
}

// resumeSnapshot looks at the snapshot progress kept with the checkpoint
// the stream resumes from (at start). An unfinished snapshot is continued
// in a new consistent snapshot (snap), or taken again as a whole when
// that cannot be right (a DDL or a schema change since it began); a
// finished one whose window the stream has not passed yet is returned as
// done, to reconcile the stream with.
func (o *StreamOptions) resumeSnapshot(ctx context.Context, cfg binlog.LiveConfig, flavor string, filter *pipeline.Filter, rp *replayRun, raw []byte, where string, start change.Position, logf func(string, ...any)) (snap *streamSnapshot, done *snapshot.ResumeState, err error) {
	if raw == nil {
		return nil, nil, nil
	}
	var state snapshot.ResumeState
	if err := state.UnmarshalJSON(raw); err != nil {
		return nil, nil, fmt.Errorf("%s: %w; move it away to start over", where, err)
	}
	if state.Done {
		if state.Coverage.Forget(start) {
			if rp != nil && rp.target != nil {
				return nil, nil, rp.target.DropSnapshotMark()
			}
			return nil, nil, nil
		}
		logf("the snapshot's parts were read up to %s: changes before it are reconciled with what it holds", windowEnd(&state))
		return nil, &state, nil
	}
	if !o.Snapshot.On {
		return nil, nil, fmt.Errorf("%s holds an unfinished snapshot (%d rows copied): finish it with --snapshot (the same command as before), or move it away", where, state.Rows)
	}
	if snap, err = o.openSnapshot(ctx, cfg, flavor, filter, logf); err != nil {
		return nil, nil, err
	}
	why, err := snap.src.CheckResume(ctx, cfg, &state, snap.tables, filter)
	if err != nil {
		snap.src.Close()
		return nil, nil, err
	}
	if why != "" {
		logf("the interrupted snapshot cannot be continued (%s): taking it again as a whole", why)
		snap.state = snapshot.NewResumeState(snap.src.Pos, state.OutputSize)
		snap.redo, snap.cutTo = true, state.OutputSize
		if rp != nil && rp.target != nil {
			if err := rp.target.BeginSnapshot(snap.src.Pos.Pos()); err != nil {
				snap.src.Close()
				return nil, nil, err
			}
		}
		return snap, nil, nil
	}
	logf("continuing the interrupted snapshot (%d rows copied, consistent with %s:%d) in this one; the stream starts at %s:%d and reconciles",
		state.Rows, state.Start.File, state.Start.Offset, state.Start.File, state.Start.Offset)
	snap.state, snap.resumed = &state, true
	return snap, nil, nil
}

func windowEnd(s *snapshot.ResumeState) string {
	var m change.Position
	for _, tc := range s.Coverage.Tables() {
		if p := tc.MaxPos(); m.Before(p) {
			m = p
		}
	}
	return fmt.Sprintf("%s:%d", m.File, m.Offset)
}

// outputMark is CHECKPOINT.snapshot: while a snapshot is written to -o
// and its checkpoint is not saved yet, the size -o had before it. A run
// that finds it (killed inside the snapshot) cuts -o back to that size
// and takes the snapshot again, so -o holds each snapshot row once.
type outputMark struct {
	Output string `json:"output"`
	Size   int64  `json:"size"`
}

// cutMarkedOutput cuts -o back after an unfinished snapshot of an older
// version, which marked it in CHECKPOINT.snapshot (this one keeps its
// progress in the checkpoint). It returns the mark's path, "" for none.
func cutMarkedOutput(output, cp string, logf func(string, ...any)) (string, error) {
	mark := cp + ".snapshot"
	abs, err := filepath.Abs(output)
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(mark)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
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
	return mark, nil
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

// copy writes the snapshot's rows to sk, saving its progress with the
// checkpoint (the file's, by saver; the target's, with each commit) from
// the start. It returns the finished snapshot's coverage when the stream
// must reconcile changes with it (parts read at different positions),
// else nil; the target's checkpoint is then the stream's start.
func (s *streamSnapshot) copy(ctx context.Context, sk sink.Sink, rp *replayRun, o *StreamOptions, saver *checkpoint.Saver, startGTID func(change.Position) (string, error), stderr io.Writer) (*pipeline.Coverage, error) {
	defer s.src.Close()
	// Maxwell brackets each table's bootstrap rows with bootstrap-start
	// and bootstrap-complete records (not for a target server).
	// Debezium's source.snapshot says which rows are the first and the
	// last (of a table, of the snapshot).
	opts := snapshot.Options{Batch: o.Snapshot.Batch, State: s.state, Marks: o.Replay.Format == "maxwell",
		Places: o.Replay.Format == "debezium"}
	if h := s.hist; h != nil {
		// What the schema history adds to a table (defaults, generated
		// columns, MariaDB JSON), as the binlog's rows of it carry.
		pos := s.src.Pos.Pos()
		opts.Annotate = func(t *tablemap.Table) *tablemap.Table {
			if a, warn := h.Annotate(t, pos); warn == "" && a != nil {
				return a
			}
			return t
		}
	}
	if rp != nil && rp.target != nil {
		opts.Marks, opts.Places, opts.Annotate = false, false, nil
		sk = snapshot.AsInserts(sk)
		opts.BeforeTable = func(t *tablemap.Table, fresh bool) error {
			return rp.target.PrepareSnapshotTable(t, fresh && (s.redo || s.resumed), !fresh)
		}
	}
	if s.state != nil {
		data, err := s.state.MarshalJSON()
		if err != nil {
			return nil, err
		}
		saver.SetSnapshot(data)
		if s.resumed {
			saver.Resume(&checkpoint.Checkpoint{File: s.state.Start.File, Offset: s.state.Start.Offset, GTIDSet: s.state.StartGTID}, s.state.Start)
		} else {
			gtid, err := startGTID(s.state.Start)
			if err != nil {
				return nil, err
			}
			if err := saver.Start(s.state.Start, gtid); err != nil {
				return nil, err
			}
		}
		if err := s.saved(); err != nil {
			return nil, err
		}
		opts.Saved = func(tx change.TxEnd) error {
			saver.SetSnapshot(tx.Snapshot)
			return saver.Commit(change.TxEnd{Next: tx.Next, Time: tx.Time})
		}
		// Progress is saved at most once a second while the snapshot is
		// copied (or every --checkpoint-interval, when longer): a save
		// syncs -o and the checkpoint, and one per batch doubled the
		// snapshot's time. A kill loses at most that much copying.
		interval := saver.Interval
		if os.Getenv("BINLOGCDC_TEST_SNAPSHOT_SAVE_EVERY_CHUNK") == "" { // tests: every chunk's kill point
			saver.Interval = max(interval, snapshotSaveInterval)
		}
		defer func() { saver.Interval = interval }()
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
				p.TablesDone, p.Tables, p.Rows, p.EstimatedRows, p.Rate(), left, p.Table)
		}
	}
	start := time.Now()
	st, err := s.src.Copy(ctx, sk, s.tables, opts)
	if err != nil {
		return nil, err
	}
	var cov *pipeline.Coverage
	var done []byte
	if s.state != nil {
		s.state.Done = true
		if !s.state.Coverage.Forget(s.state.Start) {
			cov = s.state.Coverage
			if done, err = s.state.MarshalJSON(); err != nil {
				return nil, err
			}
		}
		saver.SetSnapshot(done)
		if err := saver.Commit(change.TxEnd{Next: s.state.Start, Time: s.src.Pos.Time}); err != nil {
			return nil, err
		}
		if err := saver.Flush(); err != nil {
			return nil, err
		}
	}
	if rp != nil && rp.target != nil {
		if err := rp.target.EndSnapshot(done); err != nil {
			return nil, err
		}
	}
	d := time.Since(start)
	fmt.Fprintf(stderr, "binlogcdc: snapshot: %d rows of %d tables in %v (%.0f rows/s), consistent with %s:%d\n",
		st.Rows, st.Tables, d.Round(time.Millisecond), float64(st.Rows)/max(d.Seconds(), 0.001), s.src.Pos.File, s.src.Pos.Offset)
	if cov != nil {
		fmt.Fprintf(stderr, "binlogcdc: snapshot: parts were read at later positions (up to %s) after an interruption: the stream starts at %s:%d and reconciles each change with them until it passes there\n",
			windowEnd(s.state), s.state.Start.File, s.state.Start.Offset)
	}
	return cov, nil
}

// snapshotStateOf returns the snapshot progress kept with the checkpoint
// the stream resumes from, and where it is kept.
func snapshotStateOf(targetCP *checkpoint.Checkpoint, targetState []byte, targetWhere string, cp *checkpoint.Checkpoint, path string) ([]byte, string) {
	switch {
	case targetCP != nil:
		return targetState, targetWhere
	case cp != nil:
		return cp.Snapshot, path
	}
	return nil, ""
}

// coverageOnCommit saves the finished snapshot's progress with each
// checkpoint until the stream passed its window (the pipeline forgets
// the tables it passed before OnCommit). cov is the stream's coverage;
// its Incremental tables are saved with the incremental snapshot's state.
func coverageOnCommit(cov *pipeline.Coverage, saver *checkpoint.Saver) func(change.TxEnd) error {
	if !cov.HasInitial() {
		return saver.Commit
	}
	// Tests: BINLOGCDC_TEST_SNAPSHOT_KILL=window:N kills the process (as
	// kill -9) after the N-th transaction inside the window.
	kill, _ := strconv.Atoi(strings.TrimPrefix(os.Getenv("BINLOGCDC_TEST_SNAPSHOT_KILL"), "window:"))
	if !strings.HasPrefix(os.Getenv("BINLOGCDC_TEST_SNAPSHOT_KILL"), "window:") {
		kill = 0
	}
	n := 0
	return func(tx change.TxEnd) error {
		if cov != nil && !cov.HasInitial() {
			saver.SetSnapshot(nil)
			cov = nil
		}
		err := saver.Commit(tx)
		if n++; cov != nil && kill > 0 && n >= kill {
			if p, perr := os.FindProcess(os.Getpid()); perr == nil {
				p.Kill()
				select {}
			}
		}
		return err
	}
}

// snapshotSaveInterval bounds how often a snapshot's progress is saved
// to the checkpoint file.
const snapshotSaveInterval = time.Second

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
	if snap.state != nil { // where the stream continues (the first part's position)
		p.File, p.Offset, p.GTID = snap.state.Start.File, snap.state.Start.Offset, snap.state.StartGTID
	}
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
