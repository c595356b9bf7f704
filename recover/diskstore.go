package recovery

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/bloom"

	"github.com/binlogcdc/binlogcdc/change"
)

// diskTable is a rowTable in a Pebble store in a temporary directory,
// removed at close. Its memory is bounded (a few MB of block cache and
// memtables) whatever the table's size. Two key spaces:
//
//	'k' key          -> seq (8 bytes, big-endian), count (uvarint)
//	's' seq (8 bytes) -> count, key and row (encodeEntry)
//
// so a change finds its row by key, and the rows are read back in
// insertion order by scanning 's'.
type diskTable struct {
	dir   string
	db    *pebble.DB
	b     *pebble.Batch // writes not yet committed; reads see them
	n     uint64
	kb    []byte
	vb    []byte
	sbuf  []byte
	erred error

	// The side file of large values (sidefile.go).
	side    *os.File
	sideEnd int64
	refs    []sideRef
	sideBuf []byte // scan's large values, reused from row to row

	// max is the greatest key ever written (hasMax: one was): a key
	// above it was never stored, so lookup answers without Pebble. Keys
	// that grow (AUTO_INCREMENT) never need a lookup to be inserted.
	max    []byte
	hasMax bool
	// The last key looked up or written, and what it holds (seen: valid;
	// any other write clears it): an UPDATE looks its row up, then sets it.
	lastK        []byte
	lastSeq      uint64
	lastCount    int
	lastOK, seen bool
}

// batchBytes is how many bytes of writes a diskTable gathers before it
// commits them.
const batchBytes = 4 << 20

type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("recover: on-disk store: "+format, args...))
}

// newDiskTable opens an empty diskTable in a new directory under parent
// ("": the system's temporary directory).
func newDiskTable(parent string) (*diskTable, error) {
	dir, err := os.MkdirTemp(parent, "binlogcdc-recover-")
	if err != nil {
		return nil, fmt.Errorf("recover: the table outgrew --memory-budget and its on-disk store could not be created: %w (set TMPDIR to a directory with room)", err)
	}
	levels := make([]pebble.LevelOptions, 7)
	for i := range levels {
		levels[i].FilterPolicy = bloom.FilterPolicy(10)
		// Lookups of absent keys read blocks: decompressing them cost
		// most of the CPU; the disk space matters less.
		levels[i].Compression = pebble.NoCompression
	}
	cache := pebble.NewCache(16 << 20)
	defer cache.Unref()
	db, err := pebble.Open(dir, &pebble.Options{
		DisableWAL:   true, // a scratch store: nothing to recover after a crash
		Cache:        cache,
		MemTableSize: 8 << 20,
		Levels:       levels,
		Logger:       quietLogger{},
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("recover: on-disk store in %s: %w", dir, err)
	}
	return &diskTable{dir: dir, db: db, b: db.NewIndexedBatch()}, nil
}

func (t *diskTable) kkey(k string) []byte {
	t.kb = append(append(t.kb[:0], 'k'), k...)
	return t.kb
}

func skey(buf []byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(append(buf[:0], 's'), seq)
}

// lookup returns the seq and count stored under k.
func (t *diskTable) lookup(k string) (seq uint64, count int, ok bool, err error) {
	if t.seen && k == string(t.lastK) {
		return t.lastSeq, t.lastCount, t.lastOK, nil
	}
	if !t.hasMax || k > string(t.max) {
		t.remember(k, 0, 0, false)
		return 0, 0, false, nil
	}
	v, c, err := t.b.Get(t.kkey(k))
	if errors.Is(err, pebble.ErrNotFound) {
		t.remember(k, 0, 0, false)
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	defer c.Close()
	if len(v) < 9 {
		return 0, 0, false, fmt.Errorf("recover: on-disk store: a damaged key entry")
	}
	n, _ := binary.Uvarint(v[8:])
	seq, count = binary.BigEndian.Uint64(v), int(n)
	t.remember(k, seq, count, true)
	return seq, count, true, nil
}

// remember notes what k holds, for the next lookup of it.
func (t *diskTable) remember(k string, seq uint64, count int, ok bool) {
	t.lastK = append(t.lastK[:0], k...)
	t.lastSeq, t.lastCount, t.lastOK, t.seen = seq, count, ok, true
}

func (t *diskTable) has(k string) (uint64, int, bool, error) { return t.lookup(k) }

func (t *diskTable) get(k string) (entry, bool, error) {
	seq, _, ok, err := t.lookup(k)
	if !ok || err != nil {
		return entry{}, false, err
	}
	t.sbuf = skey(t.sbuf, seq)
	v, c, err := t.b.Get(t.sbuf)
	if err != nil {
		return entry{}, false, fmt.Errorf("recover: on-disk store: the row of a key: %w", err)
	}
	defer c.Close()
	t.refs = t.refs[:0]
	_, e, err := decodeEntry(append([]byte(nil), v...), seq, &t.refs)
	if err == nil {
		_, err = t.load(e.row, t.refs, nil)
	}
	return e, true, err
}

func (t *diskTable) set(k string, e entry) error {
	seq, count, ok, err := t.lookup(k)
	if err != nil {
		return err
	}
	return t.write(k, e, seq, count, ok)
}

func (t *diskTable) add(k string, e entry) error { return t.write(k, e, 0, 0, false) }

// write stores e under k, which held an entry (seq, count) if ok.
func (t *diskTable) write(k string, e entry, seq uint64, count int, ok bool) (err error) {
	if ok {
		t.n -= uint64(count)
		if seq != e.seq {
			t.sbuf = skey(t.sbuf, seq)
			if err := t.b.Delete(t.sbuf, nil); err != nil {
				return err
			}
		}
	}
	t.n += uint64(e.count)
	if !t.hasMax || k > string(t.max) {
		t.max, t.hasMax = append(t.max[:0], k...), true
	}
	t.remember(k, e.seq, e.count, true)
	if !ok || seq != e.seq || count != e.count {
		// (An UPDATE in place leaves the key's entry as it is.)
		t.vb = binary.AppendUvarint(binary.BigEndian.AppendUint64(t.vb[:0], e.seq), uint64(e.count))
		if err := t.b.Set(t.kkey(k), t.vb, nil); err != nil {
			return err
		}
	}
	if t.vb, err = encodeEntry(t.vb[:0], k, &e, t.appendSide); err != nil {
		return err
	}
	t.sbuf = skey(t.sbuf, e.seq)
	if err := t.b.Set(t.sbuf, t.vb, nil); err != nil {
		return err
	}
	return t.maybeCommit()
}

func (t *diskTable) del(k string) error {
	seq, count, ok, err := t.lookup(k)
	if !ok || err != nil {
		return err
	}
	t.n -= uint64(count)
	t.remember(k, 0, 0, false)
	if err := t.b.Delete(t.kkey(k), nil); err != nil {
		return err
	}
	t.sbuf = skey(t.sbuf, seq)
	if err := t.b.Delete(t.sbuf, nil); err != nil {
		return err
	}
	return t.maybeCommit()
}

func (t *diskTable) maybeCommit() error {
	if t.b.Len() < batchBytes {
		return nil
	}
	return t.commit()
}

func (t *diskTable) commit() error {
	if t.b.Empty() {
		return nil
	}
	if err := t.b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("recover: on-disk store in %s: %w", t.dir, err)
	}
	t.b.Close()
	t.b = t.db.NewIndexedBatch()
	return nil
}

func (t *diskTable) rows() uint64 { return t.n }

// scan reads the rows as they stood when it began, in insertion order.
// Their large values share one buffer: a row is fn's until it returns.
func (t *diskTable) scan(fn func(k string, e entry) error) error {
	return t.scanRows(true, fn)
}

// scanRows is scan; without load, the rows' large values are left out:
// they hold the value's kind and number, and nil for its bytes.
func (t *diskTable) scanRows(load bool, fn func(k string, e entry) error) error {
	if err := t.commit(); err != nil {
		return err
	}
	it, err := t.db.NewIter(&pebble.IterOptions{LowerBound: []byte{'s'}, UpperBound: []byte{'t'}})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		t.refs = t.refs[:0]
		k, e, err := decodeEntry(append([]byte(nil), it.Value()...), binary.BigEndian.Uint64(it.Key()[1:]), &t.refs)
		if err == nil && load {
			t.sideBuf, err = t.load(e.row, t.refs, t.sideBuf)
		}
		if err != nil {
			it.Close()
			return err
		}
		if err := fn(k, e); err != nil {
			it.Close()
			return err
		}
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("recover: on-disk store in %s: %w", t.dir, err)
	}
	return nil
}

func (t *diskTable) close() error {
	if t.db == nil {
		return nil
	}
	t.b.Close()
	err := t.db.Close()
	t.db = nil
	if t.side != nil {
		if cerr := t.side.Close(); err == nil {
			err = cerr
		}
		t.side = nil
	}
	if rerr := os.RemoveAll(t.dir); err == nil {
		err = rerr
	}
	return err
}

// encodeEntry appends count, key and row: per value its kind, number and
// bytes; for a value of largeValue bytes or more, its kind with sideFlag,
// number, length and where side (nil: none) stored its bytes.
func encodeEntry(b []byte, k string, e *entry, side func([]byte) (int64, error)) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(e.count))
	b = binary.AppendUvarint(b, uint64(len(k)))
	b = append(b, k...)
	b = binary.AppendUvarint(b, uint64(len(e.row)))
	for _, v := range e.row {
		if len(v.Bytes()) >= largeValue && side != nil {
			at, err := side(v.Bytes())
			if err != nil {
				return b, err
			}
			b = append(b, byte(v.Kind())|sideFlag)
			b = binary.AppendUvarint(b, v.Uint())
			b = binary.AppendUvarint(b, uint64(len(v.Bytes())))
			b = binary.AppendUvarint(b, uint64(at))
			continue
		}
		b = append(b, byte(v.Kind()))
		b = binary.AppendUvarint(b, v.Uint())
		b = binary.AppendUvarint(b, uint64(len(v.Bytes())))
		b = append(b, v.Bytes()...)
	}
	return b, nil
}

var errDamaged = errors.New("recover: on-disk store: a damaged row")

// decodeEntry reads what encodeEntry wrote; the row's bytes point into b.
// Its large values are left out (nil bytes), and where they lie appended
// to refs.
func decodeEntry(b []byte, seq uint64, refs *[]sideRef) (string, entry, error) {
	e := entry{seq: seq}
	uv := func() (uint64, bool) {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return x, true
	}
	bytes := func() ([]byte, bool) {
		n, ok := uv()
		if !ok || n > uint64(len(b)) {
			return nil, false
		}
		out := b[:n:n]
		b = b[n:]
		return out, true
	}
	count, ok := uv()
	if !ok {
		return "", e, errDamaged
	}
	e.count = int(count)
	kb, ok := bytes()
	if !ok {
		return "", e, errDamaged
	}
	n, ok := uv()
	if !ok || n > uint64(len(b)) {
		return "", e, errDamaged
	}
	if n > 0 {
		e.row = make(change.Row, n)
	}
	for i := range e.row {
		if len(b) == 0 {
			return "", e, errDamaged
		}
		kind := change.Kind(b[0])
		b = b[1:]
		num, ok := uv()
		if !ok {
			return "", e, errDamaged
		}
		if kind&sideFlag != 0 {
			n, ok1 := uv()
			at, ok2 := uv()
			if !ok1 || !ok2 || n > math.MaxInt64 || at > math.MaxInt64 {
				return "", e, errDamaged
			}
			*refs = append(*refs, sideRef{col: i, n: int64(n), at: int64(at)})
			e.row[i] = change.RawValue(kind&^sideFlag, num, nil)
			continue
		}
		vb, ok := bytes()
		if !ok {
			return "", e, errDamaged
		}
		if len(vb) == 0 {
			vb = nil
		}
		e.row[i] = change.RawValue(kind, num, vb)
	}
	return string(kb), e, nil
}
