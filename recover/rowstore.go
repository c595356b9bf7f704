package recovery

import (
	"sort"

	"github.com/binlogcdc/binlogcdc/change"
)

// DefaultMemoryBudget is how many bytes of rows (an estimate of their
// in-memory size) a rebuilt table keeps in memory before it moves to an
// on-disk store (diskstore.go).
const DefaultMemoryBudget = 16 << 20

// rowTable holds a rebuilt table's entries by key. scan visits them in
// insertion order (seq); fn may call set or del for the key it is given.
type rowTable interface {
	get(k string) (entry, bool, error)
	// has is get without the row: the entry's seq and count. On disk it
	// reads only the key's index entry.
	has(k string) (seq uint64, count int, ok bool, err error)
	set(k string, e entry) error
	add(k string, e entry) error // set of a key known to be absent
	del(k string) error
	rows() uint64 // the number of rows (entries times their counts)
	scan(fn func(k string, e entry) error) error
	close() error
}

// memTable is a rowTable in memory.
type memTable struct {
	m     map[string]*entry
	n     uint64
	bytes int64 // estimated memory use
}

func newMemTable() *memTable { return &memTable{m: map[string]*entry{}} }

// valueSize is the in-memory size of a change.Value, without its bytes.
const valueSize = 40

func entrySize(k string, e *entry) int64 {
	n := int64(len(k)) + 64 + 48 // key, entry, map slot
	for _, v := range e.row {
		n += valueSize + int64(cap(v.Bytes()))
	}
	return n
}

func (t *memTable) get(k string) (entry, bool, error) {
	e := t.m[k]
	if e == nil {
		return entry{}, false, nil
	}
	return *e, true, nil
}

func (t *memTable) has(k string) (uint64, int, bool, error) {
	if e := t.m[k]; e != nil {
		return e.seq, e.count, true, nil
	}
	return 0, 0, false, nil
}

func (t *memTable) set(k string, e entry) error {
	if old := t.m[k]; old != nil {
		t.n -= uint64(old.count)
		t.bytes -= entrySize(k, old)
	}
	ne := e
	t.m[k] = &ne
	t.n += uint64(e.count)
	t.bytes += entrySize(k, &ne)
	return nil
}

func (t *memTable) add(k string, e entry) error { return t.set(k, e) }

func (t *memTable) del(k string) error {
	if old := t.m[k]; old != nil {
		t.n -= uint64(old.count)
		t.bytes -= entrySize(k, old)
		delete(t.m, k)
	}
	return nil
}

func (t *memTable) rows() uint64 { return t.n }

func (t *memTable) scan(fn func(k string, e entry) error) error {
	type ke struct {
		k string
		e *entry
	}
	es := make([]ke, 0, len(t.m))
	for k, e := range t.m {
		es = append(es, ke{k, e})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].e.seq < es[j].e.seq })
	for _, x := range es {
		if err := fn(x.k, *x.e); err != nil {
			return err
		}
	}
	return nil
}

func (t *memTable) close() error { t.m = nil; return nil }

// newTable returns an empty rowTable like t: on disk when t is.
func (s *store) newTable() (rowTable, error) {
	if _, ok := s.rows.(*diskTable); ok {
		return newDiskTable(s.dir)
	}
	return newMemTable(), nil
}

// spill moves the rows to disk when they outgrow the memory budget.
func (s *store) spill() error {
	m, ok := s.rows.(*memTable)
	if !ok || m.bytes <= s.budget() {
		return nil
	}
	d, err := newDiskTable(s.dir)
	if err != nil {
		return err
	}
	if err := m.scan(d.set); err != nil {
		d.close()
		return err
	}
	s.rows = d
	return m.close()
}

func (s *store) budget() int64 {
	if s.memBudget > 0 {
		return s.memBudget
	}
	return DefaultMemoryBudget
}

// each calls fn with the rows in insertion order, each repeated by its
// count. The rows are fn's until it returns.
func (s *store) each(fn func(row change.Row) error) error {
	return s.eachRow(true, fn)
}

// eachRow is each; without load, the large values of rows on disk are
// left out (diskTable.scanRows), for a look at which values are absent.
func (s *store) eachRow(load bool, fn func(row change.Row) error) error {
	scan := s.rows.scan
	if d, ok := s.rows.(*diskTable); ok && !load {
		scan = func(fn func(k string, e entry) error) error { return d.scanRows(false, fn) }
	}
	return scan(func(_ string, e entry) error {
		for n := 0; n < e.count; n++ {
			if err := fn(e.row); err != nil {
				return err
			}
		}
		return nil
	})
}
