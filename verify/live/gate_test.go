package live

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/verify"
)

// fakeSink records what reached it.
type fakeSink struct {
	mu      sync.Mutex
	writes  []change.Position // each change's Pos, in order
	commits []change.Position // each TxEnd.Next, in order
	flushed int               // len(commits) at the last flush
}

func (f *fakeSink) Write(_ context.Context, c *change.Change) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes = append(f.writes, c.Pos)
	return nil
}

func (f *fakeSink) Commit(_ context.Context, tx change.TxEnd) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commits = append(f.commits, tx.Next)
	return nil
}
func (f *fakeSink) Rollback(context.Context) error { return nil }
func (f *fakeSink) Close(context.Context) error    { return nil }
func (f *fakeSink) flush() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flushed = len(f.commits)
	return nil
}

// state is what the sink holds: its commits' ends and whether all were flushed.
func (f *fakeSink) state() ([]change.Position, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]change.Position(nil), f.commits...), f.flushed == len(f.commits)
}

func at(off uint64) change.Position { return change.Position{File: "b.000001", Offset: off} }

// tx is one source transaction: its changes' positions (none: a
// transaction the filters left empty) and where it ends.
type tx struct {
	changes []change.Position
	commit  change.Position // XA: where its changes take effect (CommitPos)
	end     change.Position
}

func newGate(inner *fakeSink, start change.Position, quietTo func(from, to change.Position) bool) *gate {
	return &gate{inner: inner, flush: inner.flush, changed: make(chan struct{}), last: start,
		quiet: func(_ context.Context, _ verify.Querier, from, to change.Position) (bool, error) {
			return quietTo != nil && quietTo(from, to), nil
		}}
}

// apply runs the transactions through g on a goroutine of its own, as
// the pipeline does; the channel gets its end.
func apply(ctx context.Context, g *gate, txs []tx) <-chan error {
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			for _, t := range txs {
				for _, p := range t.changes {
					if err := g.Write(ctx, &change.Change{Op: change.Insert, Pos: p, CommitPos: t.commit}); err != nil {
						return err
					}
				}
				if err := g.Commit(ctx, change.TxEnd{Next: t.end}); err != nil {
					return err
				}
			}
			return nil
		}()
	}()
	return done
}

// snapshotAt holds g, lets it run to pos and returns what the sink held
// when the target's snapshot would begin.
func snapshotAt(t *testing.T, g *gate, inner *fakeSink, pos string) ([]change.Position, error) {
	t.Helper()
	ctx := context.Background()
	if err := g.Hold(ctx); err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	var held []change.Position
	err := g.At(ctx, nil, pos, func() error {
		var flushed bool
		held, flushed = inner.state()
		if !flushed {
			t.Errorf("the target's snapshot began before the sink committed all it held")
		}
		return nil
	})
	return held, err
}

// TestGateStopsAtTheSnapshot: the applier, held before the source's
// snapshot began, applies every transaction up to its position and none
// after before the target's snapshot begins, then goes on.
func TestGateStopsAtTheSnapshot(t *testing.T) {
	inner := &fakeSink{}
	g := newGate(inner, at(4), nil)
	ctx := context.Background()
	// Held before anything is applied: the snapshot is at 300, the end
	// of the third transaction; the fourth must wait.
	if err := g.Hold(ctx); err != nil {
		t.Fatal(err)
	}
	txs := []tx{
		{changes: []change.Position{at(10), at(50)}, end: at(100)},
		{end: at(200)}, // left empty by the filters
		{changes: []change.Position{at(210)}, end: at(300)},
		{changes: []change.Position{at(310)}, end: at(400)},
		{changes: []change.Position{at(410)}, end: at(500)},
	}
	done := apply(ctx, g, txs)
	var held []change.Position
	err := g.At(ctx, nil, "b.000001:300", func() error {
		held, _ = inner.state()
		return nil
	})
	g.Release()
	if err != nil {
		t.Fatal(err)
	}
	if want := []change.Position{at(100), at(200), at(300)}; !equal(held, want) {
		t.Fatalf("at the target's snapshot the sink held %v, want %v", held, want)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, _ := inner.state(); len(got) != 5 {
		t.Fatalf("after the release the applier went on to %v, want all 5 transactions", got)
	}
}

// TestGateXACommitAfterSnapshot: an XA transaction's changes, logged at
// its XA PREPARE before the snapshot, take effect at its XA COMMIT after
// it: they wait.
func TestGateXACommitAfterSnapshot(t *testing.T) {
	inner := &fakeSink{}
	g := newGate(inner, at(4), nil)
	ctx := context.Background()
	if err := g.Hold(ctx); err != nil {
		t.Fatal(err)
	}
	// The snapshot is at 300 but the applier's last commit ended at 250:
	// only a transaction after it (the XA COMMIT at 320) tells it is there.
	done := apply(ctx, g, []tx{{changes: []change.Position{at(10)}, end: at(250)},
		{changes: []change.Position{at(20)}, commit: at(320), end: at(400)}})
	var held []change.Position
	err := g.At(ctx, nil, "b.000001:300", func() error { held, _ = inner.state(); return nil })
	g.Release()
	if err != nil {
		t.Fatal(err)
	}
	if want := []change.Position{at(250)}; !equal(held, want) {
		t.Fatalf("held %v, want %v", held, want)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestGateIdleAfterHeader: a snapshot past the applier's last commit
// only by events that change nothing (a new binlog file's header) is
// reached at once, when the source says so; otherwise the applier is
// waited for.
func TestGateIdleAfterHeader(t *testing.T) {
	inner := &fakeSink{}
	snap := change.Position{File: "b.000002", Offset: 339}
	g := newGate(inner, at(811), func(from, to change.Position) bool { return from == at(811) && to == snap })
	held, err := snapshotAt(t, g, inner, "b.000002:339")
	if err != nil || len(held) != 0 {
		t.Fatalf("idle applier: held %v, err %v; want nothing, no error", held, err)
	}

	// Not quiet: the applier has a transaction to apply first.
	g = newGate(inner, at(811), nil)
	ctx := context.Background()
	if err := g.Hold(ctx); err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() {
		res <- g.At(ctx, nil, "b.000002:551", func() error { held, _ = inner.state(); return nil })
		g.Release()
	}()
	if err := <-apply(ctx, g, []tx{{changes: []change.Position{{File: "b.000002", Offset: 381}}, end: change.Position{File: "b.000002", Offset: 551}}}); err != nil {
		t.Fatal(err)
	}
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if len(held) != 1 || held[0].Offset != 551 {
		t.Fatalf("held %v, want the transaction ending at b.000002:551", held)
	}
}

// TestGateHoldWaitsForOpenTransaction: Hold returns only once the open
// transaction was handed on whole.
func TestGateHoldWaitsForOpenTransaction(t *testing.T) {
	inner := &fakeSink{}
	g := newGate(inner, at(4), nil)
	ctx := context.Background()
	if err := g.Write(ctx, &change.Change{Pos: at(10)}); err != nil {
		t.Fatal(err)
	}
	held := make(chan error, 1)
	go func() { held <- g.Hold(ctx) }()
	// Hold cannot return before the Commit: the transaction is open.
	if err := g.Commit(ctx, change.TxEnd{Next: at(100)}); err != nil {
		t.Fatal(err)
	}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if got, _ := inner.state(); len(got) != 1 {
		t.Fatalf("commits %v, want the open transaction's", got)
	}
	// Held: the next transaction waits until its context ends.
	cctx, cancel := context.WithCancel(ctx)
	w := make(chan error, 1)
	go func() { w <- g.Write(cctx, &change.Change{Pos: at(110)}) }()
	waitFor(g, func() bool { return g.waiting })
	cancel()
	if err := <-w; !errors.Is(err, context.Canceled) {
		t.Fatalf("a write while held, cancelled: %v", err)
	}
	if len(inner.writes) != 1 {
		t.Fatalf("writes %v: the held one reached the sink", inner.writes)
	}
	g.Release()
}

// TestGatePastSnapshot: an applier already past the snapshot is an
// error, never a comparison.
func TestGatePastSnapshot(t *testing.T) {
	inner := &fakeSink{}
	g := newGate(inner, at(500), nil)
	_, err := snapshotAt(t, g, inner, "b.000001:300")
	if !errors.Is(err, errPast) || !strings.Contains(err.Error(), "past the source's snapshot at b.000001:300") {
		t.Fatalf("err %v, want past the snapshot", err)
	}
	if _, err := snapshotAt(t, g, inner, "b.000001"); err == nil {
		t.Fatal("a position without an offset was taken")
	}
}

// waitFor polls cond under g.mu, waking at each change of the gate.
func waitFor(g *gate, cond func() bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for !cond() {
		g.wait(context.Background())
	}
}

func equal(a, b []change.Position) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzParsePos: a position is parsed or refused, never a panic, and
// what is parsed prints back the same.
func FuzzParsePos(f *testing.F) {
	for _, s := range []string{"binlog.000001:4", "b:0", ":4", "b:", "b:x", "a:b:12", "", "b:18446744073709551616"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parsePos(s)
		if err != nil {
			return
		}
		if p.File == "" {
			t.Fatalf("%q parsed without a file", s)
		}
	})
}

func TestParsePos(t *testing.T) {
	for s, want := range map[string]change.Position{"binlog.000001:4": {File: "binlog.000001", Offset: 4}, "a:b:12": {File: "a:b", Offset: 12}} {
		if p, err := parsePos(s); err != nil || p != want {
			t.Errorf("parsePos(%q) = %v, %v; want %v", s, p, err, want)
		}
	}
	for _, s := range []string{"", ":4", "b:", "b:x", "b:12abc", "b:-1", "b:18446744073709551616"} {
		if p, err := parsePos(s); err == nil {
			t.Errorf("parsePos(%q) = %v, want an error", s, p)
		}
	}
}

// TestGateDDLAfter: a DDL applied after the snapshot, up to the source's
// position at the end of the pass, is found; one before it is not.
func TestGateDDLAfter(t *testing.T) {
	inner := &fakeSink{}
	g := newGate(inner, at(4), nil)
	ctx := context.Background()
	ddl := func(pos, end uint64) {
		if err := g.Write(ctx, &change.Change{Op: change.DDL, Pos: at(pos)}); err != nil {
			t.Fatal(err)
		}
		if err := g.Commit(ctx, change.TxEnd{Next: at(end)}); err != nil {
			t.Fatal(err)
		}
	}
	ddl(50, 100)
	if raced, err := g.ddlAfter(ctx, nil, at(100), at(100)); err != nil || raced {
		t.Fatalf("a DDL before the snapshot: raced %v, %v", raced, err)
	}
	// The applier is behind the end of the pass: ddlAfter waits for it.
	res := make(chan bool, 1)
	go func() {
		raced, err := g.ddlAfter(ctx, nil, at(100), at(300))
		if err != nil {
			t.Error(err)
		}
		res <- raced
	}()
	if err := <-apply(ctx, g, []tx{{changes: []change.Position{at(110)}, end: at(200)}}); err != nil {
		t.Fatal(err)
	}
	ddl(210, 300)
	if !<-res {
		t.Fatal("the DDL at 210, after the snapshot at 100, was not found")
	}
}
