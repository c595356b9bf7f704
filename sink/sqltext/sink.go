package sqltext

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

var _ sink.Sink = (*Sink)(nil)

// Options configure a Sink or a Flashback.
type Options struct {
	// KeepDropped skips DROP TABLE, DROP DATABASE and TRUNCATE statements.
	KeepDropped bool
	// FlushEachCommit writes each transaction out at its commit (for
	// streaming); otherwise output is buffered.
	FlushEachCommit bool
	// Logf reports skipped statements; nil: silent.
	Logf func(format string, args ...any)
	// FireTriggers writes CREATE and DROP TRIGGER; by default they are
	// left out (see IsTriggerDDL).
	FireTriggers bool
	// Accounts writes account management statements (see NotReplayed).
	Accounts bool
	// ForeignKeys follows the rows events' foreign key flags, as
	// mysqlsink.Options.ForeignKeys does: SET foreign_key_checks = 1
	// before the changes that cascade on a native replica.
	ForeignKeys bool
	// Omit leaves columns out of INSERT and UPDATE's SET (the target's
	// generated columns, which refuse values): keys "db.table.column",
	// lower-cased.
	Omit map[string]bool
}

// Limits of one multi-row INSERT.
const (
	maxInsertRows  = 1000
	maxInsertBytes = 1 << 20
)

// Sink writes the changes as SQL statements that apply them: each source
// transaction as BEGIN; …; COMMIT;, consecutive inserts into one table as
// multi-row INSERTs, DDL in its default database. The output starts with
// the session settings it needs (SessionSetup) and can be piped into the
// mysql or mariadb client.
//
// Delivery: statements are written as changes arrive; a transaction that
// does not commit (the source ended or failed inside it) ends with
// ROLLBACK;, so a client applying the output never commits half of one.
type Sink struct {
	out     *bufio.Writer
	opts    Options
	b       Builder
	w       sqlWriter
	shapes  map[*tablemap.Table]*shape
	history *historyRow // system-versioned: the row the last UPDATE made

	Rows, Transactions uint64
}

// New returns a Sink writing to w.
func New(w io.Writer, opts Options) *Sink {
	s := &Sink{out: bufio.NewWriterSize(w, 256<<10), opts: opts}
	s.w.out = s.out
	s.w.header = blindHeader
	return s
}

// ChecksUTF8 reports true: text in a UTF-8 or ASCII collation may come
// unchecked (rowevent.Decoder.LazyUTF8), and is written as the binlog
// holds it, byte for byte, in its literal. The server that runs the SQL
// checks it against the column's charset as it stores it, under the
// strict sql_mode of SessionSetup: MariaDB's utf8mb4 stores surrogate
// code points (ED A0 80), which are not UTF-8 to binlogcdc, and refuses
// bytes that are not utf8mb4 at all. Checked by binlogcdc, both would
// have become U+FFFD.
func (s *Sink) ChecksUTF8() bool { return true }

// blindHeader says what this SQL cannot know, having no target to look
// at (binlogcdc read --to learns it from the target's catalog).
const blindHeader = `-- It was written without seeing the target, so it cannot check there:
--   triggers: the binlog already holds what the source's triggers wrote; a table
--     with triggers on the target fires them again on every row (drop them first);
--     CREATE/DROP TRIGGER are left out (--fire-triggers writes them);
--   generated columns: the statements write every column the binlog carries; a
--     generated column on the target refuses the value (ERROR 1906): name such
--     columns with --omit-columns db.table.column,...;
--   system-versioned tables: those with MariaDB's implicit row_start/row_end keep
--     the source's history (system_versioning_insert_history, MariaDB 10.11+);
--     those with period columns of their own names need --to.
-- Foreign keys: SET foreign_key_checks follows the rows events' flags, so that
-- the target cascades to child rows as a native replica does.
`

// sqlWriter writes statements, merging consecutive inserts.
type sqlWriter struct {
	out      io.Writer
	header   string // comment lines after the first
	fk       bool   // foreign_key_checks is 1 (SessionSetup sets 0)
	history  bool   // system_versioning_insert_history is ON
	started  bool   // session setup written
	open     bool   // BEGIN written
	db       string
	err      error
	batch    []byte // the pending multi-row INSERT
	batchKey []byte // its head: same head, same shape
	rows     int
	scratch  []byte
	streamed bool // the pending INSERT is written already (insertLarge)
}

func (w *sqlWriter) write(p []byte) {
	if w.err == nil {
		_, w.err = w.out.Write(p)
	}
}

func (w *sqlWriter) start() {
	if w.started {
		return
	}
	w.started = true
	w.write([]byte("-- binlogcdc: SQL generated from binlog row events\n" + w.header))
	for _, s := range SessionSetup {
		w.write([]byte(s + ";\n"))
	}
}

func (w *sqlWriter) begin() {
	w.start()
	if !w.open {
		w.write([]byte("BEGIN;\n"))
		w.open = true
	}
}

// insert adds a row to the pending INSERT with this head, or starts one.
func (w *sqlWriter) insert(head, tuple []byte) {
	w.begin()
	if w.rows > 0 && slices.Equal(head, w.batchKey) && w.rows < maxInsertRows && len(w.batch)+len(tuple) < maxInsertBytes {
		w.batch = append(w.batch, ",\n"...)
		w.batch = append(w.batch, tuple...)
		w.rows++
		return
	}
	w.flushBatch()
	w.batchKey = append(w.batchKey[:0], head...)
	w.batch = append(append(append(w.batch[:0], head...), '\n'), tuple...)
	w.rows = 1
}

// insertLarge writes an INSERT of a row holding a large value, its
// literals a piece at a time (WriteTuple): as insert would, in a
// statement of its own (no row joins a batch of maxInsertBytes or more),
// whose ";" the next flushBatch writes.
func (w *sqlWriter) insertLarge(head []byte, cols []int, row change.Row) error {
	if _, err := checkTuple(nil, cols, row); err != nil {
		return err
	}
	w.begin()
	w.flushBatch()
	if w.err != nil {
		return w.err
	}
	w.scratch = append(append(w.scratch[:0], head...), '\n')
	w.scratch, w.err = WriteTuple(w.out, nil, w.scratch, cols, row)
	w.batchKey = append(w.batchKey[:0], head...)
	w.rows = maxInsertRows // full: the next row starts another statement
	w.streamed = true
	return w.err
}

func (w *sqlWriter) flushBatch() {
	if w.rows > 0 {
		w.write(append(w.batch, ";\n"...))
	}
	w.batch, w.rows, w.streamed = w.batch[:0], 0, false
	if w.batch == nil {
		w.batch = []byte{}
	}
}

// insertHistory turns on system_versioning_insert_history (MariaDB
// 10.11+; an error elsewhere, which says what is missing) before the
// first change of a system-versioned table.
func (w *sqlWriter) insertHistory() {
	if w.history {
		return
	}
	w.start()
	w.flushBatch()
	w.write([]byte("SET SESSION system_versioning_insert_history = ON;\n"))
	w.history = true
}

// foreignKeyChecks writes SET foreign_key_checks when it changes.
func (w *sqlWriter) foreignKeyChecks(on bool) {
	if w.fk == on {
		return
	}
	w.start()
	w.flushBatch()
	if on {
		w.write([]byte("SET foreign_key_checks = 1;\n"))
	} else {
		w.write([]byte("SET foreign_key_checks = 0;\n"))
	}
	w.fk = on
}

// shape is how the statements treat a table's columns.
type shape struct {
	ins []bool // the columns an INSERT writes (nil: all): without Options.Omit's
	set []bool // the columns an UPDATE sets: ins without period columns
	// rowStart, rowEnd: the period columns of a system-versioned table
	// (ImplicitPeriod), or -1.
	rowStart, rowEnd int
}

// historyRow is the history row a versioned UPDATE makes on the target:
// the binlog's next insert into the table is expected to be it.
type historyRow struct {
	t   *tablemap.Table
	row change.Row
}

// shapeOf returns t's shape, cached.
func (s *Sink) shapeOf(t *tablemap.Table) *shape {
	if sh, ok := s.shapes[t]; ok {
		return sh
	}
	sh := &shape{rowStart: -1, rowEnd: -1}
	if rs, re, ok := ImplicitPeriod(t); ok {
		sh.rowStart, sh.rowEnd = rs, re
	}
	mask := func() []bool {
		m := make([]bool, len(t.Columns))
		for j := range m {
			m[j] = true
		}
		return m
	}
	prefix := strings.ToLower(t.DB + "." + t.Name + ".")
	for i := range t.Columns {
		// A generated column (the schema history knows it) cannot be written.
		omit := t.Columns[i].Generated || s.opts.Omit[prefix+strings.ToLower(t.Columns[i].Name)]
		if omit {
			if sh.ins == nil {
				sh.ins = mask()
			}
			sh.ins[i] = false
		}
		if omit || i == sh.rowStart || i == sh.rowEnd {
			if sh.set == nil {
				sh.set = mask()
			}
			sh.set[i] = false
		}
	}
	if s.shapes == nil || len(s.shapes) >= 4096 {
		s.shapes = map[*tablemap.Table]*shape{} // new event-time tables come with every reconnect
	}
	s.shapes[t] = sh
	return sh
}

// stmt writes one statement inside the transaction.
func (w *sqlWriter) stmt(sql []byte) {
	w.begin()
	w.flushBatch()
	w.write(sql)
	w.write([]byte(";\n"))
}

func (w *sqlWriter) commit(comment string) {
	w.flushBatch()
	if w.open {
		w.write([]byte("COMMIT;" + comment + "\n"))
		w.open = false
	}
}

func (w *sqlWriter) rollback() {
	if w.streamed {
		w.flushBatch() // it cannot be taken back: ROLLBACK undoes it
	}
	w.batch, w.rows = w.batch[:0], 0
	if w.open {
		w.write([]byte("ROLLBACK;\n"))
		w.open = false
	}
}

// ddl writes a DDL statement in its default database, between
// DELIMITER lines so that semicolons inside it (routine bodies) stay,
// under set and then reset (DDLSession; none when "").
func (w *sqlWriter) ddl(db, sql, set, reset string) {
	w.start()
	w.flushBatch()
	if db != "" && db != w.db {
		w.write([]byte("USE " + QuoteIdent(db) + ";\n"))
		w.db = db
	}
	if set != "" { // at the source's time (DDLSession)
		w.write([]byte(set + ";\n"))
	}
	w.write([]byte("DELIMITER /*!*/;\n" + sql + "\n/*!*/;\nDELIMITER ;\n"))
	if reset != "" {
		w.write([]byte(reset + ";\n"))
	}
}

// Write writes the statement for c.
func (s *Sink) Write(_ context.Context, c *change.Change) error {
	if c.Op == change.DDL {
		if s.opts.KeepDropped && IsDrop(c.SQL) {
			s.logf("--keep-dropped: skipped at %s:%d: %.200s", c.Pos.File, c.Pos.Offset, c.SQL)
			return nil
		}
		why := NotReplayed(c, s.opts.Accounts)
		if why == "" && !s.opts.FireTriggers && IsTriggerDDL(c.SQL) {
			why = "trigger DDL is left out (the binlog holds what the source's triggers did; --fire-triggers writes it)"
		}
		if why != "" {
			s.logf("%s:%d: %s: %s", c.Pos.File, c.Pos.Offset, why, OneLine(c.SQL, 200))
			s.w.start()
			s.w.write([]byte("-- binlogcdc: " + c.Pos.File + ":" + strconv.FormatUint(c.Pos.Offset, 10) + ": " + why + ": " + OneLine(c.SQL, 200) + "\n"))
			return s.w.err
		}
		s.w.foreignKeyChecks(false)
		set, reset := DDLSession(c)
		s.w.ddl(DDLDB(c), c.SQL, set, reset)
		return s.w.err
	}
	s.Rows++
	t := c.Table
	s.w.foreignKeyChecks(s.opts.ForeignKeys && c.Flags&(change.RowsNoForeignKeyChecks|change.RowsSQLForeignKey) == 0)
	sh := s.shapeOf(t)
	op := c.Op
	var at change.Value // system-versioned: the @@timestamp to run at
	if sh.rowStart >= 0 {
		expect := s.history
		s.history = nil
		action, v, err := Versioned(c, sh.rowStart, sh.rowEnd)
		if err != nil {
			return rowError(c, err)
		}
		s.w.insertHistory()
		switch action {
		case VersionedInsert:
			if expect != nil && expect.t == t && SameRow(expect.row, c.After) {
				return s.w.err // the UPDATE before it made it on the target
			}
		case VersionedUpdate:
			s.history = &historyRow{t: t, row: History(c, sh.rowStart, sh.rowEnd)}
		case VersionedEnd:
			op = change.Delete
		}
		at = v
	}
	s.b.Reset()
	switch op {
	case change.Insert:
		cols := Columns(nil, c.After, sh.ins)
		if EnumErrors(c.After, cols) > 0 {
			s.b.Insert("INSERT", t, cols, c.After)
			break
		}
		s.b.InsertHead("INSERT", t, cols)
		n := len(s.b.SQL)
		if HasLarge(cols, c.After) {
			if err := s.w.insertLarge(s.b.SQL[:n-1], cols, c.After); err != nil && s.w.err == nil {
				return rowError(c, err)
			}
			return s.w.err
		}
		s.b.InsertTuple(cols, c.After)
		if err := s.b.Err(); err != nil {
			return rowError(c, err)
		}
		s.w.insert(s.b.SQL[:n-1], s.b.SQL[n:]) // head without its trailing space
		return s.w.err
	case change.Update:
		k, err := KeyOf(t, c.Before, nil)
		if err != nil {
			return rowError(c, err)
		}
		s.b.Update(t, Columns(nil, c.After, sh.set), c.After, k, c.Before)
	case change.Delete:
		k, err := KeyOf(t, c.Before, nil)
		if err != nil {
			return rowError(c, err)
		}
		s.b.Delete(t, k, c.Before)
	default:
		return fmt.Errorf("sqltext: unknown change %v", c.Op)
	}
	if err := s.b.Err(); err != nil {
		return rowError(c, err)
	}
	stmt := s.b.SQL
	if c.After != nil && op != change.Delete {
		if cols := Columns(nil, c.After, sh.ins); EnumErrors(c.After, cols) > 0 {
			if i := NotStored(c.After, cols); i >= 0 { // nonstrict.go
				return rowError(c, NotStoredError(t, i))
			}
			stmt = nonStrict(stmt)
		}
	}
	if at.IsAbsent() {
		s.w.stmt(stmt)
		return s.w.err
	}
	q, err := SetTimestamp(at)
	if err != nil {
		return rowError(c, err)
	}
	s.w.stmt([]byte(q))
	s.w.stmt(stmt)
	s.w.stmt([]byte("SET timestamp = DEFAULT"))
	return s.w.err
}

// nonStrict wraps a statement that stores an ENUM error value (see
// EnumErrors) in the sql_mode that stores it: SET SESSION sql_mode works
// on MariaDB and MySQL alike.
func nonStrict(sql []byte) []byte {
	out := []byte("SET SESSION sql_mode = '" + NonStrictSQLMode + "';\n")
	out = append(out, sql...)
	return append(out, ";\nSET SESSION sql_mode = '"+SessionSQLMode+"'"...)
}

// rowError names the change that could not be written.
func rowError(c *change.Change, err error) error {
	return fmt.Errorf("%s of %s at %s:%d (row %d): %w", c.Op, tableName(c.Table), c.Pos.File, c.Pos.Offset, c.RowIndex, err)
}

func tableName(t *tablemap.Table) string {
	return string(AppendTableName(nil, t.DB, t.Name))
}

func (s *Sink) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// Commit ends the transaction with COMMIT;.
func (s *Sink) Commit(_ context.Context, tx change.TxEnd) error {
	s.w.commit(posComment(tx))
	s.Transactions++
	if s.w.err == nil && s.opts.FlushEachCommit {
		s.w.err = s.out.Flush()
	}
	return s.w.err
}

// posComment is " /* next FILE:POS */" when the file name is plain.
func posComment(tx change.TxEnd) string {
	for _, r := range tx.Next.File {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return ""
		}
	}
	if tx.Next.File == "" {
		return ""
	}
	return fmt.Sprintf(" /* next %s:%d */", tx.Next.File, tx.Next.Offset)
}

// Rollback ends the open transaction with ROLLBACK;.
func (s *Sink) Rollback(_ context.Context) error {
	s.history = nil
	s.w.rollback()
	return s.w.err
}

// Close rolls back an open transaction and flushes the output.
func (s *Sink) Close(_ context.Context) error {
	s.w.rollback()
	if s.w.err != nil {
		return s.w.err
	}
	return s.out.Flush()
}
