package jsonl

import (
	"encoding/base64"
	"strconv"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/jsontext"
)

// Large values. A line is normally built whole in the transaction's
// buffer (pending) before it spills; with a 200 MB BLOB that is 267 MB of
// base64 on top of the row the decoder holds. A change with a value of
// largeValue bytes or more is instead encoded a piece at a time, each
// piece going on to the spill file as it is made, so the line costs a
// constant beyond the row. The bytes are exactly appendChange's
// (TestLargeLineSameBytes).
const largeValue = 1 << 20

// largePiece is how much of a large value is encoded at a time: a
// multiple of 3, so that the base64 of the pieces joins into the base64
// of the whole.
const largePiece = 3 << 16

// hasLarge reports whether a row holds a value of largeValue bytes or
// more.
func hasLarge(r change.Row) bool {
	for i := range r {
		if _, _, b := r[i].Parts(); len(b) >= largeValue {
			return true
		}
	}
	return false
}

// writeLarge appends c's line, as appendChange would, spilling as it goes.
func (s *Sink) writeLarge(c *change.Change) error {
	// The line's head and tail (op, table, ts, pos, gtid) are
	// appendChange's for the change without rows: its head ends with the
	// table's keys, and its rows come right after them.
	bare := *c
	bare.Before, bare.After = nil, nil
	k := s.enc.tableKeys(c.Table)
	line := s.enc.appendChange(s.large[:0], &bare)
	s.large = line
	head := len(`{"op":"`) + len(c.Op.String()) + len(`",`) + len(k.head)
	s.pending = append(s.pending, line[:head]...)
	if c.Before != nil {
		s.pending = append(s.pending, `,"before":`...)
		if err := s.appendLargeRow(k, c.Before); err != nil {
			return err
		}
	}
	if c.After != nil {
		s.pending = append(s.pending, `,"after":`...)
		if err := s.appendLargeRow(k, c.After); err != nil {
			return err
		}
	}
	s.pending = append(s.pending, line[head:]...)
	return nil
}

// appendLargeRow is appendRow, with large values in pieces.
func (s *Sink) appendLargeRow(k *tableKeys, row change.Row) error {
	s.pending = append(s.pending, '{')
	first := true
	for i := range row {
		v := &row[i]
		if v.IsAbsent() {
			continue
		}
		if !first {
			s.pending = append(s.pending, ',')
		}
		first = false
		s.pending = append(s.pending, k.cols[i]...)
		if len(v.Bytes()) < largeValue {
			s.pending = appendValue(s.pending, v)
			continue
		}
		if err := s.appendLargeValue(*v); err != nil {
			return err
		}
	}
	s.pending = append(s.pending, '}')
	return nil
}

// appendLargeValue is appendValue a piece at a time, for the kinds whose
// values can be large.
func (s *Sink) appendLargeValue(v change.Value) error {
	b := v.Bytes()
	if coll, ok := v.UncheckedUTF8(); ok {
		b = validText(b, coll) // the pieces are escaped as checked text
	}
	switch v.Kind() {
	case change.Bytes:
		return s.base64Pieces(b)
	case change.Geometry:
		s.pending = append(s.pending, `{"srid":`...)
		s.pending = strconv.AppendUint(s.pending, v.Uint(), 10)
		s.pending = append(s.pending, `,"wkb":`...)
		if err := s.base64Pieces(b); err != nil {
			return err
		}
		s.pending = append(s.pending, '}')
		return nil
	case change.Decimal, change.Date, change.Datetime, change.Timestamp, change.Time, change.String:
		s.pending = append(s.pending, '"')
		for len(b) > 0 {
			n := stringCut(b, largePiece)
			m := len(s.pending)
			s.pending = jsontext.AppendString(s.pending, b[:n])
			// Without the quotes AppendString puts around each piece.
			s.pending = append(s.pending[:m], s.pending[m+1:len(s.pending)-1]...)
			b = b[n:]
			if err := s.spillPiece(); err != nil {
				return err
			}
		}
		s.pending = append(s.pending, '"')
		return nil
	case change.JSON:
		for len(b) > 0 {
			n := min(len(b), largePiece)
			s.pending = append(s.pending, b[:n]...)
			b = b[n:]
			if err := s.spillPiece(); err != nil {
				return err
			}
		}
		return nil
	}
	s.pending = appendValue(s.pending, &v)
	return nil
}

// base64Pieces appends b as a JSON string of its base64.
func (s *Sink) base64Pieces(b []byte) error {
	s.pending = append(s.pending, '"')
	for len(b) > 0 {
		n := min(len(b), largePiece)
		s.pending = base64.StdEncoding.AppendEncode(s.pending, b[:n])
		b = b[n:]
		if err := s.spillPiece(); err != nil {
			return err
		}
	}
	s.pending = append(s.pending, '"')
	return nil
}

// spillPiece moves the pending bytes to the spill file once they are
// more than a piece.
func (s *Sink) spillPiece() error {
	if len(s.pending)-s.committed < largePiece {
		return nil
	}
	return s.spillPending()
}

// stringCut returns where to cut s for a piece of at most max bytes (all
// of s when it is shorter): before a byte that starts a UTF-8 sequence,
// so that each piece escapes as its part of the whole would.
func stringCut(s []byte, max int) int {
	if len(s) <= max {
		return len(s)
	}
	n := max
	// A sequence is at most 4 bytes: its lead byte is among the 3 before
	// a continuation byte, or the cut does not split one.
	for i := 0; i < 3 && s[n]&0xc0 == 0x80; i++ {
		n--
	}
	return n
}

// spillRecord takes the lines so far and the part of a record a Format
// has written (sink/envelope: a large value in pieces) and spills them
// once they are more than a piece, as writeLarge does.
func (s *Sink) spillRecord(b []byte) ([]byte, error) {
	s.pending = b
	err := s.spillPiece()
	return s.pending, err
}
