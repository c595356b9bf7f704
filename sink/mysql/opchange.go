package mysqlsink

import (
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// opChange is what a queued op keeps of its change.Change: what applying
// it and reporting on it need. A replay queues every row, and a
// change.Change is 304 bytes: the queue of a million inserts would be
// 300 MB of memory written once and read again when it is applied.
type opChange struct {
	Op       change.Op
	Flags    uint16 // the rows event's (prepareOp)
	RowIndex int
	Table    *tablemap.Table
	Before   change.Row
	After    change.Row
	Pos      change.Position
	GTID     string
}

func opChangeOf(c *change.Change) opChange {
	return opChange{Op: c.Op, Flags: c.Flags, RowIndex: c.RowIndex, Table: c.Table, Before: c.Before, After: c.After, Pos: c.Pos, GTID: c.GTID}
}

// bookkeeping reports whether c is a change to another binlogcdc's
// bookkeeping, not data.
func bookkeeping(c *change.Change) bool {
	t := c.Table
	return t.DB == "binlogcdc" && (t.Name == "checkpoint" || t.Name == "snapshot" || t.Name == "incremental" || t.Name == "schema_history")
}
