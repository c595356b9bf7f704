package testserver

// Sessions: statements and queries on a running server.

import (
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// Conn opens a new root session (no default database, utf8mb4). It is
// closed at the end of the test; closing it earlier is fine.
func (s *Server) Conn(tb testing.TB) *client.Conn {
	tb.Helper()
	c, err := connect(s.Addr(), 0)
	if err != nil {
		tb.Fatalf("testserver: connecting to %s: %v", s.Addr(), err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// session runs f on the shared session, opening it if needed.
func (s *Server) session(tb testing.TB, f func(c *client.Conn) error) {
	tb.Helper()
	s.mu.Lock()
	gen := s.gen
	s.mu.Unlock()

	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.conn != nil && s.connGen != gen {
		s.conn.Close()
		s.conn = nil
	}
	if s.conn == nil {
		c, err := connect(s.Addr(), 0)
		if err != nil {
			tb.Fatalf("testserver: connecting to %s: %v", s.Addr(), err)
		}
		s.conn, s.connGen = c, gen
	}
	if err := f(s.conn); err != nil {
		var me *mysql.MyError
		if !errors.As(err, &me) {
			// Not an SQL error: the session is probably broken.
			s.conn.Close()
			s.conn = nil
		}
		tb.Fatal(err)
	}
}

// Exec runs each statement (one statement per string) and fails the test
// on the first error. Exec and Query share one session per Server, so
// session state (USE db, SET @v, SET SESSION ...) carries over between
// calls until the server is stopped, killed or restarted; use Conn for a
// session of your own.
func (s *Server) Exec(tb testing.TB, sql ...string) {
	tb.Helper()
	s.session(tb, func(c *client.Conn) error {
		for _, q := range sql {
			r, err := c.Execute(q)
			if err != nil {
				return fmt.Errorf("testserver: exec %q: %w", q, err)
			}
			r.Close()
		}
		return nil
	})
}

// Query runs one statement on the shared session (see Exec) and returns its
// rows. Values are, by column type in the text protocol:
//
//   - NULL: nil
//   - TINYINT, SMALLINT, MEDIUMINT, INT, BIGINT, YEAR: int64, or uint64
//     when UNSIGNED
//   - FLOAT, DOUBLE: float64
//   - everything else (DECIMAL, CHAR/VARCHAR/TEXT, BINARY/BLOB, dates and
//     times, BIT, ENUM/SET, JSON): string, the bytes as the server sent them
//     (converted to the session's utf8mb4 for text columns)
//
// A statement without a result set returns nil.
func (s *Server) Query(tb testing.TB, sql string) [][]any {
	tb.Helper()
	var rows [][]any
	s.session(tb, func(c *client.Conn) error {
		r, err := c.Execute(sql)
		if err != nil {
			return fmt.Errorf("testserver: query %q: %w", sql, err)
		}
		defer r.Close()
		if !r.HasResultset() {
			return nil
		}
		rows = make([][]any, 0, len(r.Values))
		for _, vals := range r.Values {
			row := make([]any, len(vals))
			for i := range vals {
				switch vals[i].Type {
				case mysql.FieldValueTypeNull:
				case mysql.FieldValueTypeString:
					row[i] = string(vals[i].AsString()) // copies: the result is pooled
				default:
					row[i] = vals[i].Value()
				}
			}
			rows = append(rows, row)
		}
		return nil
	})
	return rows
}

// QueryStrings runs one statement on the shared session (see Exec) and
// returns every value exactly as the server's text protocol sent it; nil is
// NULL. To compare binary or float values exactly, let the SELECT
// HEX(...) or CAST(...) them.
func (s *Server) QueryStrings(tb testing.TB, sql string) [][]*string {
	tb.Helper()
	var rows [][]*string
	s.session(tb, func(c *client.Conn) error {
		r, err := c.Execute(sql)
		if err != nil {
			return fmt.Errorf("testserver: query %q: %w", sql, err)
		}
		defer r.Close()
		if !r.HasResultset() {
			return nil
		}
		rows = make([][]*string, 0, len(r.RowDatas))
		for _, raw := range r.RowDatas {
			row := make([]*string, len(r.Fields))
			pos := 0
			for i := range row {
				v, isNull, n, err := mysql.LengthEncodedString(raw[pos:])
				if err != nil {
					return fmt.Errorf("testserver: query %q: decoding row: %w", sql, err)
				}
				pos += n
				if !isNull {
					str := string(v)
					row[i] = &str
				}
			}
			rows = append(rows, row)
		}
		return nil
	})
	return rows
}

// FlushLogs closes the current binlog and starts the next one
// (FLUSH BINARY LOGS).
func (s *Server) FlushLogs(tb testing.TB) {
	tb.Helper()
	s.Exec(tb, "FLUSH BINARY LOGS")
}

// BinlogFiles returns the absolute paths of the binlog files, oldest first,
// as SHOW BINARY LOGS lists them.
func (s *Server) BinlogFiles(tb testing.TB) []string {
	tb.Helper()
	var files []string
	for _, row := range s.QueryStrings(tb, "SHOW BINARY LOGS") {
		if row[0] == nil {
			tb.Fatal("testserver: SHOW BINARY LOGS returned a NULL name")
		}
		files = append(files, filepath.Join(s.Dir, *row[0]))
	}
	return files
}
