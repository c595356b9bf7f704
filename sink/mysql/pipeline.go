package mysqlsink

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
)

// Pipelining. Applying a change costs one round trip to the target: an
// UPDATE or DELETE of one row, or a multi-row INSERT, is sent, and its
// result read, before the next is sent. So replay spends most of its time
// waiting. Instead, up to maxPipeline statements are sent at once, after
// a SAVEPOINT, and their results read afterwards, in order. Each result
// is checked exactly as when it runs alone (an UPDATE or DELETE must match
// its row, an INSERT must not hit a duplicate key). When all pass, the
// changes are applied, as they would have been one by one. When one does
// not (a conflict, a value the target refuses), the statements are undone
// with ROLLBACK TO SAVEPOINT and run again one by one, the usual way, which
// reports or handles the problem exactly as before. An error that may have
// ended the target transaction (deadlock, lock wait timeout, lost
// connection) fails the group, as it does one by one.
//
// A deadlock rolls back the whole target transaction, and with autocommit
// on the statements sent after it would then commit one by one. So the
// session runs with autocommit=0 while a pipelined transaction is open:
// after such an error nothing commits until the group's ROLLBACK. It is
// set after BEGIN (which changes nothing there) and set back after the
// COMMIT or ROLLBACK.
//
// Pipelining is used with --on-conflict error only: the one-by-one redo
// then meets the same conflict and stops. (With skip or overwrite, a
// non-transactional target table, which ROLLBACK TO SAVEPOINT cannot
// undo, would see changes twice.)
//
// The statements are sent as they are encoded (sendPipe), once the
// pipeline holds pipeStreamBytes unsent: the target starts on the first
// while binlogcdc encodes the next, instead of waiting for the whole
// pipeline (about a millisecond for a group of 5,000 inserts, measured,
// at each group). Only when nothing else must be sent first (autocommit
// is off already: between background groups, queued.go), and once a
// statement is sent, the pipeline ends before a statement not
// prepared yet, or whose table's catalog is to be asked first
// (batchSafe): no other command can be sent while results are pending.
const (
	pipeStreamBytes  = 32 << 10  // unsent request bytes that are sent while the pipeline is built
	maxPipeline      = 64        // statements per round trip
	maxPipelineBytes = 4 << 20   // request bytes per round trip (one statement may exceed it alone)
	maxPacket        = 1<<24 - 1 // larger statements need split packets: sent one by one
)

// pipeStmt is one statement of a pipeline.
type pipeStmt struct {
	first, n int       // the ops it applies: ops[first : first+n]
	op       change.Op // Insert (n rows), Update or Delete
	upsert   bool      // n updates as one INSERT … ON DUPLICATE KEY UPDATE (upsert.go)
	deleteIn bool      // n deletes as one DELETE … IN (delete.go)
}

// canPipeline reports whether the session and the options allow it.
func (s *Sink) canPipeline() bool {
	return s.opts.OnConflict == PolicyError && s.conn.Compression == mysql.MYSQL_COMPRESS_NONE
}

// execOps executes changes in order, consecutive inserts into one table
// with the same columns as multi-row INSERTs, several statements per
// round trip where it can (see above).
func (s *Sink) execOps(ops []op, st *Stats) error {
	if enumErrorAt(ops) >= 0 {
		return s.execOpsEnumErrors(ops, st) // enum.go
	}
	if !s.canPipeline() {
		return s.execOpsOneByOne(ops, st)
	}
	for len(ops) > 0 {
		if n := s.bulkLen(ops); n > 0 {
			if err := s.loadRun(ops[:n], st); err != nil { // bulk.go
				return err
			}
			ops = ops[n:]
			continue
		}
		// The statements of a pipeline share ops[0]'s foreign key checks
		// (and the one-by-one path sets them for ops[0] too): set before,
		// so that the pipeline can be sent as it is built.
		if err := s.setForeignKeyChecks(ops[0].fk); err != nil {
			return err
		}
		stmts, n, err := s.buildPipeline(ops, s.noAutocommit)
		if err != nil {
			return err
		}
		if len(stmts) < 2 && s.pipeSent == 0 {
			// Nothing to gain (or a statement too large for one packet).
			if err := s.execOpsOneByOne(ops[:n], st); err != nil {
				return err
			}
		} else {
			ok, bad, err := s.runPipeline(ops, stmts)
			if err != nil {
				return err
			}
			if ok {
				for _, p := range stmts {
					ts := st.table(ops[p.first].plan.name)
					switch p.op {
					case change.Insert:
						ts.Inserted += uint64(p.n)
					case change.Update:
						ts.Updated += uint64(p.n)
					case change.Delete:
						ts.Deleted += uint64(p.n)
					}
				}
			} else if err := s.redo(ops, stmts, bad, st); err != nil {
				return err
			}
		}
		ops = ops[n:]
	}
	return nil
}

// buildPipeline encodes the COM_STMT_EXECUTE packets for a prefix
// ops[:n] into s.pipe, preparing statements as needed. A prefix of one
// statement, or a statement that does not fit one packet, comes back
// alone, unencoded.
//
// With stream, the statements are sent as they are encoded (see
// pipeStreamBytes); when some were (s.pipeSent > 0), the pipeline must be
// run (runPipeline), even with one statement.
func (s *Sink) buildPipeline(ops []op, stream bool) (stmts []pipeStmt, n int, err error) {
	// The statements come after a SAVEPOINT, to undo them. At most
	// maxPipeline of them: the statement cache (stmtCacheSize, least
	// recently used out) cannot drop one of them while later ones are
	// prepared.
	s.pipe = appendPacket(s.pipe[:0], mysql.COM_QUERY, []byte("SAVEPOINT binlogcdc_pipe"))
	s.pipeStmts = s.pipeStmts[:0]
	s.pipeSent, s.pipeNQ, s.pipeAsk = 0, 0, false
loop:
	for n < len(ops) && len(s.pipeStmts) < maxPipeline && len(s.pipe) < maxPipelineBytes {
		o := &ops[n]
		if o.plan.versioned() || o.fk != ops[0].fk {
			// One at a time (versioned.go); or foreign key checks change.
			if len(s.pipeStmts) == 0 {
				return nil, n + 1, nil
			}
			break
		}
		k, enc := 1, false
		s.b.Reset()
		switch o.c.Op {
		case change.Insert:
			if n > 0 && s.bulkLen(ops[n:]) > 0 {
				break loop // LOAD DATA next (execOps)
			}
			j := n + 1
			for j < len(ops) && sameInsert(&ops[j], o) {
				j++
			}
			k = insertChunk(ops[n:j], s.insertRows(), s.batchBytesLimit())
			s.b.InsertHead("INSERT", o.c.Table, o.cols)
			if enc = encoded(ops[n : n+k]); enc { // encoded.go: the values are bound already
				s.b.PlaceholderTuples(k, len(o.cols))
				break
			}
			for i := n; i < n+k; i++ {
				if i > n {
					s.b.SQL = append(s.b.SQL, ',')
				}
				s.b.InsertTuple(o.cols, ops[i].c.After)
			}
		case change.Update:
			if k = s.upsertChunk(ops[n:]); s.pipeAsk {
				break loop // a round trip first, in the next pipeline
			} else if k > 0 { // upsert.go
				s.buildUpsert(ops[n : n+k])
			} else {
				k = 1
				s.b.Update(o.c.Table, o.cols, o.c.After, o.key, o.c.Before)
			}
		case change.Delete:
			if k = s.deleteChunk(ops[n:]); s.pipeAsk {
				break loop // a round trip first, in the next pipeline
			} else if k > 0 { // delete.go
				s.buildDeleteIn(ops[n : n+k])
			} else {
				k = 1
				s.b.Delete(o.c.Table, o.key, o.c.Before)
			}
		default:
			if len(s.pipeStmts) == 0 {
				return nil, n + 1, nil // execOpsOneByOne deals with it
			}
			break loop
		}
		if argBytes(s.b.Args) >= largeStatement {
			// Sent alone, from the values (large.go).
			if len(s.pipeStmts) == 0 {
				return nil, n + k, nil
			}
			break
		}
		if s.pipeSent > 0 && !s.stmts.has(s.b.SQL) {
			break // results are pending: no COM_STMT_PREPARE now
		}
		st, err := s.stmts.get(s.conn, s.b.SQL)
		if err != nil {
			if len(s.pipeStmts) == 0 {
				return nil, n + k, nil // the one-by-one path reports it
			}
			break
		}
		mark := len(s.pipe)
		var ok bool
		if enc {
			s.pipe, ok = appendExecuteEncoded(s.pipe, st, ops[n:n+k], s.conn.HasCapability(mysql.CLIENT_QUERY_ATTRIBUTES))
		} else {
			s.pipe, ok = appendExecute(s.pipe, st, s.b.Args, s.conn.HasCapability(mysql.CLIENT_QUERY_ATTRIBUTES))
		}
		if !ok || len(s.pipe)-mark-4 >= maxPacket {
			s.pipe = s.pipe[:mark]
			if len(s.pipeStmts) == 0 {
				return nil, n + k, nil
			}
			break
		}
		s.pipeStmts = append(s.pipeStmts, pipeStmt{first: n, n: k, op: o.c.Op, upsert: o.c.Op == change.Update && k > 1, deleteIn: o.c.Op == change.Delete && k > 1})
		n += k
		if stream && len(s.pipe)-s.pipeSent >= pipeStreamBytes {
			if err := s.sendPipe(); err != nil {
				return nil, 0, err
			}
		}
	}
	return s.pipeStmts, n, nil
}

// askLater reports whether a question to the target's catalog must wait
// because statements were sent whose results are pending (buildPipeline
// then ends the pipeline before the statement that needs it: pipeAsk).
func (s *Sink) askLater() bool {
	if s.pipeSent == 0 {
		return false
	}
	s.pipeAsk = true
	return true
}

// sendPipe sends what s.pipe holds unsent, after the queued checkpoint
// UPDATE if there is one (queued.go).
func (s *Sink) sendPipe() error {
	if s.queued != nil {
		if _, err := s.conn.Write(s.queued); err != nil {
			return fmt.Errorf("target: %w", err)
		}
		s.queued, s.pipeNQ = nil, 1
	}
	if s.pipeSent < len(s.pipe) {
		if _, err := s.conn.Write(s.pipe[s.pipeSent:]); err != nil {
			return fmt.Errorf("target: %w", err)
		}
		s.pipeSent = len(s.pipe)
	}
	return nil
}

// insertChunk is how many of the rows of an insert run (same table, same
// columns) go into the next INSERT: a power of two (few statement shapes
// to prepare), within maxRows, maxPlaceholders and maxBytes.
func insertChunk(ops []op, maxRows, maxBytes int) int {
	limit := min(maxRows, max(1, maxPlaceholders/len(ops[0].cols)))
	k := 1
	for k*2 <= min(len(ops), limit) {
		k *= 2
	}
	for k > 1 && batchBytes(ops[:k]) > maxBytes {
		k /= 2
	}
	return k
}

// insertRows is the most rows an INSERT takes: bulkInsertRows with bulk
// loading, maxBatchRows without (apply.go).
func (s *Sink) insertRows() int {
	if s.opts.NoBulkLoad {
		return maxBatchRows
	}
	return bulkInsertRows
}

// runPipeline sends the SAVEPOINT and statements encoded in s.pipe and
// reads their results. ok is false when one of them did not pass its
// check: they were undone, and are to be run again one by one (redo);
// bad says which and why.
func (s *Sink) runPipeline(ops []op, stmts []pipeStmt) (ok bool, bad pipeFailure, err error) {
	if !s.noAutocommit {
		if err := s.plain("SET autocommit=0"); err != nil {
			return false, bad, fmt.Errorf("target: SET autocommit=0: %w", err)
		}
		s.noAutocommit = true
	}
	// What is left of it in one write (buildPipeline may have sent the
	// start): the server reads the statements while we wait for the
	// results, which are small (an OK or error packet each). The queued
	// checkpoint UPDATE, if any, goes first (queued.go).
	if err := s.sendPipe(); err != nil {
		return false, bad, err
	}
	nq := s.pipeNQ
	s.pipeSent, s.pipeNQ = 0, 0
	// Read every result, whatever happened, to keep the session in step.
	qErr := s.readQueued(nq)
	if _, err := s.readResult(); err != nil || qErr != nil {
		for range stmts {
			s.readResult()
		}
		if qErr != nil {
			return false, bad, qErr
		}
		return false, bad, fmt.Errorf("target: SAVEPOINT: %w", err)
	}
	var hard error
	hardAt := -1
	bad.at = -1
	for i, p := range stmts {
		n, err := s.readResult()
		switch {
		case err != nil && !statementRolledBack(err):
			if hard == nil {
				hard, hardAt = err, i
			}
		case err == nil && p.op != change.Insert && !p.upsert && !p.deleteIn && n > 1: // more rows than the source changed
			if hard == nil {
				hard, hardAt = manyMatched(n), i
			}
		case p.upsert && (err != nil || n != 2*uint64(p.n)): // a row missing, unchanged, or refused
			if bad.at < 0 {
				bad.at, bad.err, bad.batch = i, err, true
			}
		case p.deleteIn && (err != nil || n != uint64(p.n)): // a row missing (or a key twice), or refused
			if bad.at < 0 {
				bad.at, bad.err, bad.batch = i, err, true
			}
		case err != nil, p.op != change.Insert && n == 0: // refused, or no row matched
			if bad.at < 0 {
				bad.at, bad.err = i, err
			}
		}
	}
	if hard != nil && (bad.at < 0 || hardAt < bad.at) {
		// One by one, this error would have ended the run here.
		return false, bad, s.execError(&ops[stmts[hardAt].first], hard)
	}
	if bad.at >= 0 {
		if err := s.plain("ROLLBACK TO SAVEPOINT binlogcdc_pipe"); err != nil {
			if hard != nil { // it ended the transaction, savepoint and all
				return false, bad, s.execError(&ops[stmts[hardAt].first], hard)
			}
			return false, bad, fmt.Errorf("target: %w", err)
		}
		return false, bad, nil
	}
	return true, bad, nil
}

// pipeFailure is the first statement of a pipeline that did not pass
// its check: stmts[at], with its error (nil: it matched no row).
type pipeFailure struct {
	at    int
	err   error
	batch bool // stmts[at] is a batch of updates or deletes: not a failure by itself
}

// redo runs the statements of a failed pipeline again one by one, up to
// and including the one that failed, which reports or handles the
// problem as usual. The redo must meet it too: a failure the redo does
// not reproduce (the target changed in between, or something the
// ROLLBACK TO SAVEPOINT does not undo, such as an AUTO_INCREMENT counter
// a trigger moved, made the statement pass the second time) is reported
// all the same, as the conflict it was, not hidden.
func (s *Sink) redo(ops []op, stmts []pipeStmt, bad pipeFailure, st *Stats) error {
	if bad.batch {
		// Whether a row was missing (a conflict), unchanged, or refused:
		// the whole pipeline one statement at a time says, as usual.
		last := stmts[len(stmts)-1]
		return s.execOpsOneByOne(ops[:last.first+last.n], st)
	}
	p := stmts[bad.at]
	if err := s.execOpsOneByOne(ops[:p.first+p.n], st); err != nil {
		return err
	}
	o := &ops[p.first]
	switch {
	case bad.err == nil:
		return s.conflictError(o, "no row on the target matches the before image (the statement matched none when first sent; "+
			"run again after ROLLBACK TO SAVEPOINT, it did: the target is not what the binlog expects)")
	case isDuplicate(bad.err):
		return s.conflictError(o, "duplicate key on the target: "+serverMessage(bad.err)+" (when first sent; "+
			"run again after ROLLBACK TO SAVEPOINT, it passed: something the rollback does not undo, such as an AUTO_INCREMENT counter moved by a trigger, differs)")
	}
	return s.execError(o, fmt.Errorf("target: %w (when first sent; run again after ROLLBACK TO SAVEPOINT, it passed)", bad.err))
}

// readResult reads the result of one pipelined command: the matched rows
// (CLIENT_FOUND_ROWS) of an OK packet, or the error of an error packet.
func (s *Sink) readResult() (uint64, error) {
	s.conn.Sequence = 1 // each command's first reply packet
	data, err := s.conn.ReadPacket()
	if err != nil {
		return 0, err
	}
	switch {
	case len(data) > 0 && data[0] == mysql.OK_HEADER:
		return s.conn.HandleOKPacket(data).AffectedRows, nil
	case len(data) > 0 && data[0] == mysql.ERR_HEADER:
		return 0, s.conn.HandleErrorPacket(data)
	}
	return 0, fmt.Errorf("%w: unexpected reply to a pipelined statement", mysql.ErrMalformPacket)
}

// restoreAutocommit turns autocommit back on after the target transaction
// ended (see above).
func (s *Sink) restoreAutocommit() error {
	if !s.noAutocommit {
		return nil
	}
	if err := s.plain("SET autocommit=1"); err != nil {
		return fmt.Errorf("target: SET autocommit=1: %w", err)
	}
	s.noAutocommit = false
	return nil
}

// appendPacket appends one client packet (sequence 0): cmd, then payload.
func appendPacket(b []byte, cmd byte, payload []byte) []byte {
	n := 1 + len(payload)
	b = append(b, byte(n), byte(n>>8), byte(n>>16), 0, cmd)
	return append(b, payload...)
}

// appendExecute appends a COM_STMT_EXECUTE packet (sequence 0) for st with
// args bound as bindValue binds them, in the bytes go-mysql's
// Stmt.Execute writes. ok is false when a value cannot be bound or the
// count is wrong (the one-by-one path reports it).
//
//	1      COM_STMT_EXECUTE
//	4      statement id
//	1      flags: no cursor (| PARAMETER_COUNT_AVAILABLE with parameters)
//	4      iteration count, 1
//	with parameters:
//	  lenenc   parameter count (CLIENT_QUERY_ATTRIBUTES only)
//	  (n+7)/8  NULL bitmap
//	  1        new-params-bound flag (0 when all are NULL)
//	  2n       type, flag (+ an empty name with CLIENT_QUERY_ATTRIBUTES)
//	  …        values
func appendExecute(b []byte, st *client.Stmt, args []change.Value, queryAttrs bool) ([]byte, bool) {
	return appendExecuteSplit(b, st, args, queryAttrs, nil)
}

// appendExecuteSplit is appendExecute; with large set, the values that
// isLarge reports are not appended but listed there, each after its
// length prefix (execStreamed sends them from where they lie), and the
// packet header's length is left unset.
func appendExecuteSplit(b []byte, st *client.Stmt, args []change.Value, queryAttrs bool, large *[]largePart) ([]byte, bool) {
	n := st.ParamNum()
	if len(args) != n {
		return b, false
	}
	start := len(b)
	b = append(b, 0, 0, 0, 0, mysql.COM_STMT_EXECUTE)
	b = binary.LittleEndian.AppendUint32(b, st.ID)
	flags := mysql.CURSOR_TYPE_NO_CURSOR
	if n > 0 {
		flags |= mysql.PARAMETER_COUNT_AVAILABLE
	}
	b = append(b, flags, 1, 0, 0, 0)
	if n > 0 {
		if queryAttrs {
			b = appendLenEnc(b, uint64(n))
		}
		nulls := len(b)
		b = append(b, make([]byte, (n+7)/8)...)
		bound := len(b)
		b = append(b, 0)
		types := len(b)
		for i, v := range args {
			if v.Kind() == change.Null {
				b[nulls+i/8] |= 1 << (i % 8)
				b = append(b, mysql.MYSQL_TYPE_NULL, 0)
			} else {
				b[bound] = 1
				t, f, ok := paramType(v)
				if !ok {
					return b[:start], false
				}
				b = append(b, t, f)
			}
			if queryAttrs {
				b = append(b, 0) // no name
			}
		}
		if b[bound] == 0 {
			b = b[:types] // all NULL: go-mysql sends no types
		}
		for _, v := range args {
			if large != nil && isLarge(v) {
				b = appendLenEnc(b, uint64(len(v.Bytes())))
				*large = append(*large, largePart{at: len(b), data: v.Bytes()})
				continue
			}
			b = appendParam(b, v)
		}
	}
	l := len(b) - start - 4
	b[start], b[start+1], b[start+2] = byte(l), byte(l>>8), byte(l>>16)
	return b, true
}

// paramType is the type and flag byte of a value bound as bindValue does.
func paramType(v change.Value) (typ, flag byte, ok bool) {
	switch v.Kind() {
	case change.Int:
		return mysql.MYSQL_TYPE_LONGLONG, 0, true
	case change.Enum:
		if v.Uint() == 0 {
			return mysql.MYSQL_TYPE_LONGLONG, mysql.PARAM_UNSIGNED, true
		}
		return mysql.MYSQL_TYPE_STRING, 0, true
	case change.Uint:
		return mysql.MYSQL_TYPE_LONGLONG, mysql.PARAM_UNSIGNED, true
	case change.Set:
		if sqltext.SetByNumber(v) {
			return mysql.MYSQL_TYPE_LONGLONG, mysql.PARAM_UNSIGNED, true
		}
		return mysql.MYSQL_TYPE_STRING, 0, true
	case change.Float32, change.Float64:
		return mysql.MYSQL_TYPE_DOUBLE, 0, true
	case change.Decimal, change.Date, change.Datetime, change.Timestamp, change.Time,
		change.String, change.JSON:
		return mysql.MYSQL_TYPE_STRING, 0, true
	case change.Bytes, change.Vector, change.Geometry:
		return mysql.MYSQL_TYPE_BLOB, 0, true
	}
	return 0, 0, false
}

// appendParam appends a non-NULL value as bindValue binds it.
func appendParam(b []byte, v change.Value) []byte {
	switch v.Kind() {
	case change.Null:
		return b
	case change.Int, change.Uint:
		return binary.LittleEndian.AppendUint64(b, v.Uint())
	case change.Enum:
		if v.Uint() == 0 {
			return binary.LittleEndian.AppendUint64(b, 0)
		}
	case change.Set:
		if sqltext.SetByNumber(v) {
			return binary.LittleEndian.AppendUint64(b, v.Uint())
		}
	case change.Float32, change.Float64:
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float()))
	case change.Geometry:
		g := sqltext.GeometryBytes(v)
		return append(appendLenEnc(b, uint64(len(g))), g...)
	}
	return append(appendLenEnc(b, uint64(len(v.Bytes()))), v.Bytes()...)
}

func appendLenEnc(b []byte, n uint64) []byte {
	switch {
	case n <= 250:
		return append(b, byte(n))
	case n <= 0xffff:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n <= 0xffffff:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), n)
}
