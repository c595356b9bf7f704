package recovery

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/bigbuf"
)

// Large values. Pebble would hold a value in its batch, its memtable and
// its blocks, each a copy: a 200 MB BLOB cost a gigabyte. A diskTable
// keeps a value of largeValue bytes or more out of Pebble instead: its
// bytes are appended to a side file in the store's directory, written
// from where they lie, and the row in Pebble holds their length and
// offset. scan reads them back into one buffer reused from row to row. A
// store (model.go) keeps such values as it is given them, without a
// copy: so a row costs about itself on its way to disk and back.
//
// The side file only grows: a large value overwritten or deleted keeps
// its place until the store is closed (at most what the binlogs held of
// such values).
var largeValue = 1 << 20 // a variable for the tests

// sideFlag marks, in an encoded value's kind, a value in the side file.
const sideFlag = 0x80

// sideRef is where a row's column's large value lies in the side file.
type sideRef struct {
	col   int
	n, at int64
}

// appendSide appends b to the side file and returns its offset.
func (t *diskTable) appendSide(b []byte) (int64, error) {
	if t.side == nil {
		f, err := os.OpenFile(filepath.Join(t.dir, "large-values"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return 0, fmt.Errorf("recover: on-disk store: %w", err)
		}
		t.side = f
	}
	at := t.sideEnd
	if _, err := t.side.WriteAt(b, at); err != nil {
		return 0, fmt.Errorf("recover: on-disk store: writing a %d-byte value: %w (set TMPDIR to a directory with room)", len(b), err)
	}
	t.sideEnd += int64(len(b))
	return at, nil
}

// load reads the large values refs of row into buf (grown as needed; nil:
// a new buffer) and returns it.
func (t *diskTable) load(row change.Row, refs []sideRef, buf []byte) ([]byte, error) {
	if len(refs) == 0 {
		return buf, nil
	}
	var total int64
	for _, r := range refs {
		if t.side == nil || r.at > t.sideEnd || r.n > t.sideEnd-r.at || r.col >= len(row) {
			return buf, errDamaged
		}
		total += r.n
	}
	if int64(cap(buf)) < total {
		buf = nil // the last huge value's buffer can go first
		buf = bigbuf.Make(int(total), int(total))
	}
	buf = buf[:total]
	off := int64(0)
	for _, r := range refs {
		b := buf[off : off+r.n : off+r.n]
		if _, err := t.side.ReadAt(b, r.at); err != nil {
			return buf, fmt.Errorf("recover: on-disk store: reading a %d-byte value: %w", r.n, err)
		}
		v := row[r.col]
		row[r.col] = change.RawValue(v.Kind(), v.Uint(), b)
		off += r.n
	}
	return buf, nil
}

// largeOnDisk reports whether the store's rows are on disk with large
// values among them.
func (s *store) largeOnDisk() bool {
	d, ok := s.rows.(*diskTable)
	return ok && d.side != nil
}
