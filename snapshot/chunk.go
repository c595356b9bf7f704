package snapshot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// ChunkReader reads tables chunk by chunk while a stream runs (an
// incremental snapshot): each chunk in its own short consistent snapshot
// (MariaDB: START TRANSACTION WITH CONSISTENT SNAPSHOT and the exact
// binlog position binlog_snapshot_file/position give for it), the next
// primary-key range after the last one read (keyset pagination). MySQL
// gives no exact position for a snapshot, so it is refused there.
type ChunkReader struct {
	// Dial opens a connection to the source; the reader keeps it and
	// dials again after it failed.
	Dial    func(ctx context.Context) (*client.Conn, error)
	Flavor  string // "mariadb" or "mysql"
	conn    *client.Conn
	cv      converter
	keyConv converter
	// schemas caches each table's schema with its SHOW CREATE TABLE,
	// which each chunk reads again: a table changed since is loaded anew.
	schemas map[[2]string]cachedSchema
}

type cachedSchema struct {
	create string
	ts     *tableSchema
}

// ChunkRequest says which chunk to read.
type ChunkRequest struct {
	DB, Table string
	// After is the key of the last row of the chunk before (in primary
	// key order); nil: from the first row.
	After change.Row
	// Rows bounds the rows of the chunk (default 1000). A table whose
	// key order the client cannot reproduce exactly (see chunkable) is
	// read whole, in one chunk.
	Rows int
}

// Chunk is a chunk read.
type Chunk struct {
	Table *tablemap.Table // the table's schema at Pos
	Pos   Position        // the snapshot the chunk was read in
	// Whole: the chunk is the whole table (read in one snapshot), for
	// the reason Why (see wholeReason).
	Whole bool
	Why   string
	// Lo is the request's After (nil: from the start); Hi the key of the
	// chunk's last row (nil: the chunk reaches the end of the table).
	Lo, Hi change.Row
	Rows   int
	Bytes  int64
}

// Close closes the connection.
func (r *ChunkReader) Close() {
	if r.conn != nil {
		r.conn.Close()
		r.conn = nil
	}
}

// ErrNoExactPosition is the error for a server that gives no exact
// position for a consistent snapshot.
var ErrNoExactPosition = errors.New("an incremental snapshot needs the exact binlog position of each chunk's consistent snapshot, which only MariaDB gives (binlog_snapshot_file/binlog_snapshot_position); MySQL is not supported")

// Read reads one chunk: begin is called once its table, position and
// range are known, then row for each row in key order (the row is only
// valid during the call). A failure of the connection is retried once on
// a new one (before begin was called).
func (r *ChunkReader) Read(ctx context.Context, req ChunkRequest, begin func(*Chunk) error, row func(change.Row) error) (*Chunk, error) {
	if r.Flavor != "mariadb" {
		return nil, ErrNoExactPosition
	}
	if req.Rows <= 0 {
		req.Rows = 1000
	}
	for try := 0; ; try++ {
		if r.conn == nil {
			c, err := r.Dial(ctx)
			if err != nil {
				return nil, err
			}
			if err := setupSession(c, true); err != nil {
				c.Close()
				return nil, fmt.Errorf("incremental snapshot: %w", err)
			}
			r.conn = c
		}
		began := false
		ch, err := r.read(ctx, req, func(c *Chunk) error { began = true; return begin(c) }, row)
		if err == nil {
			return ch, nil
		}
		var me *mysql.MyError
		server := errors.As(err, &me)
		if !server || r.conn == nil {
			r.Close() // the connection's state is unknown
		} else {
			r.conn.Execute("ROLLBACK")
		}
		if began || server || try > 0 || ctx.Err() != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
	}
}

func (r *ChunkReader) read(ctx context.Context, req ChunkRequest, begin func(*Chunk) error, row func(change.Row) error) (*Chunk, error) {
	c := r.conn
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	qname := tablemap.QuoteIdent(req.DB) + "." + tablemap.QuoteIdent(req.Table)
	if req.After == nil {
		if err := checkEngine(c, req.DB, req.Table); err != nil {
			return nil, err
		}
	}
	if _, err := c.Execute("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"); err != nil {
		return nil, err
	}
	var pos Position
	if err := snapshotPos(c, &pos); err != nil {
		return nil, err
	}
	ch, ts, where, err := r.bound(c, req)
	if err != nil {
		return nil, err
	}
	t := ts.table
	ch.Pos = pos
	if err := begin(ch); err != nil {
		return nil, err
	}
	var q strings.Builder
	q.WriteString("SELECT ")
	for i, col := range ts.cols {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString(col.expr)
	}
	q.WriteString(" FROM " + qname + whereSQL(where))
	if !ch.Whole {
		q.WriteString(orderSQL(t))
	}
	err = selectText(c, q.String(), len(ts.cols), func(fields []textCell) error {
		for i := range fields {
			if textBytes(ts.cols[i].kind) {
				ch.Bytes += int64(len(fields[i].b))
			}
			ch.Bytes += 8
		}
		v, err := r.cv.convert(ts, fields)
		if err != nil {
			return fmt.Errorf("%s row %d: %w", qname, ch.Rows, err)
		}
		ch.Rows++
		return row(v)
	})
	if err != nil {
		return nil, fmt.Errorf("incremental snapshot: reading %s: %w", qname, err)
	}
	if _, err := c.Execute("COMMIT"); err != nil {
		return nil, err
	}
	return ch, nil
}

// Bound finds the chunk req asks for without reading its rows: its
// table's schema, whether it is read whole, and its key range (Lo, Hi),
// read on the source as it is now, in no snapshot. Key ranges found one
// after the other (each After the last one's Hi) cover every key
// whatever the rows at the time: live verification compares a table
// chunk by chunk (see Chunk.Cond), each in its own snapshot.
func (r *ChunkReader) Bound(ctx context.Context, req ChunkRequest) (*Chunk, error) {
	if req.Rows <= 0 {
		req.Rows = 1000
	}
	if r.conn == nil {
		c, err := r.Dial(ctx)
		if err != nil {
			return nil, err
		}
		if err := setupSession(c, true); err != nil {
			c.Close()
			return nil, fmt.Errorf("chunk bounds: %w", err)
		}
		r.conn = c
	}
	c := r.conn
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	ch, _, _, err := r.bound(c, req)
	if err != nil {
		var me *mysql.MyError
		if !errors.As(err, &me) {
			r.Close() // the connection's state is unknown
		}
		return nil, err
	}
	return ch, nil
}

// KeyChangedError is the error of a chunk after others when the table's
// primary key changed since (an ALTER TABLE).
type KeyChangedError struct{ msg string }

func (e *KeyChangedError) Error() string { return e.msg }

// Cond is the SQL condition that selects the chunk's rows by key
// (Lo < key <= Hi, either bound left out when nil); "" for a whole table
// or a single chunk that holds all of it.
func (ch *Chunk) Cond() (string, error) {
	if ch.Whole {
		return "", nil
	}
	var where []string
	if ch.Lo != nil {
		cond, err := keyCond(ch.Table, ch.Lo, ">", false)
		if err != nil {
			return "", err
		}
		where = append(where, cond)
	}
	if ch.Hi != nil {
		cond, err := keyCond(ch.Table, ch.Hi, "<", true)
		if err != nil {
			return "", err
		}
		where = append(where, cond)
	}
	for i, w := range where {
		if strings.Contains(w, " OR ") {
			where[i] = "(" + w + ")"
		}
	}
	return strings.Join(where, " AND "), nil
}

// bound reads the table's schema and the key range of the chunk req asks
// for, and returns the chunk (without its position) and the conditions
// that select its rows.
func (r *ChunkReader) bound(c *client.Conn, req ChunkRequest) (*Chunk, *tableSchema, []string, error) {
	qname := tablemap.QuoteIdent(req.DB) + "." + tablemap.QuoteIdent(req.Table)
	ts, err := r.schema(c, req.DB, req.Table)
	if err != nil {
		return nil, nil, nil, err
	}
	t := ts.table
	ch := &Chunk{Table: t, Lo: req.After}
	ch.Why = wholeReason(ts)
	ch.Whole = ch.Why != ""
	if ch.Whole && req.After != nil {
		return nil, nil, nil, &KeyChangedError{fmt.Sprintf("incremental snapshot: %s cannot be read in key ranges any more (its primary key changed)", qname)}
	}
	if !ch.Whole && len(req.After) != len(t.PrimaryKey) {
		if req.After != nil {
			return nil, nil, nil, &KeyChangedError{fmt.Sprintf("incremental snapshot: %s: its primary key changed since the last chunk", qname)}
		}
	}
	var where []string
	if ch.Whole {
		return ch, ts, where, nil
	}
	if req.After != nil {
		cond, err := keyCond(t, req.After, ">", false)
		if err != nil {
			return nil, nil, nil, err
		}
		where = append(where, cond)
	}
	// The chunk's last key: the Rows-th key after After.
	var sel []string
	for _, k := range t.PrimaryKey {
		sel = append(sel, ts.cols[k].expr)
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + qname + whereSQL(where) + orderSQL(t) + " LIMIT 1 OFFSET " + strconv.Itoa(req.Rows-1)
	var keyErr error
	err = selectText(c, q, len(sel), func(cells []textCell) error {
		r.keyConv.dec.Reset()
		r.keyConv.cell = r.keyConv.cell[:0]
		for i, k := range t.PrimaryKey {
			var v change.Value
			if err := r.keyConv.value(&v, &t.Columns[k], ts.cols[k].kind, &cells[i]); err != nil {
				keyErr = fmt.Errorf("incremental snapshot: %s key: %w", qname, err)
				return keyErr
			}
			ch.Hi = append(ch.Hi, v.Clone())
		}
		return nil
	})
	if keyErr != nil {
		return nil, nil, nil, keyErr
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("incremental snapshot: reading %s: %w", qname, err)
	}
	if ch.Hi != nil {
		cond, err := keyCond(t, ch.Hi, "<", true)
		if err != nil {
			return nil, nil, nil, err
		}
		where = append(where, cond)
	}
	return ch, ts, where, nil
}

// textBytes: the column's text counts in Chunk.Bytes (numbers, as
// go-mysql parsed them before selectText, counted 8 bytes each).
func textBytes(k readKind) bool {
	return k != readInt && k != readFloat && k != readDouble && k != readIndex && k != readEnumLabel
}

// snapshotPos reads the open snapshot's position, GTID position and time
// (MariaDB), in one round trip.
func snapshotPos(c *client.Conn, p *Position) error {
	r, err := c.Execute(`SELECT f, o, BINLOG_GTID_POS(f, o), UNIX_TIMESTAMP() FROM (SELECT
  MAX(IF(VARIABLE_NAME = 'BINLOG_SNAPSHOT_FILE', VARIABLE_VALUE, NULL)) AS f,
  MAX(IF(VARIABLE_NAME = 'BINLOG_SNAPSHOT_POSITION', VARIABLE_VALUE, NULL)) AS o
  FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME IN ('BINLOG_SNAPSHOT_FILE', 'BINLOG_SNAPSHOT_POSITION')) s`)
	if err != nil {
		return err
	}
	f, _ := r.GetString(0, 0)
	off, _ := strconv.ParseUint(mustString(r.GetString(0, 1)), 10, 64)
	p.File, p.Offset = baseName(f), off
	p.GTID, _ = r.GetString(0, 2)
	if sec, err := r.GetInt(0, 3); err == nil {
		p.Time = time.Unix(sec, 0).UTC()
	}
	if p.File == "" || p.Offset < 4 {
		return errors.New("the server gives no binlog_snapshot_file/binlog_snapshot_position: is log_bin on?")
	}
	return nil
}

func mustString(s string, _ error) string { return s }

// schema returns the table's schema: the cached one while its SHOW CREATE
// TABLE is the same, else loaded anew.
func (r *ChunkReader) schema(c *client.Conn, db, name string) (*tableSchema, error) {
	qname := tablemap.QuoteIdent(db) + "." + tablemap.QuoteIdent(name)
	res, err := c.Execute("SHOW CREATE TABLE " + qname)
	if err != nil {
		return nil, err
	}
	create, _ := res.GetString(0, 1)
	k := [2]string{db, name}
	if cs, ok := r.schemas[k]; ok && cs.create == create {
		return cs.ts, nil
	}
	ts, err := loadSchema(c, db, name, true)
	if err != nil {
		return nil, err
	}
	if r.schemas == nil || len(r.schemas) > 64 {
		r.schemas = map[[2]string]cachedSchema{}
	}
	r.schemas[k] = cachedSchema{create: create, ts: ts}
	return ts, nil
}

// checkEngine refuses what a consistent snapshot cannot read exactly.
func checkEngine(c *client.Conn, db, name string) error {
	if _, err := c.Execute("SET SESSION character_set_results = utf8mb4"); err != nil {
		return err
	}
	r, err := c.Execute("SELECT TABLE_TYPE, IFNULL(ENGINE,'') FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", db, name)
	if err != nil {
		return err
	}
	q := tablemap.QuoteIdent(db) + "." + tablemap.QuoteIdent(name)
	if len(r.Values) == 0 {
		return &requestError{fmt.Sprintf("incremental snapshot: no table %s on the source", q)}
	}
	typ, _ := r.GetString(0, 0)
	engine, _ := r.GetString(0, 1)
	if typ != "BASE TABLE" {
		return &requestError{fmt.Sprintf("incremental snapshot: %s is a %s, not a base table", q, strings.ToLower(typ))}
	}
	if !strings.EqualFold(engine, "InnoDB") {
		return &requestError{fmt.Sprintf("incremental snapshot: %s is not transactional (%s): a consistent snapshot cannot read it exactly", q, engine)}
	}
	// Values are read as stored, unconverted.
	_, err = c.Execute("SET SESSION character_set_results = NULL")
	return err
}

// requestError is a table an incremental snapshot cannot copy.
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

func whereSQL(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE (" + strings.Join(conds, ") AND (") + ")"
}

func orderSQL(t *tablemap.Table) string {
	var b strings.Builder
	b.WriteString(" ORDER BY ")
	for i, k := range t.PrimaryKey {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tablemap.QuoteIdent(t.Columns[k].Name))
	}
	return b.String()
}

// keyCond is the condition "key op vals" on the primary key in key order
// (op "<" or ">", orEqual adding "="), spelled out column by column:
// (a > 1) OR (a = 1 AND b > 2).
func keyCond(t *tablemap.Table, vals change.Row, op string, orEqual bool) (string, error) {
	return sqltext.KeyRange(t, vals, op, orEqual)
}
