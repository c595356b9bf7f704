// Package live verifies a copy that a stream keeps (stream --to
// mysql:// --verify-every): every so often it compares the replicated
// tables of the source and the target, each read in a consistent
// snapshot that holds exactly the same transactions, with verify's exact
// comparison (verify.Run).
//
// A pass holds the applier at a transaction boundary, begins the
// source's snapshot and reads its binlog position (MariaDB's
// Binlog_snapshot_file/position), lets the applier apply every
// transaction up to that position and none after, has the target commit
// them, begins the target's snapshot and lets the applier go on (see
// gate.go). The applier waits only for the time the target takes to
// commit what it had and to begin a snapshot; the comparison itself runs
// beside it. So a difference is never replication lag, and "equal" is
// exact (verify's proof: at most 2^-128 per table of a false equal).
package live

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/metrics"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/verify"
)

// Config says how and how often to verify.
type Config struct {
	Every          time.Duration // the pause between the end of a pass and the start of the next
	Source, Target verify.Config
	Select         func(db, table string) bool // the replicated tables (nil: all)
	StrictSchema   bool
	MaxRows        int // differing rows named per table (verify.Options.MaxRows)
	// ChunkRows is how many rows of a table a chunk holds: each chunk is
	// compared in its own pair of snapshots (default DefaultChunkRows).
	ChunkRows int
	// Stop, set by --verify-on-diff stop, ends the stream with err when a
	// pass finds a difference; nil: reported only.
	Stop func(err error)
	// Flush commits what the target's sink holds (mysqlsink.Sink.Flush).
	Flush func() error
	// At is where the target stands when the stream starts: where the
	// last transaction it applied ended (its checkpoint).
	At change.Position
	// Settled reports whether the target holds exactly the source's
	// transactions up to where it stands (false while the window of a
	// resumed snapshot is reconciled): passes wait until it does. It is
	// called on the applier's goroutine, at each commit. Nil: always.
	Settled func() bool
	Metrics *metrics.Stream
	Logf    func(format string, args ...any)
}

// DefaultChunkRows is Config.ChunkRows's default.
const DefaultChunkRows = 10000

// Sample is how many differing rows of a table a report names.
const Sample = 10

// Verifier is the sink that runs the passes: the target's sink, wrapped.
type Verifier struct {
	gate
	cfg     Config
	settled chan struct{} // closed once Settled said true
	once    sync.Once
	cancel  context.CancelFunc
	done    chan struct{}
}

// Start wraps the target's sink and starts the passes, the first one
// Every from now; Close stops them.
func Start(ctx context.Context, inner sink.Sink, cfg Config) (*Verifier, error) {
	if cfg.Every <= 0 || cfg.Flush == nil || cfg.Logf == nil {
		return nil, errors.New("live: Every, Flush and Logf are required")
	}
	if cfg.ChunkRows <= 0 {
		cfg.ChunkRows = DefaultChunkRows
	}
	v := &Verifier{cfg: cfg, settled: make(chan struct{}), done: make(chan struct{})}
	v.gate = gate{inner: inner, flush: cfg.Flush, quiet: quiet, changed: make(chan struct{}), last: cfg.At}
	if cfg.Settled == nil || cfg.Settled() {
		v.once.Do(func() { close(v.settled) })
	}
	cfg.Metrics.VerifyOn()
	ctx, v.cancel = context.WithCancel(ctx)
	go v.loop(ctx)
	return v, nil
}

// Commit notes, after each transaction, whether the target is settled.
func (v *Verifier) Commit(ctx context.Context, tx change.TxEnd) error {
	err := v.gate.Commit(ctx, tx)
	if v.cfg.Settled != nil && v.cfg.Settled() {
		v.once.Do(func() { close(v.settled) })
	}
	return err
}

// Close stops the passes (one under way is abandoned) and closes the
// target's sink.
func (v *Verifier) Close(ctx context.Context) error {
	v.cancel()
	<-v.done
	return v.gate.Close(ctx)
}

func (v *Verifier) loop(ctx context.Context) {
	defer close(v.done)
	t := time.NewTimer(v.cfg.Every)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		select {
		case <-v.settled:
		default:
			v.cfg.Logf("verify: waiting for the target to finish reconciling the snapshot before the first pass")
			select {
			case <-ctx.Done():
				return
			case <-v.settled:
			}
		}
		v.pass(ctx, n)
		if ctx.Err() != nil {
			return
		}
		t.Reset(v.cfg.Every)
	}
}

// pass compares the source and the target once and reports the result.
func (v *Verifier) pass(ctx context.Context, n int) {
	started := time.Now()
	v.gate.takeHeld()
	v.gate.takeMax()
	res, err := v.compare(ctx)
	if ctx.Err() != nil {
		return // stopping: the pass was abandoned, not failed
	}
	if err != nil {
		v.cfg.Metrics.VerifyFailed(err)
		v.cfg.Logf("verify: pass %d failed, nothing proven: %v", n, err)
		return
	}
	v.cfg.Metrics.VerifyPassEnd(v.gate.takeMax(), len(res.unverified))
	took := time.Since(started).Round(time.Millisecond)
	for _, t := range res.unverified {
		v.cfg.Logf("verify: pass %d: %s", n, t)
	}
	verified := res.tables - len(res.unverified)
	var names []string
	seen := map[string]bool{}
	for _, t := range res.differing {
		if name := quote(t.DB) + "." + quote(t.Name); !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	if len(names) == 0 && len(res.unsure) > 0 {
		v.cfg.Logf("verify: pass %d: %d of %d tables equal; inconclusive for %s: a DDL was applied while the pass read them (the next pass will tell) (%v)",
			n, verified-len(res.unsure), verified, strings.Join(res.unsure, ", "), took)
		return
	}
	if len(names) == 0 {
		v.cfg.Metrics.VerifyEqual()
		v.cfg.Logf("verify: pass %d: all %d tables equal, each in snapshots of the same transactions (%d chunks, the last at the source's binlog %s) (%v; the applier waited %v)",
			n, verified, res.chunks, res.last, took, v.gate.takeHeld().Round(time.Microsecond))
		return
	}
	what := fmt.Sprintf("%d of %d tables differ from the source: %s", len(names), verified, strings.Join(names, ", "))
	v.cfg.Metrics.VerifyDiffer(len(names), "verification pass "+fmt.Sprint(n)+": "+what)
	v.cfg.Logf("verify: pass %d: %s (%v; the applier waited %v)", n, what, took, v.gate.takeHeld().Round(time.Microsecond))
	for _, t := range res.differing {
		in := ""
		if r := res.rng[t]; r != "" {
			in = " in the chunk " + r
		}
		v.cfg.Logf("verify:   %s%s: compared at the source's binlog %s", quote(t.DB)+"."+quote(t.Name), in, res.at[t])
		for _, line := range describe(t) {
			v.cfg.Logf("verify:   %s", line)
		}
	}
	if v.cfg.Stop != nil {
		v.cfg.Stop(fmt.Errorf("verify: %s (listed above); stopped (--verify-on-diff warn reports and goes on)", what))
	}
}

func quote(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// describe is a differing table's report: its line and a sample of the
// differing rows, by key.
func describe(t *verify.Table) []string {
	out := []string{t.String()}
	if len(t.Rows) == 0 {
		return out
	}
	if len(t.Rows) > Sample {
		out = append(out, fmt.Sprintf("  the first %d of the %d differing rows named:", Sample, len(t.Rows)))
	}
	for i, r := range t.Rows {
		if i == Sample {
			break
		}
		out = append(out, fmt.Sprintf("  %-7s %s", r.Kind, r.Row))
	}
	return out
}
