package live

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/verify"
)

// gate stands between the pipeline and the target's sink and stops the
// applier where a verification pass needs it: only ever before a
// transaction's first change (or, for a transaction without changes, its
// Commit), so the target is always at a transaction boundary when held.
//
// A pass holds the applier (hold), begins the source's snapshot, then
// lets the applier go up to the snapshot's position (limit) and waits
// until it has handed the sink every transaction that ends there or
// before, and none after: then it holds it again, has the sink commit
// what it holds (flush), begins the target's snapshot and lets the
// applier go on (release).
type gate struct {
	inner sink.Sink
	flush func() error // commits what the sink holds on the target now
	// quiet reports whether the source's binlog holds no transaction
	// from one position up to another (see quiet.go).
	quiet func(ctx context.Context, q verify.Querier, from, to change.Position) (bool, error)

	mu      sync.Mutex
	changed chan struct{} // closed (and replaced) at each change of the state below
	held    bool          // no transaction may start
	limit   *change.Position
	inTx    bool            // changes of an open transaction were handed on
	last    change.Position // where the last transaction handed on ended
	waiting bool            // the pipeline waits at the gate…
	pending *change.Change  // … with this first change (nil: a Commit)
	ddl     change.Position // where the last DDL handed on was logged
	// heldSince is when held was set (zero: not held); heldFor sums
	// the time the applier was held.
	heldSince time.Time
	heldFor   time.Duration
	// chunkHeld sums the time held since the last Hold; maxHeld is the
	// longest such sum at a Release since the last takeMax (the longest
	// pause of the applier for one chunk's snapshots).
	chunkHeld, maxHeld time.Duration
}

// ChecksUTF8 is the target's sink's (sink.UTF8Checker).
func (g *gate) ChecksUTF8() bool { return sink.ChecksUTF8(g.inner) }

// hold sets held; g.mu is held.
func (g *gate) hold() {
	g.held = true
	g.heldSince = time.Now()
	g.notify()
}

// unhold clears held; g.mu is held.
func (g *gate) unhold() {
	if g.held {
		d := time.Since(g.heldSince)
		g.heldFor += d
		g.chunkHeld += d
	}
	g.held = false
	g.notify()
}

// takeHeld returns the time the applier was held since the last call.
func (g *gate) takeHeld() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := g.heldFor
	g.heldFor = 0
	return d
}

// takeMax returns the longest pause of the applier for one chunk since
// the last call.
func (g *gate) takeMax() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	d := g.maxHeld
	g.maxHeld = 0
	return d
}

// notify wakes whoever waits for a change; g.mu is held.
func (g *gate) notify() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// wait releases g.mu until the state changes or ctx ends, then takes it
// again.
func (g *gate) wait(ctx context.Context) error {
	ch := g.changed
	g.mu.Unlock()
	defer g.mu.Lock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// effect is where a change takes effect: an XA transaction's changes
// with its XA COMMIT.
func effect(c *change.Change) change.Position {
	if c.CommitPos.File != "" {
		return c.CommitPos
	}
	return c.Pos
}

// mustWait says whether a transaction starting now (with c, its first
// change; nil: one without changes, at its Commit) waits; g.mu is held.
func (g *gate) mustWait(c *change.Change) bool {
	if g.held {
		return true
	}
	if g.limit == nil || c == nil {
		return false // a transaction without changes changes nothing
	}
	// It ends after the limit when the last one ended at or after it,
	// or when one of its events lies after it (no transaction spans the
	// position of a snapshot).
	return !before(g.last, *g.limit) || before(*g.limit, effect(c))
}

// enter waits at the gate before a transaction starts.
func (g *gate) enter(ctx context.Context, c *change.Change) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inTx {
		return nil
	}
	defer func() { g.waiting, g.pending = false, nil }()
	for g.mustWait(c) {
		if !g.waiting {
			g.waiting, g.pending = true, c
			g.notify()
		}
		if err := g.wait(ctx); err != nil {
			return err
		}
	}
	g.inTx = c != nil
	return nil
}

func (g *gate) Write(ctx context.Context, c *change.Change) error {
	if err := g.enter(ctx, c); err != nil {
		return err
	}
	if c.Op == change.DDL {
		g.mu.Lock()
		g.ddl = c.Pos
		g.mu.Unlock()
	}
	return g.inner.Write(ctx, c)
}

func (g *gate) Commit(ctx context.Context, tx change.TxEnd) error {
	if err := g.enter(ctx, nil); err != nil {
		return err
	}
	err := g.inner.Commit(ctx, tx)
	g.mu.Lock()
	if err == nil {
		g.last = tx.Next
	}
	g.inTx = false
	g.notify()
	g.mu.Unlock()
	return err
}

func (g *gate) Rollback(ctx context.Context) error {
	err := g.inner.Rollback(ctx)
	g.mu.Lock()
	g.inTx = false
	g.notify()
	g.mu.Unlock()
	return err
}

func (g *gate) Close(ctx context.Context) error { return g.inner.Close(ctx) }

// Hold stops the applier before the next transaction starts, and waits
// until the open one, if any, was handed on.
func (g *gate) Hold(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.chunkHeld = 0
	g.hold()
	for g.inTx {
		if err := g.wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Release lets the applier go on.
func (g *gate) Release() {
	g.mu.Lock()
	g.limit = nil
	g.unhold()
	g.maxHeld = max(g.maxHeld, g.chunkHeld)
	g.mu.Unlock()
}

// At lets the applier go up to pos, the source snapshot's position, and
// calls open once the target holds exactly the transactions up to it.
func (g *gate) At(ctx context.Context, src verify.Querier, pos string, open func() error) error {
	p, err := parsePos(pos)
	if err != nil {
		return err
	}
	g.mu.Lock()
	if before(p, g.last) {
		last := g.last
		g.mu.Unlock()
		return fmt.Errorf("the applier is at %s:%d, past the source's snapshot at %s: %w", last.File, last.Offset, pos, errPast)
	}
	g.limit = &p
	g.unhold()
	checked := change.Position{} // the last position found quiet up to p, or not
	for {
		// Everything up to p was handed on, nothing after: the next
		// transaction waits for being after p, or the last ended there.
		if !g.inTx && (g.waiting && g.mustWait(g.pending) || !before(g.last, p)) {
			break
		}
		if !g.inTx && g.last != checked {
			// The source may have nothing more up to p than events that
			// change nothing (a new binlog file's header): the applier
			// then has it all, with nothing more to come.
			from := g.last
			g.mu.Unlock()
			ok, err := g.quiet(ctx, src, from, p)
			g.mu.Lock()
			if err != nil {
				g.mu.Unlock()
				return err
			}
			checked = from
			if ok && g.last == from && !g.inTx {
				break
			}
			continue
		}
		if err := g.wait(ctx); err != nil {
			g.mu.Unlock()
			return err
		}
	}
	g.hold()
	g.mu.Unlock()
	if err := g.flush(); err != nil {
		return fmt.Errorf("the target could not commit what it was applying: %w", err)
	}
	return open()
}

// ddlAfter waits until the applier handed on every transaction up to
// end, and reports whether one of them after from was a DDL: a table's
// definition (read from information_schema, which is no snapshot) may
// then have been read on one side before it and on the other after.
func (g *gate) ddlAfter(ctx context.Context, src verify.Querier, from, end change.Position) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	checked := change.Position{}
	for before(g.last, end) {
		if !g.inTx && g.last != checked {
			last := g.last
			g.mu.Unlock()
			ok, err := g.quiet(ctx, src, last, end)
			g.mu.Lock()
			if err != nil {
				return false, err
			}
			if checked = last; ok {
				break
			}
			continue
		}
		if err := g.wait(ctx); err != nil {
			return false, err
		}
	}
	return before(from, g.ddl), nil
}

// before reports whether a comes before b (binlog file names of one
// server sort by their fixed-width numeric suffix).
func before(a, b change.Position) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Offset < b.Offset
}

var errPos = errors.New("not FILE:OFFSET")

// errPast: the applier, held before the source's snapshot began, is past
// its position. The source's binlog dump sends a transaction once it is
// in the binlog, which may be before it commits in the engine, where a
// snapshot sees it: the snapshot is taken again.
var errPast = errors.New("it applied a transaction the snapshot does not hold yet (sent by the source before its commit was visible)")

// parsePos parses "file:offset".
func parsePos(s string) (change.Position, error) {
	var p change.Position
	i := len(s) - 1
	for i >= 0 && s[i] != ':' {
		i--
	}
	if i <= 0 {
		return p, fmt.Errorf("the source's snapshot position %q: %w", s, errPos)
	}
	off, err := strconv.ParseUint(s[i+1:], 10, 64)
	if err != nil {
		return p, fmt.Errorf("the source's snapshot position %q: %w", s, errPos)
	}
	p.Offset = off
	p.File = s[:i]
	return p, nil
}
