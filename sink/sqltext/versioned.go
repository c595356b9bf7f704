package sqltext

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// System-versioned tables (MariaDB WITH SYSTEM VERSIONING, by timestamp).
// The binlog logs their period columns (row_start, row_end) like any
// other column, and the source's versioning as plain rows:
//
//	INSERT           insert (row_end the maximum: a current row)
//	UPDATE           update of the current row (new row_start), then
//	                 insert of the history row (row_end = that time)
//	DELETE           update that sets row_end: the row moves to history
//	DELETE HISTORY   delete of history rows
//
// A versioned target table versions on its own and refuses row_start and
// row_end in UPDATE. So replay writes them as a native replica ends up
// with them: inserts write row_start and row_end explicitly
// (system_versioning_insert_history=ON, MariaDB 10.11+); the update of a
// current row runs at @@timestamp = the source's new row_start, so the
// target makes the same history row itself, and the binlog's insert of
// that very row, which follows, is then already applied; a move to
// history runs as a DELETE at @@timestamp = the source's row_end.
// Deleting single history rows (DELETE HISTORY) has no SQL form.

// VersionedAction is how a change of a system-versioned table applies.
type VersionedAction uint8

const (
	// VersionedInsert: an INSERT writing row_start and row_end (unless it
	// is the history row the previous update made: see History).
	VersionedInsert VersionedAction = iota + 1
	// VersionedUpdate: the current row changed; UPDATE (without the
	// period columns) at @@timestamp = At.
	VersionedUpdate
	// VersionedEnd: the row moved to history; DELETE at @@timestamp = At.
	VersionedEnd
)

// Versioned says how c, a change of a table whose period columns are
// rowStart and rowEnd, applies, and at which time.
func Versioned(c *change.Change, rowStart, rowEnd int) (a VersionedAction, at change.Value, err error) {
	switch c.Op {
	case change.Insert:
		return VersionedInsert, at, nil
	case change.Delete:
		return 0, at, errors.New("deleting history rows of a system-versioned table (DELETE HISTORY) cannot be replayed: " +
			"no statement deletes single history rows (run the source's DELETE HISTORY on the target, then resume after it)")
	}
	if c.Before[rowStart].IsAbsent() || c.Before[rowEnd].IsAbsent() || c.After[rowStart].IsAbsent() || c.After[rowEnd].IsAbsent() {
		return 0, at, errors.New("the row image lacks the period columns of the system-versioned table (use binlog_row_image=FULL on the source)")
	}
	if sameValue(c.Before[rowEnd], c.After[rowEnd]) {
		return VersionedUpdate, c.After[rowStart], nil
	}
	for i := range c.Before {
		if i != rowEnd && !c.After[i].IsAbsent() && !sameValue(c.Before[i], c.After[i]) {
			return 0, at, fmt.Errorf("an update that ends a system-versioned row's period and changes column %s cannot be replayed", QuoteIdent(c.Table.Columns[i].Name))
		}
	}
	return VersionedEnd, c.After[rowEnd], nil
}

// History returns the history row a VersionedUpdate makes on the target:
// the before image, its period ended at the new row_start. Its values are
// copies (a decoder's values are valid until its next event).
func History(c *change.Change, rowStart, rowEnd int) change.Row {
	h := make(change.Row, len(c.Before))
	for i, v := range c.Before {
		h[i] = v.Clone()
	}
	h[rowEnd] = c.After[rowStart].Clone()
	return h
}

// SetTimestamp is the statement that sets the session's @@timestamp to a
// TIMESTAMP value (in UTC seconds, with its fraction).
func SetTimestamp(v change.Value) (string, error) {
	if v.Kind() != change.Timestamp {
		return "", fmt.Errorf("a system-versioned period column holds a %s, not a TIMESTAMP", v.Kind())
	}
	q := "SET timestamp = " + strconv.FormatUint(v.Uint(), 10)
	if _, frac, ok := bytes.Cut(v.Bytes(), []byte{'.'}); ok {
		q += "." + string(frac)
	}
	return q, nil
}

// DDLSession is what a DDL statement runs under, as a native replica
// runs it: set, the SET of its start on the source (change.Change.Start)
// and of the source session's time_zone when the statement used it
// (change.Change.TimeZone), which it may write into rows (ADD COLUMN …
// DEFAULT CURRENT_TIMESTAMP or NOW(), ADD SYSTEM VERSIONING); reset, the
// SET back to the replay's session. Both "" when the start is unknown.
func DDLSession(c *change.Change) (set, reset string) {
	if c.Start.IsZero() {
		return "", ""
	}
	set = "SET timestamp = " + strconv.FormatInt(c.Start.Unix(), 10)
	if us := c.Start.Nanosecond() / 1000; us != 0 {
		set += fmt.Sprintf(".%06d", us)
	}
	reset = "SET timestamp = DEFAULT"
	// SYSTEM is the source host's zone, which the target's may not be:
	// such a DDL keeps running in UTC, as before.
	if c.TimeZone != "" && !strings.EqualFold(c.TimeZone, "SYSTEM") {
		set += ", time_zone = '" + strings.ReplaceAll(strings.ReplaceAll(c.TimeZone, `\`, `\\`), "'", "''") + "'"
		reset += ", time_zone = '+00:00'"
	}
	return set, reset
}

// ImplicitPeriod finds the period columns of a table as MariaDB logs
// WITH SYSTEM VERSIONING without period columns of its own: TIMESTAMP
// columns named row_start and row_end, row_end part of the primary key
// (the server adds it to every unique key). Tables with named period
// columns are not recognized (--to finds them in the target's catalog).
func ImplicitPeriod(t *tablemap.Table) (rowStart, rowEnd int, ok bool) {
	rowStart, rowEnd = -1, -1
	for i := range t.Columns {
		c := &t.Columns[i]
		if c.Type != mysql.MYSQL_TYPE_TIMESTAMP2 && c.Type != mysql.MYSQL_TYPE_TIMESTAMP {
			continue
		}
		switch strings.ToLower(c.Name) {
		case "row_start":
			rowStart = i
		case "row_end":
			rowEnd = i
		}
	}
	if rowStart < 0 || rowEnd < 0 {
		return -1, -1, false
	}
	for _, k := range t.PrimaryKey {
		if k == rowEnd {
			return rowStart, rowEnd, true
		}
	}
	return -1, -1, false
}

func sameValue(a, b change.Value) bool {
	return a.Kind() == b.Kind() && a.Uint() == b.Uint() && bytes.Equal(a.Bytes(), b.Bytes())
}

// SameRow reports whether two images hold the same values, all present.
func SameRow(a, b change.Row) bool {
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
