// Package change holds the envelope that flows from the decoders to the
// sinks: one Change per row change (or DDL statement), with the table as it
// was at event time, the row images and the binlog position.
//
// It is the neutral package every other part imports; it imports only
// tablemap.
package change

import (
	"time"

	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Op is the kind of change.
type Op uint8

const (
	Insert Op = iota + 1
	Update
	Delete
	DDL
	// Snapshot: a row as it was at a snapshot's position (After only),
	// from 'binlogcdc snapshot' or 'stream --snapshot', not from a binlog.
	Snapshot
)

func (o Op) String() string {
	switch o {
	case Insert:
		return "insert"
	case Update:
		return "update"
	case Delete:
		return "delete"
	case DDL:
		return "ddl"
	case Snapshot:
		return "snapshot"
	}
	return "unknown"
}

// Position is the place of one event in the binlog: the file name (base
// name, as the server writes it in ROTATE events) and the event's start
// offset in it.
type Position struct {
	File   string
	Offset uint64
}

// Row is one row image. Values is indexed by column, in table order; a
// column that the image does not carry holds an Absent value.
type Row []Value

// Change is one row change, or one DDL statement when Op is DDL.
//
// Sorting changes on (Pos.File, Pos.Offset, RowIndex) orders them. For
// rows events inside a MySQL TRANSACTION_PAYLOAD_EVENT, Pos is the payload
// event's position and RowIndex counts on across all rows inside it.
type Change struct {
	Op    Op
	Table *tablemap.Table // nil for DDL

	// Before is set for updates and deletes, After for inserts and updates.
	Before, After Row

	// Time is the commit time: the GTID event's immediate commit timestamp
	// (microseconds) when the binlog has it, else the event header's
	// seconds. Always UTC.
	Time time.Time
	// TimeMicro is set when Time comes with microseconds from the binlog.
	TimeMicro bool

	Pos      Position
	RowIndex int

	// CommitPos is, for a change of an XA transaction (held back at its
	// XA PREPARE, emitted at its XA COMMIT), the position of the XA
	// COMMIT: where the change takes effect. Zero otherwise (the change
	// takes effect with its own transaction, at Pos).
	CommitPos Position

	// ServerID is the server_id in the event's header: the server that
	// first wrote the change.
	ServerID uint32

	// Flags are the rows event's flags (0 for DDL): RowsNoForeignKeyChecks,
	// RowsSQLForeignKey. Replay follows them as a native replica does.
	Flags uint16

	// GTID of the transaction: "uuid:n" (MySQL), "domain-server-seq"
	// (MariaDB), or "" when the binlog has none.
	GTID string

	// Query is the statement that made the row change, from the
	// ANNOTATE_ROWS (MariaDB, binlog_annotate_row_events) or ROWS_QUERY
	// (MySQL, binlog_rows_query_log_events) event before its rows event;
	// "" when the binlog has none.
	Query string

	// Mark is, for a Snapshot change without a row (After nil), which
	// end of a table's snapshot it marks: MarkTableStart or MarkTableEnd
	// (snapshot.Options.Marks). 0 for every other change.
	Mark uint8
	// Place is, for a Snapshot change with a row, where the row stands in
	// the snapshot (PlaceFirstInTable, …): set when the snapshot was
	// asked for it (snapshot.Options.Places, for Debezium's
	// source.snapshot), and PlaceIncremental for an incremental
	// snapshot's rows. 0 for every other change.
	Place uint8

	// DB and SQL are set for DDL: the default database of the statement
	// and its text.
	DB  string
	SQL string
	// Start is, for DDL, when the statement started on the source (what
	// it takes for CURRENT_TIMESTAMP): the event header's seconds, with
	// the microseconds the binlog has when the statement used them. A
	// replay runs the statement at this @@timestamp, as a native replica
	// does: ADD COLUMN … DEFAULT CURRENT_TIMESTAMP and ADD SYSTEM
	// VERSIONING write it into every existing row.
	Start time.Time
	// TimeZone is, for DDL, the source session's time_zone when the
	// statement used it (NOW() into a DATETIME), else "".
	TimeZone string
	// Touches is, for DDL, what the statement is about (nil when unknown).
	Touches *Touches
	// Schema is, for DDL read with a schema history, the tables and
	// databases the statement changed, before and after (schema.go); nil
	// without a history, or when the statement changed none it knows of.
	Schema []SchemaChange
}

// Touches is what a DDL statement is about, as binlogcdc reads it.
type Touches struct {
	// Kind: "table" (tables, views, sequences, indexes, triggers: Tables
	// names them all), "database" (DBs), "routine" (procedures,
	// functions, events, packages, DROP TRIGGER: DBs), "account" (users,
	// roles, grants: the SQL is redacted), "unknown".
	Kind   string
	Tables []TableName
	DBs    []string
	// OwnDB: the statement names every table with its database and has
	// no body: it runs without its default database (which a target
	// that holds only the selected tables may not have).
	OwnDB bool
}

// TableName is a table named by a DDL statement.
type TableName struct{ DB, Table string }

// Snapshot marks (Change.Mark).
const (
	MarkTableStart uint8 = 1 + iota
	MarkTableEnd
)

// Where a snapshot row stands (Change.Place), bits.
const (
	PlaceFirstInTable uint8 = 1 << iota // the first row of its table
	PlaceLastInTable                    // the last row of its table
	PlaceFirstTable                     // its table is the snapshot's first
	PlaceLastTable                      // its table is the snapshot's last
	PlaceIncremental                    // read by an incremental snapshot
)

// Rows event flags (the post-header's 2-byte flags field).
const (
	// RowsNoForeignKeyChecks: the source session ran with
	// foreign_key_checks=0 (NO_FOREIGN_KEY_CHECKS_F).
	RowsNoForeignKeyChecks uint16 = 1 << 1
	// RowsSQLForeignKey: MySQL 9.6+ handled the foreign keys in the SQL
	// layer and logged the cascaded child rows itself
	// (USE_SQL_FOREIGN_KEY_F).
	RowsSQLForeignKey uint16 = 1 << 4
)

// TxEnd marks the end of a committed transaction. Next is where the
// following transaction starts: a resume point. (A ROTATE between
// transactions also moves the resume point: then GTID is the last
// committed transaction's and Time is zero.)
type TxEnd struct {
	GTID string
	Next Position
	Time time.Time
	// Xid is the transaction's XID (from the XID event that committed
	// it); 0 when a QUERY event (COMMIT, DDL) ended it.
	Xid uint64
	// HeldXA is set while prepared XA transactions are held: their XA
	// PREPARE was read, their XA COMMIT not yet. Their changes exist only
	// in memory, so a resume point at Next would lose them: a checkpoint
	// must stay where it was until HeldXA is clear again.
	HeldXA bool
	// XAFrom, set with HeldXA, is where the earliest held XA transaction
	// (its XA PREPARE group) starts: a resume point kept next to Next
	// (sink/mysql) reads again from there to collect them, and applies
	// nothing before Next (pipeline.Options.ApplyFrom).
	XAFrom Position
	// Snapshot, set by a snapshot's batches, is its progress (JSON): a
	// sink that keeps its own checkpoint (sink/mysql) saves it with it.
	Snapshot []byte
}

// Clone copies r and its values' bytes (nil stays nil): a sink's Write
// may keep only what it copied, since values point into buffers that the
// next event reuses.
func (r Row) Clone() Row {
	if r == nil {
		return nil
	}
	out := make(Row, len(r))
	for i, v := range r {
		out[i] = v.Clone()
	}
	return out
}

// Clone copies c with its rows (Row.Clone).
func (c *Change) Clone() Change {
	out := *c
	out.Before, out.After = c.Before.Clone(), c.After.Clone()
	return out
}
