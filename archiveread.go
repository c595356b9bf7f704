package binlogcdc

// Reading an archive DIR (read, recover) and finding transactions
// (--find, --stop-before, --stop-before-gtid): flags and wiring; the
// logic is archive.PlanRead and pipeline.Find.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/archive"
	"github.com/binlogcdc/binlogcdc/archive/s3up"
	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
)

// FindOptions are read's flags that find transactions.
type FindOptions struct {
	StopBefore     string // --stop-before: stop before the first transaction that does 'OP db.table' ('DROP TABLE shop.orders', 'DDL')
	StopBeforeGTID string // --stop-before-gtid: stop before the transaction with this GTID
	Find           string // --find: list the transactions that do 'OP [db.table]' instead of the changes

	// Set by check.
	stop  *pipeline.Matcher
	find  *pipeline.Matcher
	found change.Position // where the stop's transaction starts
}

// AddFlags binds the flags.
func (o *FindOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.StopBefore, "stop-before", "", "stop before the first transaction that does `OP db.table`: 'DROP TABLE shop.orders', 'DELETE shop.orders' (rows), 'TRUNCATE shop.*', 'DROP DATABASE shop', 'DDL'; the input is searched first, and no match is an error before anything is written")
	f.StringVar(&o.StopBeforeGTID, "stop-before-gtid", "", "stop before the transaction with this `GTID` (0-1-1234, uuid:1234); not found in the input: an error before anything is written")
	f.StringVar(&o.Find, "find", "", "instead of the changes, list the transactions that do `OP [db.table]` (as --stop-before; 'DDL' lists every schema change): start position, GTID, commit time (UTC), what matched; one a line")
}

// check parses the specs.
func (o *FindOptions) check(replay bool, kafka bool) error {
	var err error
	if o.StopBefore != "" && o.StopBeforeGTID != "" {
		return UsageError{Msg: "give one of --stop-before and --stop-before-gtid", Hint: "--stop-before 'DROP TABLE shop.orders'"}
	}
	if o.StopBefore != "" {
		if o.stop, err = pipeline.ParseMatcher(o.StopBefore); err != nil {
			return UsageError{Msg: "--stop-before " + err.Error(), Hint: "--stop-before 'DROP TABLE shop.orders'"}
		}
	}
	if g := strings.TrimSpace(o.StopBeforeGTID); g != "" {
		if strings.Contains(g, ",") {
			return UsageError{Msg: "--stop-before-gtid takes one GTID, not a set: " + g, Hint: "--stop-before-gtid 0-1-1234"}
		}
		o.stop = pipeline.GTIDMatcher(g)
	}
	if o.Find != "" {
		if o.find, err = pipeline.ParseMatcher(o.Find); err != nil {
			return UsageError{Msg: "--find " + err.Error(), Hint: "--find 'DROP TABLE shop.orders', or --find DDL"}
		}
		if replay || kafka {
			return UsageError{Msg: "--find lists transactions; it applies or formats nothing (--to, --format, --flashback)", Hint: "run --find first, then --stop-before or --stop-position with --to"}
		}
		if o.stop != nil {
			return UsageError{Msg: "--find lists every match; --stop-before/--stop-before-gtid stop at the first", Hint: "use one of them"}
		}
	}
	return nil
}

// archiveDir returns the one FILE argument when it is a directory (an
// archive, or a mistake PlanRead names) or an s3:// archive, else "".
func archiveDir(args []string) string {
	if len(args) != 1 {
		return ""
	}
	if isS3(args[0]) {
		return args[0]
	}
	if fi, err := os.Stat(args[0]); err == nil && fi.IsDir() {
		return args[0]
	}
	return ""
}

// planArchive chooses the files of the archive dir for the bounds
// (archive.PlanRead) and notes them on remote, which opens them. The
// outputs may not be inside dir.
func planArchive(dir string, r archive.ReadRange, remote *RemoteOptions, outputs map[string]string, logf func(string, ...any)) (*archive.ReadPlan, error) {
	if isS3(dir) {
		st, err := s3up.NewReader(dir, remote.S3Endpoint)
		if err != nil {
			return nil, UsageError{Msg: err.Error(), Hint: "binlogcdc read s3://backups/db1-binlogs (--s3-endpoint http://host:port for a store other than AWS S3)"}
		}
		ctx := remote.Ctx
		if ctx == nil {
			ctx = context.Background()
		}
		plan, err := archive.PlanReadStore(ctx, st, r)
		if err != nil {
			return nil, err
		}
		return notePlan(plan, st.String(), r, remote, logf), nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	for flag, out := range outputs {
		if out == "" || out == "-" {
			continue
		}
		if a, err := filepath.Abs(out); err == nil && (a == abs || strings.HasPrefix(a, abs+string(filepath.Separator))) {
			return nil, UsageError{Msg: fmt.Sprintf("%s %s is inside the archive %s, which is an input: binlogcdc never writes there", flag, out, dir),
				Hint: fmt.Sprintf("write it elsewhere, e.g. %s %s", flag, filepath.Join(os.TempDir(), filepath.Base(out)))}
		}
	}
	if !archive.IsArchive(dir) {
		return nil, UsageError{Msg: fmt.Sprintf("%s: is a directory, not a binlog file, nor an archive of binlogcdc (it has no binlogcdc-archive.json)", dir),
			Hint: "give binlog files (or the server's .index file), or the directory 'binlogcdc archive --dir' writes"}
	}
	plan, err := archive.PlanRead(dir, r)
	if err != nil {
		return nil, err
	}
	return notePlan(plan, dir, r, remote, logf), nil
}

// notePlan notes the plan on remote and says what it reads.
func notePlan(plan *archive.ReadPlan, dir string, r archive.ReadRange, remote *RemoteOptions, logf func(string, ...any)) *archive.ReadPlan {
	remote.arch = plan
	switch {
	case plan.Empty:
		logf("the archive %s holds no transaction after %s: nothing to read", dir, r.StartGTID)
	case plan.Open:
		logf("reading the archive %s: %s (the last is still being written: read up to its last whole event)", dir, plan.Range)
	default:
		logf("reading the archive %s: %s", dir, plan.Range)
	}
	return plan
}

// isS3 reports whether the argument names an archive in a bucket.
func isS3(arg string) bool { return strings.HasPrefix(arg, "s3://") }

// readRange is the archive.ReadRange of read's bounds (checked by
// pipelineOptions already).
func (o *ReadOptions) readRange(popts pipeline.Options, start change.Position) archive.ReadRange {
	return archive.ReadRange{StartFile: start.File, StartGTID: o.Remote.StartGTID, StartTime: popts.StartTime,
		StopTime: popts.StopTime, StopFile: popts.Stop.File}
}

// archiveOptions sets what an archive read needs in popts.
func (o *RemoteOptions) archiveOptions(popts *pipeline.Options) {
	if o.arch != nil {
		popts.SkipGTID, popts.OpenEnd = o.arch.Skip, o.arch.Open
		if o.StartGTID != "" && popts.UnknownXA == "" {
			// An XA COMMIT whose XA PREPARE is in the GTID position skipped:
			// its changes are not in what is read; an error, not a note.
			popts.UnknownXA = "the --start-gtid position " + o.StartGTID
		}
	}
}

// checkStopped checks, after a run, that it reached the transaction
// --stop-before/--stop-before-gtid found (else the two reads of the
// input disagreed), and that a read of an archive whose later files were
// left out (a stop bound chose the last) did reach its stop.
func (o *ReadOptions) checkStopped(p *pipeline.Pipeline) error {
	if o.Find.stop != nil && !p.Stats.Stopped {
		return fmt.Errorf("the run ended without reaching the transaction the search for %s found (at %s:%d, where the run stops): the input changed between the two reads; the changes up to %s:%d were written",
			o.Find.stop.Spec, o.Find.found.File, o.Find.found.Offset, p.Stats.Last.File, p.Stats.Last.Offset)
	}
	return o.Remote.archiveEnd(p)
}

// archiveEnd: see checkStopped.
func (o *RemoteOptions) archiveEnd(p *pipeline.Pipeline) error {
	if o.arch == nil || !o.arch.More || p.Stats.Stopped {
		return nil
	}
	return fmt.Errorf("the read reached the end of %s without reaching its stop bound; the archive's later files were left out, so the changes after it were not read\n"+
		"hint: give --stop-position in a later file (or a later --stop-datetime), or leave the stop bound out", o.arch.Files[len(o.arch.Files)-1])
}

// openArchived opens the archive plan's parts (binlog.OpenParts) from
// start (zero: the plan's start).
func (o *RemoteOptions) openArchived(start change.Position) (binlog.Source, error) {
	src, err := binlog.OpenParts(o.arch.Parts, start)
	if err != nil {
		return nil, err
	}
	src.Warnf = o.Warnf
	return src, nil
}

// resumeArchived is resumeFiles (replay.go) for an archive plan: reading
// resumes at the target's checkpoint cp when it is in one of the plan's
// files (across server histories: change.Position.Compare).
func (o *RemoteOptions) resumeArchived(cp change.Position) (start change.Position, done bool, err error) {
	parts := o.arch.Parts
	for _, p := range parts {
		if p.Name == cp.File {
			return cp, false, nil
		}
	}
	last := parts[len(parts)-1]
	if !cp.Before(change.Position{File: last.Name}) {
		return start, true, nil
	}
	return start, false, fmt.Errorf("the target's checkpoint is at %s:%d, which is not among the archive's files read (%s … %s); start the read there (--start-position %s:%d), or use another --replica-name",
		cp.File, cp.Offset, parts[0].Name, last.Name, cp.File, cp.Offset)
}

// findStop is --stop-before/--stop-before-gtid: it reads the input from
// start once, as the run will, to find the first matching transaction,
// and sets popts.Stop right before it. No match is an error: nothing was
// written yet.
func (o *ReadOptions) findStop(ctx context.Context, files []string, start change.Position, popts *pipeline.Options, logf func(string, ...any)) error {
	m := o.Find.stop
	if m == nil {
		return nil
	}
	src, err := o.Remote.Open(ctx, files, start)
	if err != nil {
		return err
	}
	var found *pipeline.Match
	err = pipeline.Find(ctx, src, *popts, m, func(mt pipeline.Match) bool { found = &mt; return false })
	src.Close()
	if err != nil {
		return err
	}
	flag := "--stop-before " + o.Find.StopBefore
	if o.Find.StopBeforeGTID != "" {
		flag = "--stop-before-gtid " + o.Find.StopBeforeGTID
	}
	if found == nil {
		where := "from its start"
		if start.File != "" {
			where = fmt.Sprintf("from %s:%d", start.File, start.Offset)
		}
		return fmt.Errorf("%s: no transaction of the input (read %s to its end or stop bound) matches: nothing was written\n"+
			"hint: check the name (--find '%s' lists what matches; --find DDL every schema change), the start, and that the input holds the transaction", flag, where, m.Spec)
	}
	if popts.Stop.File == "" || found.Start.Before(popts.Stop) {
		popts.Stop = found.Start
	}
	o.Find.found = found.Start
	logf("%s: stopping before the transaction at %s:%d (GTID %s, committed %s): %s", flag, found.Start.File, found.Start.Offset,
		orNone(found.GTID), found.Time.UTC().Format("2006-01-02 15:04:05"), found.What)
	return nil
}

// checkResume refuses a target whose checkpoint (r.resume) is past the
// transaction --stop-before found: it was applied already.
func (o *FindOptions) checkResume(r *replayRun) error {
	if o.stop == nil || r.applier == nil || r.resume.File == "" || !o.found.Before(r.resume) {
		return nil
	}
	return fmt.Errorf("%s: the transaction found is at %s:%d, but the target's checkpoint (replica %q) is past it, at %s:%d: it was applied already; nothing was written now\n"+
		"hint: restore the target from the backup again (and %s), then run this command", o.stop.Spec, o.found.File, o.found.Offset, r.o.ReplicaName, r.resume.File, r.resume.Offset, r.forget())
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// runFind is --find: one line per matching transaction.
func runFind(ctx context.Context, o ReadOptions, files []string, start change.Position, popts pipeline.Options, stdout, stderr io.Writer) error {
	src, err := o.Remote.Open(ctx, files, start)
	if err != nil {
		return err
	}
	defer src.Close()
	out, closeOut, err := createOutput(o.Output, stdout) // read.go
	if err != nil {
		return err
	}
	defer closeOut()
	n := 0
	var werr error
	err = pipeline.Find(ctx, src, popts, o.Find.find, func(m pipeline.Match) bool {
		n++
		_, werr = fmt.Fprintf(out, "%s:%d\t%s\t%s\t%s\n", m.Start.File, m.Start.Offset, orNone(m.GTID), m.Time.UTC().Format("2006-01-02 15:04:05"), m.What)
		return werr == nil
	})
	if err == nil {
		err = werr
	}
	if cerr := closeOut(); err == nil && cerr != nil {
		err = fmt.Errorf("-o %s: %w", o.Output, cerr)
	}
	fmt.Fprintf(stderr, "binlogcdc: --find %s: %d transaction(s)\n", o.Find.Find, n)
	return err
}
