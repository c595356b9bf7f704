package envelope

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/jsontext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// debezium writes the change events of Debezium's MySQL connector: the
// value envelope {before, after, source, op, ts_ms, …} and the key
// struct of the primary key, as Kafka Connect's JsonConverter writes
// them (with Options.WithSchema, each inside {"schema":…,"payload":…}).
type debezium struct {
	opts    Options
	tables  map[*tablemap.Table]*dbzTable
	srcHead []byte // `"source":{"version":…,"connector":"mysql","name":…,"ts_ms":`
	big     big.Int
	err     error                     // a value the chosen modes cannot represent
	dbl     map[*tablemap.Column]bool // FLOAT(M,D) columns (dbzmodes.go)
	ddlVal  []byte                    // the schema change records' `{"schema":…,"payload":` (WithSchema; dbzddlschema.go)
	ddlKey  []byte
	pieces
}

type dbzTable struct {
	cols      [][]byte // `"name":` per column
	db        []byte   // `,"snapshot":"false","db":…,"sequence":null,"ts_us":`
	table     []byte   // `,"table":…,"server_id":`
	valSchema []byte   // `{"schema":…,"payload":` (WithSchema)
	keySchema []byte
}

func newDebezium(opts Options) *debezium {
	d := &debezium{opts: opts}
	d.srcHead = append(d.srcHead, `"source":{"version":`...)
	d.srcHead = appendString(d.srcHead, opts.Version)
	d.srcHead = append(d.srcHead, `,"connector":"mysql","name":`...)
	d.srcHead = appendString(d.srcHead, opts.Name)
	d.srcHead = append(d.srcHead, `,"ts_ms":`...)
	return d
}

func (d *debezium) table(t *tablemap.Table) *dbzTable {
	if k, ok := d.tables[t]; ok {
		return k
	}
	if d.tables == nil || len(d.tables) > 4096 {
		d.tables = map[*tablemap.Table]*dbzTable{}
		d.dbl = map[*tablemap.Column]bool{}
	}
	for i := range t.Columns {
		if c := &t.Columns[i]; c.Type == mysql.MYSQL_TYPE_FLOAT && d.floatDouble(t, c) {
			d.dbl[c] = true
		}
	}
	k := &dbzTable{}
	for _, c := range t.Columns {
		k.cols = append(k.cols, append(appendString(nil, c.Name), ':'))
	}
	k.db = append(k.db, `,"snapshot":"false","db":`...)
	k.db = appendString(k.db, t.DB)
	k.db = append(k.db, `,"sequence":null,"ts_us":`...)
	k.table = append(k.table, `,"table":`...)
	k.table = appendString(k.table, t.Name)
	k.table = append(k.table, `,"server_id":`...)
	if d.opts.WithSchema {
		k.valSchema = append(d.envelopeSchema([]byte(`{"schema":`), t), `,"payload":`...)
		k.keySchema = append(d.keySchema([]byte(`{"schema":`), t), `,"payload":`...)
	}
	d.tables[t] = k
	return k
}

// SplitKeyChange: Debezium publishes an update of the primary key as a
// delete of the old row (with its tombstone) and a create of the new.
func (d *debezium) SplitKeyChange(c *change.Change) (del, ins change.Change, ok bool) {
	return splitKeyChange(c)
}

func (d *debezium) NeedsTail() bool                                    { return false }
func (d *debezium) AppendTail(b []byte, _ change.TxEnd, _ bool) []byte { return b }

func (d *debezium) AppendValue(b []byte, c *change.Change) ([]byte, error) {
	d.begin()
	b, err := d.appendValueRecord(b, c)
	if perr := d.end(); err == nil {
		err = perr
	}
	return b, err
}

func (d *debezium) appendValueRecord(b []byte, c *change.Change) ([]byte, error) {
	if c.Op == change.DDL {
		if !d.opts.WithSchema {
			return d.appendSchemaChange(b, c), nil // dbzddl.go
		}
		val, _ := d.ddlSchemas()
		return append(d.appendSchemaChange(append(b, val...), c), '}'), nil
	}
	if err := checkFull("debezium", c, c.Before); c.Before != nil && err != nil {
		return b, err
	}
	if err := checkFull("debezium", c, c.After); c.After != nil && err != nil {
		return b, err
	}
	k := d.table(c.Table)
	if d.opts.WithSchema {
		b = append(b, k.valSchema...)
	}
	b = append(b, `{"before":`...)
	b = d.appendRow(b, k, c.Table, c.Before)
	b = append(b, `,"after":`...)
	b = d.appendRow(b, k, c.Table, c.After)
	b = append(b, ',')
	b = append(b, d.srcHead...)
	us := c.Time.UnixMicro()
	b = strconv.AppendInt(b, floorDiv(us, 1000), 10)
	if c.Op == change.Snapshot { // a snapshot row: Debezium's op "r", and source.snapshot
		b = append(b, `,"snapshot":`...)
		b = append(b, dbzSnapshot(c.Place)...)
		b = append(b, k.db[len(`,"snapshot":"false"`):]...)
	} else {
		b = append(b, k.db...)
	}
	b = strconv.AppendInt(b, us, 10)
	b = append(b, `,"ts_ns":`...)
	b = strconv.AppendInt(b, us*1000, 10)
	b = append(b, k.table...)
	b = strconv.AppendUint(b, uint64(c.ServerID), 10)
	b = append(b, `,"gtid":`...)
	if c.GTID == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, c.GTID)
	}
	b = append(b, `,"file":`...)
	b = appendString(b, c.Pos.File)
	b = append(b, `,"pos":`...)
	b = strconv.AppendUint(b, c.Pos.Offset, 10)
	b = append(b, `,"row":`...)
	b = strconv.AppendInt(b, int64(c.RowIndex), 10)
	b = append(b, `,"thread":null,"query":null},"op":"`...)
	switch c.Op {
	case change.Insert:
		b = append(b, 'c')
	case change.Snapshot:
		b = append(b, 'r')
	case change.Update:
		b = append(b, 'u')
	default:
		b = append(b, 'd')
	}
	now := d.opts.Now().UnixNano()
	b = append(b, `","ts_ms":`...)
	b = strconv.AppendInt(b, now/1e6, 10)
	b = append(b, `,"ts_us":`...)
	b = strconv.AppendInt(b, now/1e3, 10)
	b = append(b, `,"ts_ns":`...)
	b = strconv.AppendInt(b, now, 10)
	b = append(b, `,"transaction":null}`...)
	if d.opts.WithSchema {
		b = append(b, '}')
	}
	if err := d.err; err != nil {
		d.err = nil
		return b, fmt.Errorf("%s:%d (row %d): table %s.%s: %w", c.Pos.File, c.Pos.Offset, c.RowIndex, c.Table.DB, c.Table.Name, err)
	}
	return b, nil
}

func (d *debezium) appendRow(b []byte, k *dbzTable, t *tablemap.Table, row change.Row) []byte {
	if row == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	for i := range t.Columns {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, k.cols[i]...)
		b = d.appendValue(b, &t.Columns[i], row[i])
	}
	return append(b, '}')
}

// AppendKey writes the primary key struct {"col":value,…}; tables
// without a primary key have a null key, as in Debezium.
func (d *debezium) AppendKey(b []byte, c *change.Change) ([]byte, bool) {
	if c.Op == change.DDL { // SchemaChangeKey
		db := c.DB
		if len(c.Schema) > 0 {
			db = c.Schema[0].DB
		}
		if d.opts.WithSchema {
			_, key := d.ddlSchemas()
			b = append(b, key...)
		}
		b = append(b, `{"databaseName":`...)
		b = append(appendString(b, db), '}')
		if d.opts.WithSchema {
			b = append(b, '}')
		}
		return b, true
	}
	if c.After != nil {
		return d.appendKey(b, c, c.After, c.Before)
	}
	return d.appendKey(b, c, c.Before, nil)
}

func (d *debezium) AppendBeforeKey(b []byte, c *change.Change) ([]byte, bool) {
	return d.appendKey(b, c, c.Before, nil)
}

func (d *debezium) appendKey(b []byte, c *change.Change, row, fallback change.Row) ([]byte, bool) {
	t := c.Table
	if t == nil || len(t.PrimaryKey) == 0 || row == nil {
		return b, false
	}
	k := d.table(t)
	if d.opts.WithSchema {
		b = append(b, k.keySchema...)
	}
	b = append(b, '{')
	for i, col := range t.PrimaryKey {
		if i > 0 {
			b = append(b, ',')
		}
		v := row[col]
		if v.IsAbsent() && fallback != nil {
			v = fallback[col]
		}
		b = append(b, k.cols[col]...)
		b = d.appendValue(b, &t.Columns[col], v)
	}
	b = append(b, '}')
	if d.opts.WithSchema {
		b = append(b, '}')
	}
	return b, true
}

// appendValue writes one column value with Debezium's default encoding
// for its MySQL type (and the chosen decimal, time and bigint modes).
func (d *debezium) appendValue(b []byte, col *tablemap.Column, v change.Value) []byte {
	if d.large(v) {
		switch v.Kind() {
		case change.String, change.Enum, change.Set, change.JSON:
			return d.str(b, v.Bytes())
		case change.Bytes:
			return d.appendBinary(b, v.Bytes())
		}
	}
	switch v.Kind() {
	case change.Null, change.Absent:
		return append(b, "null"...)
	case change.Int:
		if col.Type == mysql.MYSQL_TYPE_YEAR && v.Int() == 0 {
			// Debezium's binlog reader reads YEAR as 1900 + the stored
			// byte: the zero year 0000 is 1900 (snapshot rows too, so
			// that a row reads the same from either).
			return append(b, "1900"...)
		}
		return strconv.AppendInt(b, v.Int(), 10)
	case change.Uint:
		if col.Type == mysql.MYSQL_TYPE_BIT {
			if col.Bits <= 1 {
				if v.Uint() != 0 {
					return append(b, "true"...)
				}
				return append(b, "false"...)
			}
			// io.debezium.data.Bits: little-endian, ceil(n/8) bytes.
			var le [8]byte
			binary.LittleEndian.PutUint64(le[:], v.Uint())
			return appendBase64(b, le[:(col.Bits+7)/8])
		}
		if col.Type == mysql.MYSQL_TYPE_LONGLONG && d.opts.BigintUnsignedHandlingMode == BigintPrecise {
			var be [9]byte
			binary.BigEndian.PutUint64(be[1:], v.Uint())
			return appendBase64(b, minimalTwos(be[:]))
		}
		if col.Type == mysql.MYSQL_TYPE_LONGLONG {
			return strconv.AppendInt(b, int64(v.Uint()), 10) // long mode: wraps, as in Debezium
		}
		return strconv.AppendUint(b, v.Uint(), 10)
	case change.Float32:
		if d.dbl[col] { // FLOAT(M,D): the float's value as a double
			return appendFloat(b, float64(v.Float32()), 64)
		}
		return appendFloat(b, float64(v.Float32()), 32)
	case change.Float64:
		return appendFloat(b, v.Float(), 64)
	case change.Decimal:
		switch d.opts.DecimalHandlingMode {
		case DecimalString:
			return appendStringBytes(b, v.Bytes())
		case DecimalDouble:
			f, err := strconv.ParseFloat(string(v.Bytes()), 64)
			if err != nil {
				return append(b, "null"...)
			}
			return appendFloat(b, f, 64)
		}
		return d.appendDecimalBytes(b, v.Bytes())
	case change.Date:
		if d.opts.TimePrecisionMode == TimeIsoString {
			return d.appendIsoDate(b, col, v.Bytes())
		}
		y, m, dd, ok := parseDate(v.Bytes())
		if !ok {
			return zeroTemporal(b, col, "0")
		}
		return strconv.AppendInt(b, daysFromCivil(d.adjustYear(y), m, dd), 10)
	case change.Datetime:
		if d.opts.TimePrecisionMode == TimeIsoString {
			return d.appendIsoDatetime(b, col, v.Bytes())
		}
		us, ok := d.adjustedDatetime(v.Bytes())
		if !ok {
			return zeroTemporal(b, col, "0")
		}
		if d.opts.TimePrecisionMode == TimeConnect || col.FSP <= 3 {
			return strconv.AppendInt(b, floorDiv(us, 1000), 10)
		}
		return strconv.AppendInt(b, us, 10)
	case change.Timestamp:
		s := v.Bytes()
		if len(s) < 19 || s[0] == '0' && string(s[:4]) == "0000" {
			return zeroTemporal(b, col, `"1970-01-01T00:00:00Z"`)
		}
		b = append(b, '"')
		b = append(b, s[:10]...)
		b = append(b, 'T')
		b = append(b, s[11:]...)
		return append(b, 'Z', '"')
	case change.Time:
		if d.opts.TimePrecisionMode == TimeIsoString {
			return d.appendIsoTime(b, col, v)
		}
		us, ok := parseTime(v.Bytes())
		if !ok {
			return append(b, "null"...)
		}
		if d.opts.TimePrecisionMode == TimeConnect {
			if us < 0 || us >= 86400e6 {
				// Kafka Connect's Time holds a time of day only.
				if d.err == nil {
					d.err = fmt.Errorf("column %s: TIME %s is outside Kafka Connect's Time (00:00:00 to 23:59:59.999), which --debezium-time-precision-mode=connect writes\n"+
						"hint: use --debezium-time-precision-mode=adaptive_time_microseconds (microseconds, any TIME)", col.Name, v.Bytes())
				}
				return append(b, "null"...)
			}
			return strconv.AppendInt(b, floorDiv(us, 1000), 10)
		}
		return strconv.AppendInt(b, us, 10)
	case change.String, change.Enum:
		return appendStringBytes(b, v.Bytes()) // the ENUM error value is ""
	case change.Set:
		return appendStringBytes(b, v.SetText()) // a member '' too, as Debezium joins them
	case change.Bytes:
		return d.appendBinary(b, v.Bytes())
	case change.JSON:
		if len(v.Bytes()) == 0 {
			if col.Nullable {
				return append(b, "null"...)
			}
			return append(b, `"{}"`...)
		}
		return appendStringBytes(b, v.Bytes())
	case change.Geometry:
		wkb := v.Bytes()
		b = append(b, '{')
		if col.GeometryType == 1 { // POINT: io.debezium.data.geometry.Point
			if x, y, ok := wkbPoint(wkb); ok {
				b = append(b, `"x":`...)
				b = appendFloat(b, x, 64)
				b = append(b, `,"y":`...)
				b = appendFloat(b, y, 64)
				b = append(b, ',')
			}
		}
		b = append(b, `"wkb":`...)
		b = appendBase64(b, wkb)
		b = append(b, `,"srid":`...)
		if v.Uint() == 0 {
			b = append(b, "null"...) // unset, as Debezium writes it
		} else {
			b = strconv.AppendUint(b, v.Uint(), 10)
		}
		return append(b, '}')
	case change.Vector:
		return jsontext.AppendFloat32s(b, v.Bytes())
	}
	return append(b, "null"...)
}

// zeroTemporal is what Debezium writes for a zero date: null when the
// column is nullable, else the epoch.
func zeroTemporal(b []byte, col *tablemap.Column, epoch string) []byte {
	if col.Nullable {
		return append(b, "null"...)
	}
	return append(b, epoch...)
}

// appendDecimalBytes writes DECIMAL text as Kafka Connect's Decimal:
// the base64 of the unscaled value's big-endian two's complement, in as
// few bytes as Java's BigInteger.toByteArray uses.
func (d *debezium) appendDecimalBytes(b []byte, s []byte) []byte {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	var n uint64
	small := true
	nd := 0
	for _, c := range s {
		if c == '.' {
			continue
		}
		nd++
		if nd > 18 {
			small = false
			break
		}
		n = n*10 + uint64(c-'0')
	}
	var buf [32]byte
	if small {
		x := int64(n)
		if neg {
			x = -x
		}
		binary.BigEndian.PutUint64(buf[:8], uint64(x))
		return appendBase64(b, minimalTwos(buf[:8]))
	}
	digits := make([]byte, 0, len(s))
	for _, c := range s {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	x := &d.big
	x.SetString(string(digits), 10)
	// two's complement of a magnitude: big-endian bytes with a sign byte.
	mag := x.FillBytes(buf[1:])
	if len(mag) != 31 {
		return append(b, "null"...)
	}
	if neg {
		for i := range buf {
			buf[i] = ^buf[i]
		}
		for i := len(buf) - 1; i >= 0; i-- {
			buf[i]++
			if buf[i] != 0 {
				break
			}
		}
	}
	return appendBase64(b, minimalTwos(buf[:]))
}

// minimalTwos drops the leading bytes of a big-endian two's complement
// number that only repeat the sign.
func minimalTwos(be []byte) []byte {
	for len(be) > 1 && (be[0] == 0 && be[1]&0x80 == 0 || be[0] == 0xff && be[1]&0x80 != 0) {
		be = be[1:]
	}
	return be
}

// wkbPoint reads the coordinates of a WKB POINT.
func wkbPoint(wkb []byte) (x, y float64, ok bool) {
	if len(wkb) < 21 {
		return 0, 0, false
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if wkb[0] == 0 {
		bo = binary.BigEndian
	}
	if bo.Uint32(wkb[1:]) != 1 {
		return 0, 0, false
	}
	return math.Float64frombits(bo.Uint64(wkb[5:])), math.Float64frombits(bo.Uint64(wkb[13:])), true
}

// dbzSnapshot is source.snapshot of a snapshot row, as Debezium marks its
// snapshot records, in this order of precedence: the snapshot's last row
// "last", its first "first", a table's last row "last_in_data_collection",
// a table's first "first_in_data_collection"; every other row "true", and
// an incremental snapshot's rows "incremental".
func dbzSnapshot(place uint8) string {
	const last = change.PlaceLastInTable | change.PlaceLastTable
	const first = change.PlaceFirstInTable | change.PlaceFirstTable
	switch {
	case place&change.PlaceIncremental != 0:
		return `"incremental"`
	case place&last == last:
		return `"last"`
	case place&first == first:
		return `"first"`
	case place&change.PlaceLastInTable != 0:
		return `"last_in_data_collection"`
	case place&change.PlaceFirstInTable != 0:
		return `"first_in_data_collection"`
	}
	return `"true"`
}
