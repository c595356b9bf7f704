package mysqlsink

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
)

// Limits of one multi-row INSERT: a power of two of rows (so that few
// statement shapes are prepared), at most bulkInsertRows (maxBatchRows
// with Options.NoBulkLoad), at most maxBatchBytes of values, at most
// maxPlaceholders placeholders. With bulk loading, their rows' values are
// encoded as the changes are queued (encoded.go).
//
// Bulk inserts. Long insert runs go to the target as these INSERTs,
// pipelined (pipeline.go), unless Options.LoadData sends them as LOAD
// DATA LOCAL (bulk.go). Measured on MariaDB 10.11, the target spends less
// CPU on the INSERTs: LOAD DATA's field parser reads the text a byte at a
// time (a quarter of its CPU), a bound value is copied whole; and it
// spends less on INSERTs of 1024 rows than of 128 (README,
// "Performance").
const (
	bulkInsertRows  = 1024
	maxBatchRows    = 128
	maxBatchBytes   = 4 << 20
	maxPlaceholders = 60000
)

// prepareOp finds the target table's plan and the statement's columns and
// key; errors here name the change.
func (s *Sink) prepareOp(o *op) error {
	c := &o.c
	p, err := s.planFor(c.Table)
	if err != nil {
		return changeError(c, err)
	}
	o.plan = p
	o.fk = s.opts.ForeignKeys && c.Flags&(change.RowsNoForeignKeyChecks|change.RowsSQLForeignKey) == 0
	switch c.Op {
	case change.Insert:
		o.cols = s.sharedCols(p, sqltext.Columns(s.colsBuf[:0], c.After, p.ins))
		if len(o.cols) == 0 {
			return changeError(c, fmt.Errorf("none of the row's columns exists on the target"))
		}
	case change.Update:
		o.cols = s.sharedCols(p, sqltext.Columns(s.colsBuf[:0], c.After, p.set))
		o.key, err = sqltext.KeyOf(c.Table, c.Before, p.keep)
	case change.Delete:
		o.key, err = sqltext.KeyOf(c.Table, c.Before, p.keep)
	default:
		err = fmt.Errorf("unknown change %v", c.Op)
	}
	if err != nil {
		return changeError(c, err)
	}
	// Looked up now, while the row is in the cache: a scan of the
	// queued ops when they are executed cost replay 5-7% of its CPU.
	o.enumErr = p.enums && c.After != nil && sqltext.EnumErrors(c.After, o.cols) > 0
	return nil
}

// sharedCols returns cols (in s.colsBuf), or the same columns of the
// last pending change to the same table: consecutive changes share one
// slice, not one allocation each. Columns slices are never changed.
func (s *Sink) sharedCols(p *plan, cols []int) []int {
	s.colsBuf = cols
	if n := len(s.pend); n > 0 && s.pend[n-1].plan == p && slices.Equal(s.pend[n-1].cols, cols) {
		return s.pend[n-1].cols
	}
	return slices.Clone(cols)
}

// changeError names the change an error is about.
func changeError(c *opChange, err error) error {
	return fmt.Errorf("%s of %s at %s:%d (row %d): %w", c.Op, tableName(c), c.Pos.File, c.Pos.Offset, c.RowIndex, err)
}

func tableName(c *opChange) string {
	return string(sqltext.AppendTableName(nil, c.Table.DB, c.Table.Name))
}

// flush executes pend[:upto] (a prefix) and keeps the rest pending. The
// open source transaction's changes are executed after a SAVEPOINT, so
// that Rollback can take them back.
func (s *Sink) flush(upto int) error {
	if upto == 0 {
		return nil
	}
	if err := s.sync(); err != nil { // background.go
		return err
	}
	done := min(upto, s.curStart)
	savepoint := upto > done && !s.curExecuted
	if upto > done {
		// (Set before: a failure here fails the sink, which looks at
		// it no more.)
		s.curExecuted = true
	}
	if err := s.execTx(s.pend[:upto], done, savepoint, &s.group.stats, &s.cur); err != nil {
		return err
	}
	for i := range upto {
		s.pendBytes -= opMem(&s.pend[i])
	}
	n := copy(s.pend, s.pend[upto:])
	clear(s.pend[n:])
	s.pend = s.pend[:n]
	s.curStart = max(0, s.curStart-upto)
	if s.history == nil {
		// No job is in flight (sync): every op queued before those
		// still pending was executed, or dropped (Rollback).
		s.release(s.wrote - uint64(n))
	}
	return nil
}

// execTx executes ops in the target transaction (begun if need be):
// ops[:done] of committed source transactions, counted in st, then
// ops[done:] of the open one, counted in cur, after a SAVEPOINT that
// Rollback can go back to when savepoint is set. flush's work, and a
// background part's (applyPart).
func (s *Sink) execTx(ops []op, done int, savepoint bool, st, cur *Stats) error {
	if err := s.begin(); err != nil {
		return err
	}
	if err := s.execOps(ops[:done], st); err != nil {
		return err
	}
	if done == len(ops) {
		return nil
	}
	if savepoint {
		if err := s.plain("SAVEPOINT binlogcdc_tx"); err != nil {
			return fmt.Errorf("target: %w", err)
		}
	}
	return s.execOps(ops[done:], cur)
}

// execOpsOneByOne executes changes in order, one statement per round
// trip, consecutive inserts into one table with the same columns as
// multi-row INSERTs.
func (s *Sink) execOpsOneByOne(ops []op, st *Stats) error {
	for i := 0; i < len(ops); {
		o := &ops[i]
		if err := s.setForeignKeyChecks(o.fk); err != nil {
			return err
		}
		if o.plan.versioned() {
			if err := s.versionedOp(o, st); err != nil {
				return err
			}
			i++
			continue
		}
		var err error
		switch o.c.Op {
		case change.Insert:
			j := i + 1
			for j < len(ops) && sameInsert(&ops[j], o) {
				j++
			}
			err = s.insertRun(ops[i:j], st)
			i = j
		case change.Update:
			err = s.update(o, st)
			i++
		case change.Delete:
			err = s.delete(o, st)
			i++
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sameInsert reports whether a is an insert that can share b's
// multi-row INSERT: same table, columns and foreign key checks.
func sameInsert(a, b *op) bool {
	return a.c.Op == change.Insert && a.plan == b.plan && a.fk == b.fk && slices.Equal(a.cols, b.cols)
}

func isDuplicate(err error) bool {
	switch myErrorCode(err) {
	case mysql.ER_DUP_ENTRY, mysql.ER_DUP_ENTRY_WITH_KEY_NAME, mysql.ER_DUP_KEY, mysql.ER_DUP_UNIQUE:
		return true
	}
	return false
}

// insertRun inserts rows sharing one shape.
func (s *Sink) insertRun(ops []op, st *Stats) error {
	for len(ops) > 0 {
		k := insertChunk(ops, s.insertRows(), s.batchBytesLimit())
		chunk := ops[:k]
		o := &chunk[0]
		s.b.Reset()
		s.b.InsertHead("INSERT", o.c.Table, o.cols)
		for n := range chunk {
			if n > 0 {
				s.b.SQL = append(s.b.SQL, ',')
			}
			s.b.InsertTuple(o.cols, chunk[n].c.After)
		}
		_, err := s.exec(&s.b)
		switch {
		case err == nil:
			st.table(o.plan.name).Inserted += uint64(k)
		case k > 1 && statementRolledBack(err):
			// The statement was rolled back as a whole: find the row (a
			// duplicate key, or a value the target refuses).
			for n := range chunk {
				if err := s.insertOne(&chunk[n], st); err != nil {
					return err
				}
			}
		case isDuplicate(err):
			if err := s.conflict(o, st, "duplicate key on the target: "+serverMessage(err)); err != nil {
				return err
			}
		default:
			if e := s.packetError(batchBytes(chunk), err); e != nil {
				return changeError(&o.c, e)
			}
			return s.execError(o, err)
		}
		ops = ops[k:]
	}
	return nil
}

// statementRolledBack reports whether err undid only the failed statement
// (a server error other than a deadlock or lock wait timeout, which may
// end the transaction; not a lost connection).
func statementRolledBack(err error) bool {
	switch myErrorCode(err) {
	case 0, mysql.ER_LOCK_DEADLOCK, mysql.ER_LOCK_WAIT_TIMEOUT:
		return false
	}
	return true
}

func batchBytes(ops []op) int {
	n := 0
	for i := range ops {
		n += ops[i].size
	}
	return n
}

func (s *Sink) insertOne(o *op, st *Stats) error {
	if err := s.setForeignKeyChecks(o.fk); err != nil {
		return err
	}
	s.b.Reset()
	s.b.Insert("INSERT", o.c.Table, o.cols, o.c.After)
	_, err := s.exec(&s.b)
	switch {
	case err == nil:
		st.table(o.plan.name).Inserted++
		return nil
	case isDuplicate(err):
		return s.conflict(o, st, "duplicate key on the target: "+serverMessage(err))
	}
	return s.execError(o, err)
}

func (s *Sink) update(o *op, st *Stats) error {
	s.b.Reset()
	s.b.Update(o.c.Table, o.cols, o.c.After, o.key, o.c.Before)
	n, err := s.exec(&s.b)
	switch {
	case isDuplicate(err):
		return s.conflict(o, st, "the new key already exists on the target: "+serverMessage(err))
	case err != nil:
		return s.execError(o, err)
	case n == 0:
		return s.conflict(o, st, "no row on the target matches the before image")
	case n > 1:
		return changeError(&o.c, fmt.Errorf("target: %w", manyMatched(n)))
	}
	st.table(o.plan.name).Updated++
	return nil
}

func (s *Sink) delete(o *op, st *Stats) error {
	s.b.Reset()
	s.b.Delete(o.c.Table, o.key, o.c.Before)
	n, err := s.exec(&s.b)
	switch {
	case err != nil:
		return s.execError(o, err)
	case n == 0:
		return s.conflict(o, st, "no row on the target matches the before image")
	case n > 1:
		return changeError(&o.c, fmt.Errorf("target: %w", manyMatched(n)))
	}
	st.table(o.plan.name).Deleted++
	return nil
}

// manyMatched is the error of an UPDATE or DELETE by key that matched n > 1
// rows on the target: the source changed one row, and a native replica
// would change one. It is never a conflict to skip or overwrite (the
// statement already changed them all); it ends the run, and the target
// transaction, with everything since the checkpoint, is rolled back.
func manyMatched(n uint64) error {
	return fmt.Errorf("the statement matched %d rows, where the source changed one: the target's key for this table differs from the source's "+
		"(another column type, a different collation, or not unique); the target stays at its checkpoint: make its table match the source's and run again", n)
}

// conflict applies the conflict policy to o.
func (s *Sink) conflict(o *op, st *Stats, problem string) error {
	ts := st.table(o.plan.name)
	switch s.opts.OnConflict {
	case PolicySkip:
		ts.Skipped++
		s.logf("conflict skipped: %s", s.conflictError(o, problem).describe())
		return nil
	case PolicyOverwrite:
		if err := s.overwrite(o); err != nil {
			return err
		}
		ts.Overwritten++
		s.logf("conflict overwritten: %s", s.conflictError(o, problem).describe())
		return nil
	}
	return s.conflictError(o, problem)
}

// overwrite makes the target row what the source says: the after image
// for an insert or update (REPLACE, after deleting the row an update
// moves away from), nothing more for a delete (the row is already gone).
func (s *Sink) overwrite(o *op) error {
	c := &o.c
	if c.Op == change.Delete {
		return nil
	}
	// A repair, not a source change: it must not cascade to child rows
	// (REPLACE deletes the old row first).
	if err := s.setForeignKeyChecks(false); err != nil {
		return err
	}
	if c.Op == change.Update {
		s.b.Reset()
		s.b.Delete(c.Table, o.key, c.Before)
		if _, err := s.exec(&s.b); err != nil {
			return s.execError(o, err)
		}
	}
	// The after image, completed with the before image's values where it
	// lacks columns (a MINIMAL update image lacks the unchanged key).
	row := c.After
	if c.Op == change.Update {
		row = slices.Clone(c.After)
		for i, v := range row {
			if v.IsAbsent() && i < len(c.Before) {
				row[i] = c.Before[i]
			}
		}
	}
	cols := sqltext.Columns(nil, row, o.plan.ins)
	s.b.Reset()
	s.b.Insert("REPLACE", c.Table, cols, row)
	if _, err := s.exec(&s.b); err != nil {
		return s.execError(o, err)
	}
	return nil
}

func (s *Sink) conflictError(o *op, problem string) *ConflictError {
	c := &o.c
	row, k := c.Before, o.key
	if c.Op == change.Insert {
		row = c.After
		var err error
		if k, err = sqltext.KeyOf(c.Table, row, o.plan.keep); err != nil {
			k = sqltext.Key{Cols: o.cols}
		}
	}
	at := s.saved.Next
	return &ConflictError{Op: c.Op, Table: tableName(c), Key: sqltext.DescribeKey(c.Table, k, row),
		Pos: c.Pos, Row: c.RowIndex, GTID: c.GTID, Problem: problem, Checkpoint: at}
}

// batchBytesLimit bounds the values of one multi-row INSERT: maxBatchBytes,
// and half the target's max_allowed_packet, which a statement must fit.
func (s *Sink) batchBytesLimit() int {
	if s.maxAllowedPacket > 0 {
		return min(maxBatchBytes, s.maxAllowedPacket/2)
	}
	return maxBatchBytes
}

// execError wraps a server error that is not a conflict.
func (s *Sink) execError(o *op, err error) error {
	if e := s.packetError(o.size, err); e != nil {
		return changeError(&o.c, e)
	}
	switch myErrorCode(err) {
	case mysql.ER_ROW_IS_REFERENCED_2, mysql.ER_NO_REFERENCED_ROW_2:
		if o.fk {
			return changeError(&o.c, fmt.Errorf("target: %w (replay checks foreign keys as the source did, so that the target cascades to child rows as a native replica does; "+
				"the target's related rows differ from the source's: was a table left out with --tables or --exclude-tables, or changed on the target?)", err))
		}
	}
	return changeError(&o.c, fmt.Errorf("target: %w", err))
}

// packetError explains err as a statement larger than the target's
// max_allowed_packet, when it is one: the server refuses it with ERROR
// 1153, or, when it notices while the client still writes, just closes
// the connection ("connection reset by peer").
func (s *Sink) packetError(size int, err error) error {
	var big *packetTooLarge
	if errors.As(err, &big) {
		return fmt.Errorf("target: %w; %s", err, raisePacketHint(big.need))
	}
	var me *mysql.MyError
	tooBig := errors.As(err, &me) && me.Code == mysql.ER_NET_PACKET_TOO_LARGE
	if !tooBig && (me != nil || s.maxAllowedPacket <= 0 || size < s.maxAllowedPacket*9/10) {
		return nil
	}
	return fmt.Errorf("target: the statement for this row needs about %d bytes, more than the target's max_allowed_packet (%d bytes), so the target refused it (%v); %s",
		size, s.maxAllowedPacket, err, raisePacketHint(size))
}

// raisePacketHint says what to set for a statement of need bytes.
func raisePacketHint(need int) string {
	if need >= 1<<30 {
		return "no MySQL or MariaDB server accepts a statement over 1 GiB (max_allowed_packet's limit), so this row cannot be replayed"
	}
	return "raise it on the target: SET GLOBAL max_allowed_packet = 1073741824 (and in its my.cnf), then run again: binlogcdc resumes at its checkpoint"
}

// readMaxAllowedPacket returns the server's max_allowed_packet, or 0.
func readMaxAllowedPacket(c *client.Conn) int {
	r, err := c.Execute("SELECT @@max_allowed_packet")
	if err != nil {
		return 0
	}
	defer r.Close()
	n, _ := r.GetInt(0, 0)
	return int(n)
}

func serverMessage(err error) string {
	var me *mysql.MyError
	if errors.As(err, &me) {
		return me.Message
	}
	return err.Error()
}

func (s *Sink) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}
