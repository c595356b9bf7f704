package mysqlsink

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
)

// System-versioned tables (MariaDB WITH SYSTEM VERSIONING, by timestamp).
// The binlog logs their period columns (row_start, row_end) like any
// other column, and the source's versioning as plain rows:
//
//	INSERT                 insert (row_end the maximum: a current row)
//	UPDATE                 update of the current row (new row_start), then
//	                       insert of the history row (row_end = that time)
//	DELETE                 update that sets row_end: the row moves to history
//	DELETE HISTORY         delete of history rows
//
// A target table that is versioned too versions on its own and refuses
// row_start/row_end in UPDATE. So replay writes them as a native replica
// ends up with them: inserts write row_start and row_end explicitly
// (system_versioning_insert_history=ON, MariaDB 10.11+); the update of a
// current row runs with @@timestamp set to the source's new row_start, so
// the target makes the same history row itself, and the binlog's insert
// of that very row that follows is then already applied; a move to
// history runs as a DELETE at the source's row_end. Deleting single
// history rows (DELETE HISTORY) has no SQL form: replay stops there.
// These changes run one statement at a time.

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
	switch c.Op {
	case change.Insert:
		if expect != nil && expect.plan == p && sameRow(expect.row, c.After) {
			st.table(p.name).Inserted++ // the target made it with the update
			return nil
		}
		return s.insertOne(o, st)
	case change.Delete:
		return changeError(c, fmt.Errorf("deleting history rows of a system-versioned table (DELETE HISTORY) cannot be replayed: "+
			"no statement deletes single history rows; replay stopped before it (run the source's DELETE HISTORY on the target, then resume with --start-position after it)"))
	}
	beforeEnd, afterEnd, afterStart := c.Before[p.rowEnd], c.After[p.rowEnd], c.After[p.rowStart]
	if beforeEnd.IsAbsent() || afterEnd.IsAbsent() || afterStart.IsAbsent() || c.Before[p.rowStart].IsAbsent() {
		return changeError(c, fmt.Errorf("the row image lacks the period columns of the system-versioned table (use binlog_row_image=FULL on the source)"))
	}
	if sameValue(beforeEnd, afterEnd) {
		// The current row changed: the target versions it at the source's time.
		if err := s.setTimestamp(afterStart); err != nil {
			return err
		}
		ts := st.table(p.name)
		updated := ts.Updated
		err := s.update(o, st)
		if rerr := s.plain("SET timestamp = DEFAULT"); err == nil && rerr != nil {
			err = fmt.Errorf("target: SET timestamp = DEFAULT: %w", rerr)
		}
		if err != nil || ts.Updated == updated {
			return err // failed, or a conflict skipped: no history row was made
		}
		h := slices.Clone(c.Before)
		h[p.rowEnd] = afterStart
		s.history = &historyRow{plan: p, row: h}
		return nil
	}
	// The row moved to history: a DELETE at the source's row_end, when
	// nothing else changed.
	for i := range c.Before {
		if i != p.rowEnd && !c.After[i].IsAbsent() && !sameValue(c.Before[i], c.After[i]) {
			return changeError(c, fmt.Errorf("an update that ends a system-versioned row's period and changes column %s cannot be replayed", sqltext.QuoteIdent(c.Table.Columns[i].Name)))
		}
	}
	if err := s.setTimestamp(afterEnd); err != nil {
		return err
	}
	err := s.delete(o, st)
	if rerr := s.plain("SET timestamp = DEFAULT"); err == nil && rerr != nil {
		err = fmt.Errorf("target: SET timestamp = DEFAULT: %w", rerr)
	}
	if err == nil {
		// Counted as what it is on the source.
		ts := st.table(p.name)
		ts.Deleted--
		ts.Updated++
	}
	return err
}

// setTimestamp sets the session's @@timestamp to a TIMESTAMP value.
func (s *Sink) setTimestamp(v change.Value) error {
	if v.Kind() != change.Timestamp {
		return fmt.Errorf("target: a system-versioned period column holds a %s, not a TIMESTAMP", v.Kind())
	}
	q := "SET timestamp = " + strconv.FormatUint(v.Uint(), 10)
	if _, frac, ok := bytes.Cut(v.Bytes(), []byte{'.'}); ok {
		q += "." + string(frac)
	}
	if err := s.plain(q); err != nil {
		return fmt.Errorf("target: %s: %w", q, err)
	}
	return nil
}

func sameValue(a, b change.Value) bool {
	return a.Kind() == b.Kind() && a.Uint() == b.Uint() && bytes.Equal(a.Bytes(), b.Bytes())
}

func sameRow(a, b change.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].IsAbsent() || !sameValue(a[i], b[i]) {
			return false
		}
	}
	return true
}
