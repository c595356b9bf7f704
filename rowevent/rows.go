package rowevent

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/binlogcdc/binlogcdc/internal/bigbuf"
	"math/bits"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/wire"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// ErrPartialJSON is wrapped by the error for a PARTIAL_UPDATE_ROWS_EVENT row
// that carries a JSON diff instead of the whole value.
var ErrPartialJSON = errors.New("rowevent: partial JSON update (binlog_row_value_options=PARTIAL_JSON)")

// Kind tells what a rows event type does.
func Kind(t replication.EventType) (op change.Op, ok bool) {
	switch t {
	case replication.WRITE_ROWS_EVENTv0, replication.WRITE_ROWS_EVENTv1, replication.WRITE_ROWS_EVENTv2,
		replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1:
		return change.Insert, true
	case replication.UPDATE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2,
		replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1, replication.PARTIAL_UPDATE_ROWS_EVENT:
		return change.Update, true
	case replication.DELETE_ROWS_EVENTv0, replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2,
		replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		return change.Delete, true
	}
	return 0, false
}

func isV2(t replication.EventType) bool {
	switch t {
	case replication.WRITE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv2,
		replication.PARTIAL_UPDATE_ROWS_EVENT:
		return true
	}
	return false
}

func isCompressed(t replication.EventType) bool {
	switch t {
	case replication.MARIADB_WRITE_ROWS_COMPRESSED_EVENT_V1, replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1,
		replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
		return true
	}
	return false
}

// Header is the fixed part of a rows event.
type Header struct {
	TableID uint64
	Flags   uint16
	// StmtEnd is set on the last rows event of a statement.
	StmtEnd bool
	rest    []byte // from the column count on
}

// ParseHeader decodes a rows event's post-header. tableIDSize is 6, or 4
// when the FORMAT_DESCRIPTION_EVENT gives this event type a 6-byte
// post-header (MySQL 5.1.15 and older).
//
//	# bytes      field
//	4/6          table id
//	2            flags (0x0001 STMT_END)
//	v2 only:
//	2            extra data length, itself included
//	length-2     extra data (NDB info, partition ids)
func ParseHeader(t replication.EventType, body []byte, tableIDSize int) (Header, error) {
	var h Header
	need := tableIDSize + 2
	if len(body) < need {
		return h, fmt.Errorf("rowevent: rows event post-header cut short (%d bytes)", len(body))
	}
	for i := 0; i < tableIDSize; i++ {
		h.TableID |= uint64(body[i]) << (8 * i)
	}
	h.Flags = binary.LittleEndian.Uint16(body[tableIDSize:])
	h.StmtEnd = h.Flags&replication.RowsEventStmtEndFlag != 0
	pos := need
	if isV2(t) {
		if len(body) < pos+2 {
			return h, errors.New("rowevent: rows event extra data length cut short")
		}
		l := int(binary.LittleEndian.Uint16(body[pos:]))
		if l < 2 || len(body) < pos+l {
			return h, fmt.Errorf("rowevent: rows event extra data length %d is impossible", l)
		}
		pos += l
	}
	h.rest = body[pos:]
	return h, nil
}

// Decoder decodes the rows of rows events. It reuses its buffers: the
// Changes and Values it returns are valid until the next call to Decode.
// It is not safe for concurrent use.
type Decoder struct {
	// LazyUTF8 leaves text in UTF-8 and ASCII collations (CHAR, VARCHAR,
	// TEXT) unchecked: such values are change.UncheckedText, for a sink
	// that checks the text as it encodes it anyway (sink/jsonl), so that
	// it is read once rather than twice, or that passes the bytes on as
	// they are (sink/mysql, sink/sqltext). Other values are as without it.
	LazyUTF8 bool

	arena   arena
	values  []change.Value
	changes []change.Change
	zbuf    []byte
	huge    bool // the last event decoded was huge (Release)
}

// Release drops the decoder's references to the last event it decoded when
// that event was huge (a row of bigbuf.Threshold bytes or more), so that
// its buffer can be freed before the next rows event: a transaction's
// commit may read such a row back from a spill file, and both copies
// would be in memory. Changes returned by Decode must not be used after.
func (d *Decoder) Release() {
	if !d.huge {
		return
	}
	clear(d.values[:cap(d.values)])
	clear(d.changes[:cap(d.changes)])
	d.huge = false
}

// Decode decodes every row of a rows event whose header h was parsed from
// an event of type t, for table tbl. The Changes have Op, Table, Before
// and After set, Flags from h, and RowIndex counting from 0; the caller fills in
// positions, time and GTID.
//
//	# bytes          field
//	varint           column count
//	(n+7)/8          columns present in the before image (or the only image)
//	(n+7)/8          update events: columns present in the after image
//	rest             rows, each: image [, image] — compressed on MariaDB's
//	                 *_COMPRESSED_EVENT_V1 types
func (d *Decoder) Decode(t replication.EventType, h Header, tbl *tablemap.Table) ([]change.Change, error) {
	op, ok := Kind(t)
	if !ok {
		return nil, fmt.Errorf("rowevent: %v is not a rows event", t)
	}
	d.arena.reset()
	d.arena.lazyUTF8 = d.LazyUTF8
	d.huge = len(h.rest) >= bigbuf.Threshold
	d.changes = d.changes[:0]
	d.values = d.values[:0]

	data := h.rest
	n, ln := wire.LenEncInt(data)
	if ln == 0 {
		return nil, errors.New("rowevent: column count cut short")
	}
	if n != uint64(len(tbl.Columns)) {
		return nil, fmt.Errorf("rowevent: rows event has %d columns but the TABLE_MAP of %s.%s has %d",
			n, tbl.DB, tbl.Name, len(tbl.Columns))
	}
	data = data[ln:]
	cols := int(n)
	bm := (cols + 7) / 8
	present1 := data[:0]
	present2 := data[:0]
	if len(data) < bm {
		return nil, errors.New("rowevent: column bitmap cut short")
	}
	present1, data = data[:bm], data[bm:]
	if op == change.Update {
		if len(data) < bm {
			return nil, errors.New("rowevent: after-image column bitmap cut short")
		}
		present2, data = data[:bm], data[bm:]
	}
	if isCompressed(t) {
		var err error
		d.zbuf, err = decompressMariaDB(d.zbuf[:0], data)
		if err != nil {
			return nil, err
		}
		data = d.zbuf
	}

	partial := t == replication.PARTIAL_UPDATE_ROWS_EVENT
	for row := 0; len(data) > 0; row++ {
		c := change.Change{Op: op, Table: tbl, RowIndex: row, Flags: h.Flags}
		var img change.Row
		var used int
		var err error
		img, used, err = d.image(data, present1, tbl, false)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", row, err)
		}
		data = data[used:]
		if used == 0 && (op != change.Update || !anyBit(present2, len(tbl.Columns))) {
			// A row image with no column in it: servers never write one,
			// and without this check a damaged bitmap would make the loop
			// produce rows forever.
			return nil, fmt.Errorf("row %d: the column bitmap selects no column, %d bytes left", row, len(data))
		}
		switch op {
		case change.Insert:
			c.After = img
		case change.Delete:
			c.Before = img
		case change.Update:
			c.Before = img
			img, used, err = d.image(data, present2, tbl, partial)
			if err != nil {
				return nil, fmt.Errorf("row %d, after image: %w", row, err)
			}
			data = data[used:]
			c.After = img
		}
		d.changes = append(d.changes, c)
	}
	return d.changes, nil
}

// image decodes one row image: a NULL bitmap over the present columns,
// then each present, non-NULL value.
//
//	PARTIAL_UPDATE_ROWS_EVENT after images start with:
//	varint           value options (bit 0: PARTIAL_JSON_UPDATES)
//	(j+7)/8          if that bit is set: one bit per JSON column, set where
//	                 the value is a diff
func (d *Decoder) image(data, present []byte, tbl *tablemap.Table, partial bool) (change.Row, int, error) {
	start := len(data)
	if partial {
		opts, n := wire.LenEncInt(data)
		if n == 0 {
			return nil, 0, errors.New("value options cut short")
		}
		data = data[n:]
		if opts&1 != 0 {
			jsonCols := 0
			for i := range tbl.Columns {
				if tbl.Columns[i].Type == mysql.MYSQL_TYPE_JSON {
					jsonCols++
				}
			}
			pb := (jsonCols + 7) / 8
			if len(data) < pb {
				return nil, 0, errors.New("partial JSON bitmap cut short")
			}
			for _, b := range data[:pb] {
				if b != 0 {
					return nil, 0, fmt.Errorf("%w: a JSON column holds a diff; binlogcdc does not apply JSON diffs yet. "+
						"Fix: SET GLOBAL binlog_row_value_options = '' (full JSON values are logged from then on)", ErrPartialJSON)
				}
			}
			data = data[pb:]
		}
	}
	cols := len(tbl.Columns)
	count := 0
	for i := 0; i < len(present); i++ {
		count += bits.OnesCount8(present[i])
	}
	if last := cols % 8; last != 0 {
		// Ignore stray bits past the last column.
		count -= bits.OnesCount8(present[len(present)-1] &^ byte(1<<last-1))
	}
	nb := (count + 7) / 8
	if len(data) < nb {
		return nil, 0, errors.New("NULL bitmap cut short")
	}
	nulls := data[:nb]
	data = data[nb:]

	base := len(d.values)
	d.values = append(d.values, make([]change.Value, cols)...)
	row := change.Row(d.values[base : base+cols : base+cols])
	k := 0 // index among present columns
	for i := 0; i < cols; i++ {
		if present[i/8]&(1<<(i%8)) == 0 {
			continue // Absent: the zero Value
		}
		if nulls[k/8]&(1<<(k%8)) != 0 {
			row[i].PutNull()
			k++
			continue
		}
		k++
		col := &tbl.Columns[i]
		if n, ok := fastCell(&d.arena, data, col, &row[i]); ok {
			data = data[n:]
			continue
		}
		if isOldTemporal(col.Type) {
			return nil, 0, oldTemporalError(col)
		}
		v, n, err := decodeCell(&d.arena, data, col)
		if err != nil {
			return nil, 0, err
		}
		row[i] = v
		data = data[n:]
	}
	return row, start - len(data), nil
}

// isOldTemporal reports MariaDB's pre-10.1 temporal types (tables created
// with mysql56_temporal_format=OFF, or before MariaDB 10.1). Their
// fractional ("hires") variants are written with the same type code and
// no metadata, so the binlog does not say how many bytes a value takes:
// DATETIME(6) and DATETIME(0) are both 8 bytes, TIMESTAMP(n) takes 4 to 7.
// Guessing could shift every later cell, so such values are refused.
func isOldTemporal(t byte) bool {
	return t == mysql.MYSQL_TYPE_DATETIME || t == mysql.MYSQL_TYPE_TIME || t == mysql.MYSQL_TYPE_TIMESTAMP
}

func oldTemporalError(c *tablemap.Column) error {
	return &CellError{Column: c.Name, Type: c.Type, Err: fmt.Errorf("the binlog does not record the size of this pre-10.1 temporal value: %w", ErrOldHiresTemporal)}
}

// anyBit reports whether any of the first n bits of bm is set.
func anyBit(bm []byte, n int) bool {
	for i := 0; i < n; i++ {
		if bm[i/8]&(1<<(i%8)) != 0 {
			return true
		}
	}
	return false
}
