package envelope

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/jsontext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// maxwell writes Maxwell's Daemon's JSON rows. "xid" and "commit" are
// known only at the transaction's end, so records are left open for
// AppendTail.
type maxwell struct {
	query    bool // output_row_query: each row's "query"
	tables   map[*tablemap.Table]*mxTable
	file     string // the last position's file, and it JSON-escaped
	fileJSON []byte
	pieces
	// txRows: the open transaction has row records. One without (DDL
	// records only) closes them without "xid" and "commit", as Maxwell's
	// DDL records have neither.
	txRows bool
}

type mxTable struct {
	head []byte   // `{"database":…,"table":…`
	cols [][]byte // `"name":` per column
	pkc  []byte   // `,"primary_key_columns":[…]`
	key  []byte   // `{"database":…,"table":…`
	keyc [][]byte // `,"pk.name":` per key part
}

func (m *maxwell) table(t *tablemap.Table) *mxTable {
	if k, ok := m.tables[t]; ok {
		return k
	}
	if m.tables == nil || len(m.tables) > 4096 {
		m.tables = map[*tablemap.Table]*mxTable{}
	}
	k := &mxTable{}
	k.head = append(k.head, `{"database":`...)
	k.head = appendString(k.head, t.DB)
	k.head = append(k.head, `,"table":`...)
	k.head = appendString(k.head, t.Name)
	k.key = append(k.key, k.head...)
	for _, c := range t.Columns {
		k.cols = append(k.cols, append(appendString(nil, c.Name), ':'))
	}
	k.pkc = append(k.pkc, `,"primary_key_columns":[`...)
	for i, n := range t.PKNames {
		if i > 0 {
			k.pkc = append(k.pkc, ',')
		}
		k.pkc = appendString(k.pkc, n)
		k.keyc = append(k.keyc, append(appendString([]byte{','}, "pk."+strings.ToLower(n)), ':'))
	}
	k.pkc = append(k.pkc, ']')
	m.tables[t] = k
	return k
}

func (m *maxwell) NeedsTail() bool { return true }

// AppendTail writes "xid" (when an XID event committed the transaction)
// and "commit":true on the transaction's last row.
func (m *maxwell) AppendTail(b []byte, tx change.TxEnd, last bool) []byte {
	rows := m.txRows
	if last {
		m.txRows = false
	}
	if !rows {
		return append(b, '}')
	}
	if tx.Xid != 0 {
		b = append(b, `,"xid":`...)
		b = strconv.AppendUint(b, tx.Xid, 10)
	}
	if last {
		b = append(b, `,"commit":true`...)
	}
	return append(b, '}')
}

func (m *maxwell) AppendValue(b []byte, c *change.Change) ([]byte, error) {
	m.begin()
	b, err := m.appendValueRecord(b, c)
	if perr := m.end(); err == nil {
		err = perr
	}
	return b, err
}

func (m *maxwell) appendValueRecord(b []byte, c *change.Change) ([]byte, error) {
	if c.Op == change.DDL {
		return m.appendDDL(b, c), nil // mxddl.go
	}
	m.txRows = true
	k := m.table(c.Table)
	b = append(b, k.head...)
	if m.query && c.Query != "" {
		b = append(b, `,"query":`...)
		b = m.appendQuery(b, c.Query)
	}
	b = append(b, `,"type":"`...)
	if c.Op == change.Snapshot && c.Mark != 0 {
		return appendBootstrapMark(b, c), nil
	}
	if c.Op == change.Snapshot {
		b = append(b, "bootstrap-insert"...) // Maxwell's name for its bootstrap's rows
	} else {
		b = append(b, c.Op.String()...)
	}
	b = append(b, `","ts":`...)
	b = strconv.AppendInt(b, c.Time.Unix(), 10)
	b = append(b, `,"position":"`...)
	if c.Pos.File != m.file || m.fileJSON == nil {
		q := appendString(m.fileJSON[:0], c.Pos.File)
		m.file, m.fileJSON = c.Pos.File, append(q[:0], q[1:len(q)-1]...)
	}
	b = append(b, m.fileJSON...)
	b = append(b, ':')
	b = strconv.AppendUint(b, c.Pos.Offset, 10)
	b = append(b, `","gtid":`...)
	if c.GTID == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, c.GTID)
	}
	b = append(b, `,"server_id":`...)
	b = strconv.AppendUint(b, uint64(c.ServerID), 10)
	if len(c.Table.PrimaryKey) > 0 {
		b = append(b, `,"primary_key":[`...)
		for i, col := range c.Table.PrimaryKey {
			if i > 0 {
				b = append(b, ',')
			}
			b = m.appendValue(b, &c.Table.Columns[col], keyValue(c, col))
		}
		b = append(b, ']')
		b = append(b, k.pkc...)
	}
	b = append(b, `,"data":{`...)
	first := true
	row, other := c.After, c.Before
	if c.Op == change.Delete {
		row, other = c.Before, nil
	}
	for i := range c.Table.Columns {
		v := column(row, i)
		if v.IsAbsent() {
			// MINIMAL images: a before-image column absent from the
			// after image goes into data, as Maxwell does.
			v = column(other, i)
			if v.IsAbsent() {
				continue
			}
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, k.cols[i]...)
		b = m.appendValue(b, &c.Table.Columns[i], v)
	}
	b = append(b, '}')
	if c.Op == change.Update {
		// old: the previous values of the columns that changed. Maxwell
		// leaves it out when none did; it is always written here ({}),
		// because Flink's maxwell-json fails on an update without it.
		b = append(b, `,"old":{`...)
		n := 0
		for i := range c.Table.Columns {
			bv, ok := changed(c, i)
			if !ok {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, k.cols[i]...)
			b = m.appendValue(b, &c.Table.Columns[i], bv)
		}
		b = append(b, '}')
	}
	return b, nil
}

func column(row change.Row, i int) change.Value {
	if i < len(row) {
		return row[i]
	}
	return change.Value{}
}

// keyValue is the key column col of the row the change leaves (the row
// before it for deletes), from the before image when the after image
// lacks it.
func keyValue(c *change.Change, col int) change.Value {
	if c.Op == change.Delete {
		return column(c.Before, col)
	}
	v := column(c.After, col)
	if v.IsAbsent() {
		v = column(c.Before, col)
	}
	return v
}

// changed returns the value before an update of a column that both
// images carry and the update changed.
func changed(c *change.Change, i int) (change.Value, bool) {
	bv, av := column(c.Before, i), column(c.After, i)
	return bv, !bv.IsAbsent() && !av.IsAbsent() && !sameValue(bv, av)
}

func sameValue(a, b change.Value) bool {
	return a.Kind() == b.Kind() && a.Uint() == b.Uint() && bytes.Equal(a.Bytes(), b.Bytes())
}

// AppendKey writes Maxwell's "hash" key: {"database":…,"table":…,
// "pk.col":value,…}.
func (m *maxwell) AppendKey(b []byte, c *change.Change) ([]byte, bool) {
	if c.Op == change.DDL {
		// Maxwell keys a DDL record with a random UUID (DDLMap.pkToJson).
		return appendUUID(b), true
	}
	if c.Table == nil {
		return b, false
	}
	k := m.table(c.Table)
	b = append(b, k.key...)
	if len(c.Table.PrimaryKey) == 0 || c.Mark != 0 {
		// A table without a primary key (or a bootstrap-start/-complete
		// record, which has no row): Maxwell adds a random UUID, so that
		// its rows spread over the topic's partitions.
		b = append(b, `,"_uuid":"`...)
		b = appendUUID(b)
		return append(b, '"', '}'), true
	}
	for i, col := range c.Table.PrimaryKey {
		b = append(b, k.keyc[i]...)
		b = m.appendValue(b, &c.Table.Columns[col], keyValue(c, col))
	}
	return append(b, '}'), true
}

// AppendBeforeKey: none for a table without a primary key (its key is
// random: there is no old key to tombstone).
func (m *maxwell) AppendBeforeKey(b []byte, c *change.Change) ([]byte, bool) {
	if c.Table == nil || c.Before == nil || len(c.Table.PrimaryKey) == 0 {
		return b, false
	}
	k := m.table(c.Table)
	b = append(b, k.key...)
	for i, col := range c.Table.PrimaryKey {
		b = append(b, k.keyc[i]...)
		b = m.appendValue(b, &c.Table.Columns[col], column(c.Before, col))
	}
	return append(b, '}'), true
}

// appendValue writes a value as Maxwell does: numbers (DECIMAL and BIT
// too), temporal text, base64 for binary strings, JSON embedded, SET as
// an array of labels, geometry as WKT.
func (m *maxwell) appendValue(b []byte, col *tablemap.Column, v change.Value) []byte {
	if m.large(v) {
		switch v.Kind() {
		case change.Date, change.Datetime, change.Timestamp, change.Time, change.String, change.Enum:
			return m.str(b, v.Bytes())
		case change.Bytes:
			return m.base64(b, v.Bytes())
		case change.JSON:
			return m.raw(b, v.Bytes())
		}
	}
	if isMariaJSON(col, v) {
		return m.compactJSON(b, v.Bytes())
	}
	switch v.Kind() {
	case change.Null, change.Absent:
		return append(b, "null"...)
	case change.Int:
		return strconv.AppendInt(b, v.Int(), 10)
	case change.Uint:
		return strconv.AppendUint(b, v.Uint(), 10)
	case change.Float32:
		return appendFloat(b, float64(v.Float32()), 32)
	case change.Float64:
		return appendFloat(b, v.Float(), 64)
	case change.Decimal:
		return appendNumberText(b, v.Bytes())
	case change.Date, change.Datetime:
		return appendStringBytes(b, mxZeroDate(v.Bytes()))
	case change.Timestamp, change.Time, change.String, change.Enum:
		return appendStringBytes(b, v.Bytes())
	case change.Bytes:
		return appendBase64(b, m.unpad(col, v.Bytes()))
	case change.Set:
		return jsontext.AppendLabels(b, v.Bytes(), v.SetLostEmpty())
	case change.JSON:
		if len(v.Bytes()) == 0 {
			return append(b, "null"...)
		}
		return append(b, v.Bytes()...)
	case change.Geometry:
		b = append(b, '"')
		b, _ = appendWKT(b, v.Bytes(), 0)
		return append(b, '"')
	case change.Vector:
		return jsontext.AppendFloat32s(b, v.Bytes())
	}
	return append(b, "null"...)
}
