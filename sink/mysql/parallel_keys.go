package mysqlsink

import (
	"errors"
	"strconv"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
)

// classify updates the open transaction's partition and barrier flag.
func (p *Parallel) classify(c *change.Change) {
	n := len(p.w)
	if c.Op == change.DDL || c.Table == nil {
		p.nokey, p.unsafe = true, true
		return
	}
	if !p.safeTable(c) {
		p.unsafe = true
	}
	for _, row := range []change.Row{c.Before, c.After} {
		if row == nil {
			continue
		}
		h, exact, ok := keyHash(c, row)
		switch {
		case !ok && c.Op == change.Update && len(c.Before) > 0 && absentKey(row, c.Table.PrimaryKey):
			// An after image without the key: the key did not change.
			continue
		case !ok:
			p.nokey = true
			continue
		}
		p.keys = append(p.keys, exact)
		k := int(h % uint64(n))
		switch {
		case p.part == -1:
			p.part = k
		case p.part != k:
			p.multi = true
		}
	}
}

// keyHash hashes row's primary key (event-time TABLE_MAP) and table; ok
// is false when the table has none, or one with a column whose equality
// is not byte equality (text under a collation, floating point, a
// prefix). part modulo N is the key's partition (integers in blocks of
// 256); exact names the row, for the coordinator's record of what each
// worker was given (two rows with one exact hash only wait for each
// other needlessly; one row always has one).
func keyHash(c *change.Change, row change.Row) (part, exact uint64, ok bool) {
	t := c.Table
	if len(t.PrimaryKey) == 0 {
		return 0, 0, false
	}
	for _, pre := range t.PrimaryKeyPrefix {
		if pre > 0 {
			return 0, 0, false
		}
	}
	h := fnvString(fnvOffset, t.DB)
	h = fnvByte(h, 0)
	h = fnvString(h, t.Name)
	x := h
	for _, i := range t.PrimaryKey {
		if i >= len(row) {
			return 0, 0, false
		}
		v := row[i]
		switch v.Kind() {
		case change.Int, change.Uint:
			// In blocks of 256 consecutive values: inserts of ascending
			// keys go to one worker in runs, not alternately into the
			// same index pages.
			h, x = fnvByte(h, 1), fnvByte(x, 1)
			for u, j := v.Uint(), 0; j < 8; j++ {
				h = fnvByte(h, byte((u>>8)>>(8*j)))
				x = fnvByte(x, byte(u>>(8*j)))
			}
		case change.Bytes:
			h, x = fnvByte(h, 2), fnvByte(x, 2)
			for _, b := range v.Bytes() {
				h, x = fnvByte(h, b), fnvByte(x, b)
			}
			h, x = fnvByte(h, 0), fnvByte(x, 0)
		default:
			return 0, 0, false
		}
	}
	return h, x, true
}

// FNV-1a, 64 bits (as hash/fnv, without its allocation).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvByte(h uint64, b byte) uint64 { return (h ^ uint64(b)) * fnvPrime }

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = fnvByte(h, s[i])
	}
	return h
}

func (p *Parallel) resetTx() {
	if len(p.buf) > 0 {
		p.lastLen = len(p.buf)
	}
	p.buf, p.bufBytes, p.bufMem, p.part, p.multi, p.nokey, p.keys = nil, 0, 0, -1, false, false, p.keys[:0]
	p.unsafe, p.streaming, p.skip = false, false, false
}

// assign is the worker of the open transaction (see above) and whether it
// is a barrier.
func (p *Parallel) assign() (k int, barrier bool) {
	n := len(p.w)
	switch {
	case p.nokey || p.part < 0:
		return 0, true
	case p.multi:
		h := fnvString(fnvOffset, p.first.File)
		h = fnvString(h, strconv.FormatUint(p.first.Offset, 10))
		return int(h % uint64(n)), p.unsafe
	}
	return p.part, p.unsafe
}

// absentKey reports whether row (a MINIMAL after image) lacks every
// column of the key: the update did not change it.
func absentKey(row change.Row, pk []int) bool {
	for _, i := range pk {
		if i < len(row) && !row[i].IsAbsent() {
			return false
		}
	}
	return len(pk) > 0
}

// posLess orders binlog positions: by file (the number after the last dot
// when both have one, else the name), then offset.
func posLess(a, b change.Position) bool {
	if a.File != b.File {
		// An archive's later server histories (history-N/NAME) come after.
		ha, _ := change.History(a.File)
		if hb, _ := change.History(b.File); ha != hb && a.File != "" && b.File != "" {
			return ha < hb
		}
		na, ea := fileSeq(a.File)
		nb, eb := fileSeq(b.File)
		if ea == nil && eb == nil && strings.EqualFold(baseName(a.File), baseName(b.File)) {
			return na < nb
		}
		return a.File < b.File
	}
	return a.Offset < b.Offset
}

func fileSeq(f string) (uint64, error) {
	i := strings.LastIndexByte(f, '.')
	if i < 0 {
		return 0, errors.New("no sequence")
	}
	return strconv.ParseUint(f[i+1:], 10, 64)
}

func baseName(f string) string {
	if i := strings.LastIndexByte(f, '.'); i >= 0 {
		return f[:i]
	}
	return f
}
