package mysqlsink

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// LOAD DATA LOCAL (Options.LoadData, --load-data). A long run of inserts
// into one table (same columns, same foreign key checks) is sent as LOAD
// DATA LOCAL INFILE, its rows streamed from memory as the "file": the
// target parses tab-separated fields straight into the columns. On
// MariaDB 10.11 that costs the target more CPU than the same rows as
// prepared multi-row INSERTs (apply.go), the default, and binlogcdc
// less. The exchange, on the sink's connection:
//
//	client  COM_QUERY "SAVEPOINT binlogcdc_pipe", COM_QUERY "LOAD DATA LOCAL INFILE …" (one write)
//	server  OK (the savepoint); 0xFB + file name (send the file)
//	client  the rows, in packets; an empty packet (end of file)
//	server  OK (affected rows = rows inserted, warnings) or ERR
//
// Checked exactly. LOAD DATA LOCAL turns what an INSERT refuses (a
// duplicate key, a value the column cannot store, a missing parent row)
// into a skipped row or an adjusted value with a warning. So the run
// passes only when the target inserted every row without a single
// warning; otherwise it is undone (ROLLBACK TO SAVEPOINT) and run again
// through the usual INSERTs, which report or handle the problem exactly
// as without bulk loading. A value LOAD DATA cannot write exactly (see
// appendLoadValue) ends the run before its row: that row goes by INSERT.
//
// Used with Options.LoadData where pipelining is (--on-conflict error,
// no compression), for tables that are not system-versioned, when the
// target allows local_infile (checked at Open; a refusal later turns it
// off with a note).
const (
	bulkMinRows   = 128     // shorter runs go as multi-row INSERTs
	bulkMaxRowLen = 1 << 20 // a row larger than this goes by INSERT
	bulkChunk     = 1 << 20 // bytes of file data per packet
)

// MariaDB and MySQL error codes for a LOAD DATA LOCAL that the server or
// the client capability does not allow.
const (
	erNotAllowedCommand            = 1148 // ER_NOT_ALLOWED_COMMAND
	erClientLocalFilesDisabled     = 3948 // MySQL 8.0: ER_CLIENT_LOCAL_FILES_DISABLED
	erLoadInfileCapabilityDisabled = 4166 // MariaDB: ER_LOAD_INFILE_CAPABILITY_DISABLED
)

// localInfile reports whether the target allows LOAD DATA LOCAL, with a
// note when it does not.
func (s *Sink) localInfile(c *client.Conn) bool {
	r, err := c.Execute("SELECT @@GLOBAL.local_infile")
	if err != nil {
		return false
	}
	defer r.Close()
	if n, _ := r.GetInt(0, 0); n == 1 {
		return true
	}
	if !s.opts.quietBulk {
		s.logf("note: the target does not allow LOAD DATA LOCAL INFILE (local_infile is off): long insert runs go as multi-row INSERTs, which cost the target more; SET GLOBAL local_infile = 1 on the target allows it")
	}
	return false
}

// bulkLen is the length of the insert run at ops[0] that can go as one
// LOAD DATA, or 0 when it is shorter than bulkMinRows (or bulk loading
// is off).
func (s *Sink) bulkLen(ops []op) int {
	if !s.bulkOK || len(ops) < bulkMinRows {
		return 0
	}
	o := &ops[0]
	if o.c.Op != change.Insert || o.plan.versioned() || o.plan.noLoad {
		return 0
	}
	n := 0
	for n < len(ops) && sameInsert(&ops[n], o) && (ops[n].line != nil || loadable(&ops[n])) {
		n++
	}
	if n < bulkMinRows {
		return 0
	}
	return n
}

// loadable reports whether every value of the insert o can be written
// exactly as a LOAD DATA field.
func loadable(o *op) bool {
	if o.size > bulkMaxRowLen {
		return false
	}
	cols := o.c.Table.Columns
	for _, i := range o.cols {
		if i >= len(cols) {
			return false
		}
		if _, ok := appendLoadValue(nil, &cols[i], o.c.After[i], true); !ok {
			return false
		}
	}
	return len(o.cols) > 1 || len(o.c.After[o.cols[0]].Bytes()) > 0 || !textKind(o.c.After[o.cols[0]].Kind())
}

// appendLoadLine appends the insert o's row as a LOAD DATA line (o is
// loadable).
func appendLoadLine(b []byte, o *op) []byte {
	cols, row := o.c.Table.Columns, o.c.After
	for n, i := range o.cols {
		if n > 0 {
			b = append(b, '\t')
		}
		b, _ = appendLoadValue(b, &cols[i], row[i], false)
	}
	return append(b, '\n')
}

// lineSlabSize is the size of the blocks queued inserts' lines are cut
// from: one allocation for many lines, freed when none is pending.
const lineSlabSize = 64 << 10

// formatLine sets the queued insert o's line, when it can go by LOAD
// DATA. It runs as the change is queued (Write), so that with Background
// the decoding goroutine does this work while the target loads the group
// before, not the goroutine that feeds the target.
func (s *Sink) formatLine(o *op) {
	cols, row := o.c.Table.Columns, o.c.After
	if o.plan.versioned() || o.plan.noLoad || o.size > bulkMaxRowLen {
		return
	}
	if cap(s.lineSlab)-len(s.lineSlab) < 1024 || cap(s.lineSlab)-len(s.lineSlab) < o.size*2+32*len(o.cols) {
		// Room for the line wherever it goes: values escaped at worst
		// double, numbers at most 24 bytes and a separator each.
		s.lineSlab = make([]byte, 0, max(lineSlabSize, o.size*2+32*len(o.cols)))
	}
	// One pass: formatted and checked together (loadable then
	// appendLoadLine would read every value twice); a value that cannot
	// go by LOAD DATA takes the line back.
	start, b := len(s.lineSlab), s.lineSlab
	for n, i := range o.cols {
		if i >= len(cols) {
			return
		}
		if n > 0 {
			b = append(b, '\t')
		}
		var ok bool
		if b, ok = appendLoadValue(b, &cols[i], row[i], false); !ok {
			return
		}
	}
	if len(o.cols) == 1 && len(row[o.cols[0]].Bytes()) == 0 && textKind(row[o.cols[0]].Kind()) {
		return // an empty line (loadable)
	}
	s.lineSlab = append(b, '\n')
	o.line = s.lineSlab[start:len(s.lineSlab):len(s.lineSlab)]
}

// textKind reports whether v is written as its bytes (so that it may be
// an empty field: in a one-column run, an empty line, which LOAD DATA
// may not read as an empty string).
func textKind(k change.Kind) bool {
	switch k {
	case change.Int, change.Uint, change.Float32, change.Float64, change.Null:
		return false
	}
	return true
}

// appendLoadValue appends v as a LOAD DATA field (FIELDS TERMINATED BY
// '\t' ESCAPED BY '\\', CHARACTER SET utf8mb4):
//
//	NULL                                \N
//	Int, Uint                           decimal digits (the zero YEAR as 0000: '0' is 2000)
//	BIT                                 its (n+7)/8 bytes, big-endian, as the column stores them
//	Float32, Float64                    the shortest text that reads back as the same double
//	                                    (a FLOAT's exact value, as INSERT binds it)
//	Decimal, temporal, String, Enum,
//	Set, JSON                           the UTF-8 text
//	Bytes, Geometry (SRID+WKB)          the bytes (no conversion: binary columns)
//
// with \, tab, newline and NUL escaped. ok is false for a value that
// goes by INSERT (an ENUM error value, a SET that SetByNumber writes as
// its bitmask, a VECTOR). With check, it only checks (b is not used).
func appendLoadValue(b []byte, col *tablemap.Column, v change.Value, check bool) ([]byte, bool) {
	switch v.Kind() {
	case change.Null:
		if check {
			return b, true
		}
		return append(b, '\\', 'N'), true
	case change.Int:
		if check {
			return b, true
		}
		if col.Type == mysql.MYSQL_TYPE_YEAR && v.Int() == 0 {
			return append(b, "0000"...), true // '0' would be read as 2000
		}
		return strconv.AppendInt(b, v.Int(), 10), true
	case change.Uint:
		if col.Type == mysql.MYSQL_TYPE_BIT {
			n := (col.Bits + 7) / 8
			if n < 1 || n > 8 {
				return b, false
			}
			if check {
				return b, true
			}
			var be [8]byte
			binary.BigEndian.PutUint64(be[:], v.Uint())
			return appendEscaped(b, be[8-n:]), true
		}
		if check {
			return b, true
		}
		return strconv.AppendUint(b, v.Uint(), 10), true
	case change.Float32, change.Float64:
		f := v.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return b, false
		}
		if check {
			return b, true
		}
		return strconv.AppendFloat(b, f, 'g', -1, 64), true
	case change.Enum:
		if v.Uint() == 0 {
			return b, false // the error value (enum.go)
		}
	case change.Set:
		if sqltext.SetByNumber(v) {
			return b, false // its bitmask: LOAD DATA would read a number as a label first
		}
	case change.Decimal, change.Date, change.Datetime, change.Timestamp, change.Time,
		change.String, change.JSON, change.Bytes:
	case change.Geometry:
		if check {
			return b, true
		}
		return appendEscaped(b, sqltext.GeometryBytes(v)), true
	default:
		// VECTOR (no target here to test it on) goes by INSERT; Absent
		// never reaches here: the run's columns leave it out.
		return b, false
	}
	if check {
		return b, true
	}
	return appendEscaped(b, v.Bytes()), true
}

// loadEscape marks the bytes a field escapes, with their escape letter.
var loadEscape = [256]byte{0: '0', '\t': 't', '\n': 'n', '\\': '\\'}

// appendEscaped appends p with \, tab, newline and NUL escaped.
func appendEscaped(b, p []byte) []byte {
	start := 0
	for i, c := range p {
		if e := loadEscape[c]; e != 0 {
			b = append(b, p[start:i]...)
			b = append(b, '\\', e)
			start = i + 1
		}
	}
	return append(b, p[start:]...)
}

// loadStatement writes the LOAD DATA statement for the run's table and
// columns into s.b.SQL.
func (s *Sink) loadStatement(o *op) {
	s.b.Reset()
	s.b.SQL = append(s.b.SQL, "LOAD DATA LOCAL INFILE 'binlogcdc' INTO TABLE "...)
	s.b.SQL = sqltext.AppendTableName(s.b.SQL, o.c.Table.DB, o.c.Table.Name)
	s.b.SQL = append(s.b.SQL, ` CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\t' ENCLOSED BY '' ESCAPED BY '\\' LINES STARTING BY '' TERMINATED BY '\n' (`...)
	for n, i := range o.cols {
		if n > 0 {
			s.b.SQL = append(s.b.SQL, ',')
		}
		s.b.SQL = sqltext.AppendIdent(s.b.SQL, o.c.Table.Columns[i].Name)
	}
	s.b.SQL = append(s.b.SQL, ')')
}

// loadRun inserts the run ops (bulkLen) with LOAD DATA LOCAL, or, when
// the target does not take every row as it is, through the usual INSERTs.
func (s *Sink) loadRun(ops []op, st *Stats) error {
	o := &ops[0]
	if err := s.setForeignKeyChecks(o.fk); err != nil {
		return err
	}
	// The file: 4 bytes for the first packet's header, then the rows.
	data := append(s.load[:0], 0, 0, 0, 0)
	for k := range ops {
		if l := ops[k].line; l != nil {
			data = append(data, l...)
		} else {
			data = appendLoadLine(data, &ops[k])
		}
	}
	s.load = data
	s.loadStatement(o)
	pipe, nq := s.takeQueued(s.pipe[:0]) // queued.go: the checkpoint UPDATE first
	s.pipe = appendPacket(pipe, mysql.COM_QUERY, []byte("SAVEPOINT binlogcdc_pipe"))
	s.pipe = appendPacket(s.pipe, mysql.COM_QUERY, s.b.SQL)
	if _, err := s.conn.Write(s.pipe); err != nil {
		return fmt.Errorf("target: %w", err)
	}
	qErr := s.readQueued(nq)
	_, spErr := s.readResult()
	if qErr != nil {
		data = data[:4] // an empty file: the group fails
	}
	res, err := s.sendLoadFile(data)
	switch {
	case qErr != nil:
		return qErr
	case spErr != nil:
		return fmt.Errorf("target: SAVEPOINT: %w", spErr)
	case err == nil && res.AffectedRows == uint64(len(ops)) && res.Warnings == 0:
		st.table(o.plan.name).Inserted += uint64(len(ops))
		return nil
	case err == nil:
		// Rows skipped or values adjusted: undo, and let INSERT say why.
	case !res.requested && isLoadRefused(err):
		s.bulkOK = false
		s.bulkLines.Store(false)
		s.logf("note: the target refuses LOAD DATA LOCAL INFILE (%s): inserts go as multi-row INSERTs (slower); SET GLOBAL local_infile = 1 on the target to allow it", serverMessage(err))
		return s.execOpsOneByOne(ops, st)
	case !statementRolledBack(err):
		return s.execError(o, err)
	}
	if err := s.plain("ROLLBACK TO SAVEPOINT binlogcdc_pipe"); err != nil {
		return fmt.Errorf("target: %w", err)
	}
	return s.execOpsOneByOne(ops, st)
}

// loadResult is the outcome of a LOAD DATA LOCAL.
type loadResult struct {
	requested    bool // the server asked for the file
	AffectedRows uint64
	Warnings     uint16
}

// isLoadRefused reports whether err is the server (or its settings)
// refusing LOAD DATA LOCAL as such.
func isLoadRefused(err error) bool {
	switch myErrorCode(err) {
	case erNotAllowedCommand, erClientLocalFilesDisabled, erLoadInfileCapabilityDisabled:
		return true
	}
	return false
}

// sendLoadFile reads the reply to a LOAD DATA LOCAL sent as the second
// command of a write: when it is the request for the file, sends data[4:]
// (data[:4] is room for a packet header) in packets and the empty packet
// that ends it, and reads the result.
func (s *Sink) sendLoadFile(data []byte) (loadResult, error) {
	var res loadResult
	s.conn.Sequence = 1
	reply, err := s.conn.ReadPacket()
	if err != nil {
		return res, err
	}
	switch {
	case len(reply) > 0 && reply[0] == mysql.ERR_HEADER:
		return res, s.conn.HandleErrorPacket(reply)
	case len(reply) == 0 || reply[0] != mysql.LocalInFile_HEADER:
		return res, fmt.Errorf("%w: unexpected reply to LOAD DATA LOCAL INFILE", mysql.ErrMalformPacket)
	}
	res.requested = true
	chunk := bulkChunk
	if s.maxAllowedPacket > 0 {
		chunk = max(4096, min(chunk, s.maxAllowedPacket/2))
	}
	// Each packet's header overwrites the last 4 bytes of the one before,
	// already sent: no copy.
	for off := 4; off < len(data); off += chunk {
		end := min(off+chunk, len(data))
		if err := s.conn.WritePacket(data[off-4 : end]); err != nil {
			return res, err
		}
	}
	var empty [4]byte
	if err := s.conn.WritePacket(empty[:]); err != nil {
		return res, err
	}
	reply, err = s.conn.ReadPacket()
	if err != nil {
		return res, err
	}
	switch {
	case len(reply) > 0 && reply[0] == mysql.OK_HEADER:
		r := s.conn.HandleOKPacket(reply)
		res.AffectedRows, res.Warnings = r.AffectedRows, r.Warnings
		return res, nil
	case len(reply) > 0 && reply[0] == mysql.ERR_HEADER:
		return res, s.conn.HandleErrorPacket(reply)
	}
	return res, fmt.Errorf("%w: unexpected reply after the LOAD DATA LOCAL INFILE data", mysql.ErrMalformPacket)
}
