package mysqlsink

import (
	"container/list"
	"fmt"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
)

// stmtCacheSize bounds the prepared statements kept open on the target
// (the server's max_prepared_stmt_count is 16382 for all sessions).
const stmtCacheSize = 256

// stmtCache keeps prepared statements by their SQL text, least recently
// used first out.
type stmtCache struct {
	m   map[string]*list.Element
	lru list.List // of *cachedStmt, most recent at the front
}

type cachedStmt struct {
	sql  string
	stmt *client.Stmt
}

func (c *stmtCache) get(conn *client.Conn, sql []byte) (*client.Stmt, error) {
	if e, ok := c.m[string(sql)]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*cachedStmt).stmt, nil
	}
	st, err := conn.Prepare(string(sql))
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = map[string]*list.Element{}
	}
	cs := &cachedStmt{sql: string(sql), stmt: st}
	c.m[cs.sql] = c.lru.PushFront(cs)
	if c.lru.Len() > stmtCacheSize {
		old := c.lru.Back()
		c.lru.Remove(old)
		oc := old.Value.(*cachedStmt)
		delete(c.m, oc.sql)
		oc.stmt.Close()
	}
	return st, nil
}

// has reports whether sql is prepared already (get needs no round trip).
func (c *stmtCache) has(sql []byte) bool {
	_, ok := c.m[string(sql)]
	return ok
}

// clear closes every cached statement.
func (c *stmtCache) clear() {
	for e := c.lru.Front(); e != nil; e = e.Next() {
		e.Value.(*cachedStmt).stmt.Close()
	}
	c.lru.Init()
	c.m = nil
}

// bindValue converts a value to what the prepared statement binds:
//
//	Int                              int64
//	Uint (and BIT)                   uint64
//	Float32, Float64                 float64 (a FLOAT widened exactly, so the column stores the same float)
//	Decimal, temporal, String,
//	Enum, Set (joined labels), JSON  string (in the session's utf8mb4)
//	Set losing a member ''           uint64, its bitmask (sqltext.SetByNumber)
//	Bytes, Vector                    BLOB-typed bytes (binary: never converted or checked as text)
//	Geometry                         BLOB-typed SRID + WKB, MySQL's internal format
//	Null                             nil
//
// Absent values never reach it: statements leave those columns out.
func bindValue(v change.Value) (any, error) {
	switch v.Kind() {
	case change.Null:
		return nil, nil
	case change.Int:
		return v.Int(), nil
	case change.Uint:
		return v.Uint(), nil
	case change.Float32, change.Float64:
		return v.Float(), nil
	case change.Enum:
		if v.Uint() == 0 {
			return uint64(0), nil // the error value: index 0 (see enum.go)
		}
		return string(v.Bytes()), nil
	case change.Set:
		if sqltext.SetByNumber(v) {
			return v.Uint(), nil // its bitmask: its text would lose a member ''
		}
		return string(v.Bytes()), nil
	case change.Decimal, change.Date, change.Datetime, change.Timestamp, change.Time,
		change.String, change.JSON:
		return string(v.Bytes()), nil
	case change.Bytes, change.Vector:
		b := v.Bytes()
		if b == nil {
			b = []byte{}
		}
		return mysql.TypedBytes{Type: mysql.MYSQL_TYPE_BLOB, Bytes: b}, nil
	case change.Geometry:
		return mysql.TypedBytes{Type: mysql.MYSQL_TYPE_BLOB, Bytes: sqltext.GeometryBytes(v)}, nil
	}
	return nil, fmt.Errorf("cannot bind a %s value", v.Kind())
}

// exec runs the builder's statement as a prepared statement and returns
// the number of matched rows.
func (s *Sink) exec(b *sqltext.Builder) (uint64, error) {
	if err := s.sendQueued(); err != nil { // queued.go
		return 0, err
	}
	st, err := s.stmts.get(s.conn, b.SQL)
	if err != nil {
		return 0, err
	}
	if argBytes(b.Args) >= largeStatement && s.conn.Compression == mysql.MYSQL_COMPRESS_NONE {
		return s.execStreamed(st, b.Args) // large.go
	}
	s.args = s.args[:0]
	for _, v := range b.Args {
		a, err := bindValue(v)
		if err != nil {
			return 0, err
		}
		s.args = append(s.args, a)
	}
	r, err := st.Execute(s.args...)
	if err != nil {
		return 0, err
	}
	n := r.AffectedRows
	s.warnings = r.Warnings
	r.Close()
	return n, nil
}

// execPrepared runs sql with plain Go arguments through the cache.
func (s *Sink) execPrepared(sql string, args ...any) error {
	_, err := s.execPreparedCount(sql, args...)
	return err
}

// execPreparedCount is execPrepared; it returns the number of rows
// matched.
func (s *Sink) execPreparedCount(sql string, args ...any) (uint64, error) {
	if err := s.sendQueued(); err != nil { // queued.go
		return 0, err
	}
	st, err := s.stmts.get(s.conn, []byte(sql))
	if err != nil {
		return 0, err
	}
	r, err := st.Execute(args...)
	if err != nil {
		return 0, err
	}
	n := r.AffectedRows
	r.Close()
	return n, nil
}

// query runs a statement outside the cache.
func (s *Sink) plain(sql string) error {
	if err := s.sendQueued(); err != nil { // queued.go
		return err
	}
	r, err := s.conn.Execute(sql)
	if err != nil {
		return err
	}
	r.Close()
	return nil
}
