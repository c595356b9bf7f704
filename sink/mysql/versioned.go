package mysqlsink

import (
	"fmt"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
)

// System-versioned tables: see sqltext/versioned.go for how the binlog
// logs them and how replay applies them. Here the period columns come
// from the target's catalog (catalog.go), and the changes run one
// statement at a time.

// historyRow is the history row a current row's update made on the
// target: the binlog's next insert into the table is expected to be it.
type historyRow struct {
	plan *plan
	row  change.Row
}

// versionedOp applies one change of a system-versioned table.
func (s *Sink) versionedOp(o *op, st *Stats) error {
	c, p := &o.c, o.plan
	expect := s.history
	s.history = nil
	cc := &change.Change{Op: c.Op, Table: c.Table, Before: c.Before, After: c.After} // sqltext's
	action, at, err := sqltext.Versioned(cc, p.rowStart, p.rowEnd)
	if err != nil {
		return changeError(c, err)
	}
	ts := st.table(p.name)
	switch action {
	case sqltext.VersionedInsert:
		if expect != nil && expect.plan == p && sqltext.SameRow(expect.row, c.After) {
			ts.Inserted++ // the target made it with the update
			return nil
		}
		return s.insertOne(o, st)
	case sqltext.VersionedUpdate:
		updated := ts.Updated
		if err := s.atTimestamp(at, func() error { return s.update(o, st) }); err != nil {
			return err
		}
		if ts.Updated != updated { // not a skipped conflict: the target made the history row
			s.history = &historyRow{plan: p, row: sqltext.History(cc, p.rowStart, p.rowEnd)}
		}
		return nil
	}
	// VersionedEnd, counted as what it is on the source.
	deleted := ts.Deleted
	if err := s.atTimestamp(at, func() error { return s.delete(o, st) }); err != nil {
		return err
	}
	if ts.Deleted != deleted {
		ts.Deleted--
		ts.Updated++
	}
	return nil
}

// atTimestamp runs f with the session's @@timestamp at v.
func (s *Sink) atTimestamp(v change.Value, f func() error) error {
	q, err := sqltext.SetTimestamp(v)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	if err := s.plain(q); err != nil {
		return fmt.Errorf("target: %s: %w", q, err)
	}
	err = f()
	if rerr := s.plain("SET timestamp = DEFAULT"); err == nil && rerr != nil {
		err = fmt.Errorf("target: SET timestamp = DEFAULT: %w", rerr)
	}
	return err
}
