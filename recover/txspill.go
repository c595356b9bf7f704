package recovery

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/bigbuf"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// A source transaction's changes count only once it commits, so the
// replayer (apply.go) holds them until then. A small transaction's stay
// in memory; past txSpillBytes (or Options.MemoryBudget, if smaller) of
// them, a transaction's changes go to a spill file instead, as they come,
// and are read back one at a time at its commit: so memory is bounded
// whatever the transaction's size (an INSERT … SELECT of millions of
// rows), and a transaction that never commits (cut off by a crash, then
// rolled back) leaves nothing in the rebuilt table. Large values are
// written from where they lie, without a copy in memory.
//
// The file is created in Options.TempDir (the system's temporary
// directory for "") when first needed, and removed at once: nothing is
// left behind if recover is killed. It is emptied at each commit and
// rollback.
var txSpillBytes int64 = 8 << 20 // a variable for the tests

// txSpill is the spill file of one transaction's changes. A record is
// its length (uvarint) and then:
//
//	op, flags (txBefore, txAfter, txMicro, txZeroTime)
//	table, file of Pos, Pos.Offset, RowIndex, file of CommitPos,
//	CommitPos.Offset, Time (seconds, nanoseconds), ServerID, Flags, GTID
//	(uvarints; table, files and GTID as indexes into the transaction's
//	lists of them)
//	Before, After (if set): per row its length, per value its kind,
//	number, length and bytes
type txSpill struct {
	dir string
	f   *os.File
	w   *bufio.Writer
	r   *bufio.Reader
	n   int // records written since the last reset

	tables []*tablemap.Table
	names  []string // files of positions, and GTIDs
	buf    []byte
	large  [][]byte // the large values of the record being written

	block []byte         // read-back records are cut from blocks, never reused
	vals  []change.Value // so are their rows
}

const (
	txBefore = 1 << iota
	txAfter
	txMicro
	txZeroTime
)

// txBlock is the size of the blocks read-back records are cut from.
const txBlock = 256 << 10

// changeSize estimates the memory a held change takes.
func changeSize(c *change.Change) int64 {
	n := int64(200)
	for _, row := range [2]change.Row{c.Before, c.After} {
		for i := range row { // indexed: ranging over the values copies each
			n += valueSize + int64(len(row[i].Bytes()))
		}
	}
	return n
}

func (s *txSpill) open() error {
	f, err := os.CreateTemp(s.dir, "binlogcdc-recover-tx-")
	if err != nil {
		return fmt.Errorf("recover: a transaction's changes outgrew memory and their spill file could not be created: %w (set TMPDIR to a directory with room)", err)
	}
	os.Remove(f.Name()) // it lives while open
	s.f = f
	s.w = bufio.NewWriterSize(f, 1<<20)
	s.r = bufio.NewReaderSize(f, 1<<20)
	return nil
}

func (s *txSpill) table(t *tablemap.Table) int {
	for i := len(s.tables) - 1; i >= 0; i-- {
		if s.tables[i] == t {
			return i
		}
	}
	s.tables = append(s.tables, t)
	return len(s.tables) - 1
}

func (s *txSpill) name(n string) int {
	for i := len(s.names) - 1; i >= 0; i-- {
		if s.names[i] == n {
			return i
		}
	}
	s.names = append(s.names, n)
	return len(s.names) - 1
}

// add appends c to the file. Its values are copied there: they may point
// into the decoder's buffers.
func (s *txSpill) add(c *change.Change) error {
	if s.f == nil {
		if err := s.open(); err != nil {
			return err
		}
	}
	var flags byte
	if c.Before != nil {
		flags |= txBefore
	}
	if c.After != nil {
		flags |= txAfter
	}
	if c.TimeMicro {
		flags |= txMicro
	}
	if c.Time.IsZero() {
		flags |= txZeroTime
	}
	b := append(s.buf[:0], byte(c.Op), flags)
	b = binary.AppendUvarint(b, uint64(s.table(c.Table)))
	b = binary.AppendUvarint(b, uint64(s.name(c.Pos.File)))
	b = binary.AppendUvarint(b, c.Pos.Offset)
	b = binary.AppendUvarint(b, uint64(c.RowIndex))
	b = binary.AppendUvarint(b, uint64(s.name(c.CommitPos.File)))
	b = binary.AppendUvarint(b, c.CommitPos.Offset)
	if !c.Time.IsZero() {
		b = binary.AppendVarint(b, c.Time.Unix())
		b = binary.AppendUvarint(b, uint64(c.Time.Nanosecond()))
	}
	b = binary.AppendUvarint(b, uint64(c.ServerID))
	b = binary.AppendUvarint(b, uint64(c.Flags))
	b = binary.AppendUvarint(b, uint64(s.name(c.GTID)))
	// A large value's bytes are written from where they lie, after the
	// rows (in order), rather than copied into the record.
	s.large = s.large[:0]
	total := 0
	for _, row := range [2]change.Row{c.Before, c.After} {
		if row == nil {
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(row)))
		for _, v := range row {
			b = append(b, byte(v.Kind()))
			b = binary.AppendUvarint(b, v.Uint())
			b = binary.AppendUvarint(b, uint64(len(v.Bytes())))
			if len(v.Bytes()) >= largeValue {
				s.large = append(s.large, v.Bytes())
				total += len(v.Bytes())
				continue
			}
			b = append(b, v.Bytes()...)
		}
	}
	s.buf = b
	var hdr [binary.MaxVarintLen64]byte
	h := binary.AppendUvarint(hdr[:0], uint64(len(b)+total))
	if _, err := s.w.Write(h); err != nil {
		return s.writeErr(err)
	}
	if _, err := s.w.Write(b); err != nil {
		return s.writeErr(err)
	}
	for _, l := range s.large {
		if _, err := s.w.Write(l); err != nil {
			return s.writeErr(err)
		}
	}
	clear(s.large) // they lie in the event's buffer: let it go
	s.n++
	return nil
}

func (s *txSpill) writeErr(err error) error {
	return fmt.Errorf("recover: writing a transaction's changes to their spill file: %w (set TMPDIR to a directory with room)", err)
}

var errSpillDamaged = errors.New("recover: a transaction's spill file is damaged")

// each reads the changes back, in order, and calls fn with each. A change
// and its values stay valid after fn returns (they are never reused).
func (s *txSpill) each(fn func(c *change.Change) error) error {
	if s.n == 0 {
		return nil
	}
	if err := s.w.Flush(); err != nil {
		return s.writeErr(err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	s.r.Reset(s.f)
	for i := 0; i < s.n; i++ {
		n, err := binary.ReadUvarint(s.r)
		if err != nil {
			return fmt.Errorf("%w: %v", errSpillDamaged, err)
		}
		rec := s.alloc(int(n))
		if _, err := io.ReadFull(s.r, rec); err != nil {
			return fmt.Errorf("%w: %v", errSpillDamaged, err)
		}
		c, err := s.decode(rec)
		if err != nil {
			return err
		}
		if err := fn(&c); err != nil {
			return err
		}
	}
	return nil
}

// alloc returns n bytes for a record: from the current block, or, for a
// record of more than a quarter block, of its own.
func (s *txSpill) alloc(n int) []byte {
	if n > txBlock/4 {
		return bigbuf.Make(n, n)
	}
	if cap(s.block)-len(s.block) < n {
		s.block = make([]byte, 0, txBlock)
	}
	l := len(s.block)
	s.block = s.block[:l+n]
	return s.block[l : l+n : l+n]
}

func (s *txSpill) row(n int) change.Row {
	if n > 256 {
		return make(change.Row, n)
	}
	if cap(s.vals)-len(s.vals) < n {
		s.vals = make([]change.Value, 0, 4096)
	}
	l := len(s.vals)
	s.vals = s.vals[:l+n]
	return s.vals[l : l+n : l+n]
}

// decode reads what add wrote. With large values, the record's tail holds
// their bytes, in order.
func (s *txSpill) decode(rec []byte) (change.Change, error) {
	var c change.Change
	b := rec
	bad := false
	uv := func() uint64 {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return x
	}
	if len(b) < 2 {
		return c, errSpillDamaged
	}
	c.Op, b = change.Op(b[0]), b[2:]
	flags := rec[1]
	ti, fi := uv(), uv()
	c.Pos.Offset = uv()
	c.RowIndex = int(uv())
	ci := uv()
	c.CommitPos.Offset = uv()
	if flags&txZeroTime == 0 {
		sec, n := binary.Varint(b)
		if n <= 0 {
			return c, errSpillDamaged
		}
		b = b[n:]
		c.Time = time.Unix(sec, int64(uv())).UTC()
	}
	c.TimeMicro = flags&txMicro != 0
	c.ServerID = uint32(uv())
	c.Flags = uint16(uv())
	gi := uv()
	if bad || ti >= uint64(len(s.tables)) || fi >= uint64(len(s.names)) || ci >= uint64(len(s.names)) || gi >= uint64(len(s.names)) {
		return c, errSpillDamaged
	}
	c.Table, c.Pos.File, c.CommitPos.File, c.GTID = s.tables[ti], s.names[fi], s.names[ci], s.names[gi]
	var larges []*change.Value
	var lens []int
	readRow := func() change.Row {
		n := uv()
		if bad || n > uint64(len(b)) {
			bad = true
			return nil
		}
		row := s.row(int(n))
		for i := range row {
			if len(b) == 0 {
				bad = true
				return nil
			}
			kind := change.Kind(b[0])
			b = b[1:]
			num, l := uv(), uv()
			if bad {
				return nil
			}
			if l >= uint64(largeValue) {
				row[i] = change.RawValue(kind, num, nil)
				larges = append(larges, &row[i])
				lens = append(lens, int(l))
				continue
			}
			if l > uint64(len(b)) {
				bad = true
				return nil
			}
			var vb []byte
			if l > 0 {
				vb = b[:l:l]
			}
			b = b[l:]
			row[i] = change.RawValue(kind, num, vb)
		}
		return row
	}
	if flags&txBefore != 0 {
		c.Before = readRow()
	}
	if flags&txAfter != 0 {
		c.After = readRow()
	}
	if bad {
		return c, errSpillDamaged
	}
	total := 0
	for _, l := range lens {
		total += l
	}
	if total != len(b) {
		return c, errSpillDamaged
	}
	at := len(rec) - total
	for i, v := range larges {
		*v = change.RawValue(v.Kind(), v.Uint(), rec[at:at+lens[i]:at+lens[i]])
		at += lens[i]
	}
	return c, nil
}

// reset empties the file for the next transaction.
func (s *txSpill) reset() error {
	s.tables, s.names = s.tables[:0], s.names[:0]
	clear(s.large)
	s.block, s.vals = nil, nil
	if s.n == 0 {
		return nil
	}
	s.n = 0
	s.w.Reset(s.f)
	if err := s.f.Truncate(0); err != nil {
		return err
	}
	_, err := s.f.Seek(0, io.SeekStart)
	return err
}

func (s *txSpill) close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
