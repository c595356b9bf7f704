package recovery

import (
	"encoding/binary"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Conflicts counts the row changes that do not fit what the binlogs
// inserted before them. For a table created inside the binlogs they mean
// the binlogs are incomplete; for a table older than the binlogs, the
// updates and deletes of rows it had before them are expected.
type Conflicts struct {
	// UpdateMissing and DeleteMissing: updates and deletes of a row the
	// binlogs never inserted (or had deleted).
	UpdateMissing, DeleteMissing uint64
	// InsertExisting: inserts (or key-changing updates) of a key that
	// already held a row. The later row wins.
	InsertExisting uint64
	// Unidentifiable: changes of a table without a primary key whose
	// image lacks columns (binlog_row_image MINIMAL): the row cannot be
	// found. They are left out.
	Unidentifiable uint64
	// Incomplete: updates of a row the binlogs never inserted whose after
	// image lacks columns, so the row cannot be rebuilt; left out.
	Incomplete uint64
}

// Total is the number of conflicts.
func (c Conflicts) Total() uint64 {
	return c.UpdateMissing + c.DeleteMissing + c.InsertExisting + c.Unidentifiable
}

// store is the table's content rebuilt: the rows keyed by primary key,
// or, without one, by their full image (with a count, as such a table
// may hold equal rows). With keysOnly it keeps the keys but not the rows,
// to count conflicts while the rows go elsewhere.
//
// The rows live in memory up to a budget (memBudget, estimated bytes),
// then in an on-disk store (diskstore.go) in a temporary directory under
// dir, so memory stays bounded whatever the table's size.
type store struct {
	t         *tablemap.Table
	keysOnly  bool
	rows      rowTable
	seq       uint64
	c         Conflicts
	keyBuf    []byte
	dir       string
	memBudget int64
	// width is the number of columns of every row stored (0: none yet;
	// -1: not the same in all): an update whose after image has them all
	// is then the new row whole, and the old one need not be read.
	width int
}

type entry struct {
	row   change.Row // nil with keysOnly
	seq   uint64     // insertion order, for a stable output
	count int        // how many equal rows (tables without a primary key)
}

func newStore(t *tablemap.Table, keysOnly bool) *store {
	return &store{t: t, keysOnly: keysOnly, rows: newMemTable()}
}

// close removes the on-disk store, if any.
func (s *store) close() error {
	if s == nil || s.rows == nil {
		return nil
	}
	return s.rows.close()
}

// key encodes the row's key: its primary key columns, or every column.
// ok is false when a key column is absent from the image.
func (s *store) key(row change.Row) (string, bool) {
	b := s.keyBuf[:0]
	add := func(v change.Value) bool {
		if v.IsAbsent() {
			return false
		}
		b = append(b, byte(v.Kind()))
		// Big-endian, so that ascending integer keys (AUTO_INCREMENT)
		// are ascending bytes: the on-disk store then knows an insert's
		// key is new without a lookup (diskTable.lookup). A String's
		// Uint is 0, or a mark of text not checked to be UTF-8 with its
		// collation (UncheckedText): the same text either way.
		num := v.Uint()
		if v.Kind() == change.String {
			num = 0
		}
		b = binary.BigEndian.AppendUint64(b, num)
		b = binary.AppendUvarint(b, uint64(len(v.Bytes())))
		b = append(b, v.Bytes()...)
		return true
	}
	if len(s.t.PrimaryKey) > 0 {
		for _, i := range s.t.PrimaryKey {
			if i >= len(row) || !add(row[i]) {
				return "", false
			}
		}
	} else {
		for _, v := range row {
			if !add(v) {
				return "", false
			}
		}
	}
	s.keyBuf = b
	return string(b), true
}

func (s *store) pk() bool { return len(s.t.PrimaryKey) > 0 }

func complete(row change.Row) bool {
	for i := range row { // indexed: ranging over the values copies each
		if row[i].Kind() == change.Absent {
			return false
		}
	}
	return true
}

func clone(row change.Row) change.Row {
	out := make(change.Row, len(row))
	for i, v := range row {
		out[i] = v.Clone()
	}
	return out
}

// own is clone, but for values of largeValue bytes or more, kept as they
// are (sidefile.go): the store's rows are its callers' own copies (the
// replayer's), never changed after.
func own(row change.Row) change.Row {
	out := make(change.Row, len(row))
	for i, v := range row {
		if len(v.Bytes()) < largeValue {
			v = v.Clone()
		}
		out[i] = v
	}
	return out
}

// note records the width of a row stored.
func (s *store) note(row change.Row) {
	switch {
	case s.width == 0:
		s.width = len(row)
	case s.width != len(row):
		s.width = -1
	}
}

// whole reports whether an after image is the new row whole: every
// column, as many as every stored row has.
func (s *store) whole(after change.Row) bool {
	return s.width > 0 && len(after) == s.width && complete(after)
}

// put stores row under k with insertion order seq (0: a new one).
func (s *store) put(k string, row change.Row, seq uint64) error {
	if seq == 0 {
		s.seq++
		seq = s.seq
	}
	if !s.pk() {
		e, ok, err := s.rows.get(k)
		if err != nil {
			return err
		}
		if ok {
			e.count++ // an equal row
			return s.rows.set(k, e)
		}
	}
	e := entry{seq: seq, count: 1}
	if !s.keysOnly {
		e.row = own(row)
		s.note(e.row)
	}
	// k holds no row: insert removed it, or it was just looked up.
	if err := s.rows.add(k, e); err != nil {
		return err
	}
	return s.spill()
}

// remove drops one row under k; false when there is none. The row is
// read only when equal ones stay.
func (s *store) remove(k string) (bool, error) {
	_, count, ok, err := s.rows.has(k)
	if !ok || err != nil {
		return false, err
	}
	if count <= 1 {
		return true, s.rows.del(k)
	}
	e, _, err := s.rows.get(k)
	if err != nil {
		return false, err
	}
	e.count--
	return true, s.rows.set(k, e)
}

// insert stores row under k, counting a duplicate key as a conflict.
func (s *store) insert(k string, row change.Row, seq uint64) error {
	if s.pk() {
		_, _, dup, err := s.rows.has(k)
		if err != nil {
			return err
		}
		if dup {
			s.c.InsertExisting++
			if err := s.rows.del(k); err != nil {
				return err
			}
		}
	}
	return s.put(k, row, seq)
}

func merge(base, after change.Row) change.Row {
	row := own(base)
	for i, v := range after {
		if !v.IsAbsent() && i < len(row) {
			row[i] = v
		}
	}
	return row
}

// apply applies one change in the final schema. The store keeps the
// large values of c's rows as they are (own).
func (s *store) apply(c *change.Change) error {
	switch c.Op {
	case change.Insert:
		k, ok := s.key(c.After)
		if !ok {
			s.c.Unidentifiable++
			return nil
		}
		return s.insert(k, c.After, 0)
	case change.Delete:
		k, ok := s.key(c.Before)
		if !ok {
			s.c.Unidentifiable++
			return nil
		}
		found, err := s.remove(k)
		if err != nil {
			return err
		}
		if !found {
			s.c.DeleteMissing++
		}
	case change.Update:
		kb, ok := s.key(c.Before)
		if !ok {
			s.c.Unidentifiable++
			return nil
		}
		seqB, _, found, err := s.rows.has(kb)
		if err != nil {
			return err
		}
		var row change.Row
		var seq uint64
		if !found {
			s.c.UpdateMissing++
			// A row from before the binlogs: its after image is its content,
			// when the image is complete.
			if !complete(c.After) {
				s.c.Incomplete++
				return nil
			}
			row = c.After
		} else {
			switch {
			case s.keysOnly:
				row = merge(c.Before, c.After) // it holds the key columns at least
			case s.whole(c.After):
				row = own(c.After)
			default:
				e, _, err := s.rows.get(kb)
				if err != nil {
					return err
				}
				row = merge(e.row, c.After)
			}
			if s.pk() {
				seq = seqB
				if ka, ok := s.key(row); ok && ka == kb {
					// The same key: the row changes in place.
					if s.keysOnly {
						return nil
					}
					if err := s.rows.set(kb, entry{row: row, seq: seq, count: 1}); err != nil {
						return err
					}
					s.note(row)
					return s.spill()
				}
			}
			if _, err := s.remove(kb); err != nil {
				return err
			}
		}
		ka, ok := s.key(row)
		if !ok {
			s.c.Unidentifiable++
			return nil
		}
		return s.insert(ka, row, seq)
	}
	return nil
}

// sorted returns the rows in insertion order, each repeated by its count
// (for tests: it holds them all in memory).
func (s *store) sorted() []change.Row {
	var out []change.Row
	s.each(func(row change.Row) error {
		out = append(out, clone(row))
		return nil
	})
	return out
}

// size is the number of rows.
func (s *store) size() uint64 { return s.rows.rows() }

// stagedStore is a store kept in the schema of the stage its last change
// was written in (convert.go): at each ALTER TABLE its rows are converted
// to the next schema and keyed by that schema's primary key, as the
// server rebuilt the table. Each change is applied in its own stage's
// schema, so it finds its row by the key of its time (binlog_row_image
// MINIMAL logs only that).
type stagedStore struct {
	*store
	cv        *converter
	cur       int // the stage of the rows
	dir       string
	memBudget int64
}

func (s *stagedStore) newStore(t *tablemap.Table) {
	s.store = newStore(t, false)
	s.store.dir, s.store.memBudget = s.dir, s.memBudget
}

// apply applies a change in its event-time schema.
func (s *stagedStore) apply(c *change.Change) error {
	k := s.cv.stageOf(c.Pos)
	t := s.cv.target(k)
	if t == nil {
		t = c.Table // a stage whose schema is unknown: the change's own
	}
	if s.store == nil {
		s.newStore(t)
		s.cur = k
	}
	if k > s.cur {
		if err := s.moveTo(k, t); err != nil {
			return err
		}
	}
	cc := s.cv.convertTo(c, k)
	return s.store.apply(&cc)
}

// moveTo converts the rows to stage k's schema t and keys them by its
// primary key. Rows whose keys become equal keep the first written (the
// others count as InsertExisting).
func (s *stagedStore) moveTo(k int, t *tablemap.Table) error {
	if s.store == nil {
		s.newStore(t)
		s.cur = k
		return nil
	}
	if k == s.cur && s.t == t {
		return nil
	}
	ch := s.cv.chainTo(s.t, s.cur, k, t)
	from := s.t
	s.store.t, s.cur = t, k
	if samePK(from, t) && keyKept(ch, t) {
		// The keys stay: convert the rows where they are.
		if ch.identity {
			return nil
		}
		// In order: the notes name the first rows.
		s.width = 0
		return s.rows.scan(func(key string, e entry) error {
			s.cv.at = change.Position{}
			e.row = s.cv.applyInto(ch, e.row, true, true)
			s.note(e.row)
			return s.rows.set(key, e)
		})
	}
	old := s.rows
	fresh, err := s.newTable()
	if err != nil {
		return err
	}
	s.rows = fresh
	s.width = 0
	err = old.scan(func(_ string, e entry) error {
		if !ch.identity {
			s.cv.at = change.Position{}
			e.row = s.cv.applyInto(ch, e.row, true, true)
		}
		key, ok := s.key(e.row)
		if !ok {
			s.c.Unidentifiable++
			return nil
		}
		prev, found, err := s.rows.get(key)
		if err != nil {
			return err
		}
		if found {
			if s.pk() {
				s.c.InsertExisting++
				return nil
			}
			prev.count += e.count
			return s.rows.set(key, prev)
		}
		s.note(e.row)
		if err := s.rows.set(key, e); err != nil {
			return err
		}
		return s.spill()
	})
	if cerr := old.close(); err == nil {
		err = cerr
	}
	return err
}

func samePK(a, b *tablemap.Table) bool {
	if len(a.PrimaryKey) != len(b.PrimaryKey) {
		return false
	}
	for i := range a.PrimaryKey {
		if a.PrimaryKey[i] != b.PrimaryKey[i] {
			return false
		}
	}
	return true
}

// complete returns c with the columns its images lack (binlog_row_image
// MINIMAL) taken from the row it changes, as the rows stood before it.
func (s *stagedStore) complete(c *change.Change) (change.Change, error) {
	out := *c
	if s.store == nil || c.Before == nil || complete(c.Before) {
		return out, nil
	}
	k := s.cv.stageOf(c.Pos)
	if t := s.cv.target(k); k > s.cur && t != nil {
		if err := s.moveTo(k, t); err != nil {
			return out, err
		}
	}
	if s.t != c.Table && !sameTable(s.t, c.Table) {
		return out, nil // an event-time table the stage does not know
	}
	key, ok := s.key(c.Before)
	if !ok {
		return out, nil
	}
	e, found, err := s.rows.get(key)
	if !found || err != nil {
		return out, err
	}
	out.Before = merge(e.row, c.Before)
	if c.Op == change.Update {
		out.After = merge(out.Before, c.After)
	}
	return out, nil
}

// keyKept reports whether a chain leaves the primary key columns of t
// as they were (same index, value unconverted) in every step.
func keyKept(ch *chain, t *tablemap.Table) bool {
	if len(t.PrimaryKey) == 0 {
		// Without a primary key a row is keyed by all its values: any
		// change to the columns changes the keys.
		return ch.identity
	}
	for _, m := range ch.steps {
		for _, j := range t.PrimaryKey {
			if j >= len(m.src) || m.src[j] != j || m.conv[j] {
				return false
			}
		}
	}
	return true
}
