package jsonl

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/internal/jsontext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// encoder appends JSON lines. It caches each table's pre-encoded column
// keys and header, so a row costs only its values.
type encoder struct {
	keys map[*tablemap.Table]*tableKeys

	// The last "ts" and "pos.file" encoded: rows of a transaction share
	// them, and transactions mostly share a file and often a second.
	ts     time.Time
	tsMic  bool
	tsText []byte
	file   string
	fileJS []byte
	// The last "pos.offset" with the keys around it: the rows of one
	// rows event, and all of a snapshot's, share it.
	offset   uint64
	offsetJS []byte // `,"offset":N,"row":`
}

type tableKeys struct {
	head []byte   // `"db":…,"table":…,"pk":[…]`
	cols [][]byte // `"name":` per column
}

func (e *encoder) tableKeys(t *tablemap.Table) *tableKeys {
	if k, ok := e.keys[t]; ok {
		return k
	}
	if e.keys == nil || len(e.keys) > 4096 {
		e.keys = map[*tablemap.Table]*tableKeys{}
	}
	k := &tableKeys{}
	k.head = append(k.head, `"db":`...)
	k.head = appendString(k.head, t.DB)
	k.head = append(k.head, `,"table":`...)
	k.head = appendString(k.head, t.Name)
	k.head = append(k.head, `,"pk":[`...)
	for i, n := range t.PKNames {
		if i > 0 {
			k.head = append(k.head, ',')
		}
		k.head = appendString(k.head, n)
	}
	k.head = append(k.head, ']')
	for _, c := range t.Columns {
		b := appendString(nil, c.Name)
		k.cols = append(k.cols, append(b, ':'))
	}
	e.keys[t] = k
	return k
}

// appendChange appends one JSON line (with its newline) for c.
func (e *encoder) appendChange(b []byte, c *change.Change) []byte {
	b = append(b, `{"op":"`...)
	b = append(b, c.Op.String()...)
	b = append(b, '"', ',')
	if c.Op == change.DDL {
		b = append(b, `"db":`...)
		b = appendString(b, c.DB)
		b = append(b, `,"sql":`...)
		b = appendString(b, c.SQL)
		b = appendTouches(b, c.Touches)
	} else {
		k := e.tableKeys(c.Table)
		b = append(b, k.head...)
		if c.Before != nil {
			b = append(b, `,"before":`...)
			b = appendRow(b, k, c.Table, c.Before)
		}
		if c.After != nil {
			b = append(b, `,"after":`...)
			b = appendRow(b, k, c.Table, c.After)
		}
	}
	b = append(b, `,"ts":"`...)
	if !c.Time.Equal(e.ts) || c.TimeMicro != e.tsMic || e.tsText == nil {
		e.ts, e.tsMic = c.Time, c.TimeMicro
		e.tsText = appendTime(e.tsText[:0], c.Time, c.TimeMicro)
	}
	b = append(b, e.tsText...)
	b = append(b, `","pos":{"file":`...)
	if c.Pos.File != e.file || e.fileJS == nil {
		e.file = c.Pos.File
		e.fileJS = appendString(e.fileJS[:0], c.Pos.File)
	}
	b = append(b, e.fileJS...)
	if c.Pos.Offset != e.offset || e.offsetJS == nil {
		e.offset = c.Pos.Offset
		e.offsetJS = append(strconv.AppendUint(append(e.offsetJS[:0], `,"offset":`...), c.Pos.Offset, 10), `,"row":`...)
	}
	b = append(b, e.offsetJS...)
	b = strconv.AppendInt(b, int64(c.RowIndex), 10)
	b = append(b, '}')
	if c.GTID != "" {
		b = append(b, `,"gtid":`...)
		b = appendString(b, c.GTID)
	}
	return append(b, '}', '\n')
}

// appendTouches appends what a DDL statement is about: "kind", and
// "tables" (each {"db","table"}) or "databases".
func appendTouches(b []byte, t *change.Touches) []byte {
	if t == nil {
		return b
	}
	b = append(b, `,"kind":`...)
	b = appendString(b, t.Kind)
	if t.Kind == "table" {
		b = append(b, `,"tables":[`...)
		for i, n := range t.Tables {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"db":`...)
			b = appendString(b, n.DB)
			b = append(b, `,"table":`...)
			b = appendString(b, n.Table)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if len(t.DBs) > 0 {
		b = append(b, `,"databases":[`...)
		for i, d := range t.DBs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, d)
		}
		b = append(b, ']')
	}
	return b
}

func appendTime(b []byte, t time.Time, micro bool) []byte {
	t = t.UTC()
	if micro {
		return t.AppendFormat(b, "2006-01-02T15:04:05.000000Z07:00")
	}
	return t.AppendFormat(b, time.RFC3339)
}

func appendRow(b []byte, k *tableKeys, t *tablemap.Table, row change.Row) []byte {
	b = append(b, '{')
	first := true
	for i := range row {
		v := &row[i]
		if kind, _, _ := v.Parts(); kind == change.Absent {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, k.cols[i]...)
		b = appendValue(b, v)
	}
	return append(b, '}')
}

// appendValue appends the JSON encoding of one value (see the README's
// JSON contract).
func appendValue(b []byte, v *change.Value) []byte {
	kind, num, text := v.Parts()
	switch kind {
	case change.Null, change.Absent:
		return append(b, "null"...)
	case change.Int:
		return strconv.AppendInt(b, int64(num), 10)
	case change.Uint:
		return strconv.AppendUint(b, num, 10)
	case change.Float32:
		return appendFloat(b, float64(v.Float32()), 32)
	case change.Float64:
		return appendFloat(b, v.Float(), 64)
	case change.Enum:
		if num == 0 {
			return append(b, '0') // the error value, not the member ''
		}
		return appendStringBytes(b, text)
	case change.String:
		if coll, ok := v.UncheckedUTF8(); ok {
			return appendUnchecked(b, text, coll)
		}
		return appendStringBytes(b, text)
	case change.Decimal, change.Date, change.Datetime, change.Timestamp, change.Time:
		return appendStringBytes(b, text)
	case change.Bytes:
		return appendBase64(b, text)
	case change.Set:
		return jsontext.AppendLabels(b, text, v.SetLostEmpty())
	case change.JSON:
		if len(text) == 0 {
			return append(b, "null"...)
		}
		return append(b, text...)
	case change.Geometry:
		b = append(b, `{"srid":`...)
		b = strconv.AppendUint(b, num, 10)
		b = append(b, `,"wkb":`...)
		b = appendBase64(b, text)
		return append(b, '}')
	case change.Vector:
		return jsontext.AppendFloat32s(b, text)
	}
	return append(b, "null"...)
}

// appendUnchecked appends text that the decoder did not check to be
// UTF-8 (change.UncheckedText): checked here as it is escaped, and where
// it is not valid, made valid as the decoder would have (charset.Decode).
func appendUnchecked(b []byte, text []byte, collation uint32) []byte {
	if out, ok := jsontext.AppendValidString(b, text); ok {
		return out
	}
	return jsontext.AppendString(b, validText(text, collation))
}

// validText is text as the decoder would have made it had it checked it:
// itself when it is valid UTF-8, else what charset.Decode makes of it.
func validText(text []byte, collation uint32) []byte {
	if utf8.Valid(text) {
		return text
	}
	valid, err := charset.Decode(nil, collation, text)
	if err != nil { // cannot happen: the decoder knew the collation
		valid = []byte(strings.ToValidUTF8(string(text), "\uFFFD"))
	}
	return valid
}

func appendFloat(b []byte, f float64, bits int) []byte { return jsontext.AppendFloat(b, f, bits) }

func appendBase64(b []byte, src []byte) []byte { return jsontext.AppendBase64(b, src) }

func appendString(b []byte, s string) []byte { return jsontext.AppendStringOf(b, s) }

func appendStringBytes(b []byte, s []byte) []byte { return jsontext.AppendString(b, s) }

// Encoder encodes changes as the JSON objects of the line contract (see
// the README), for sinks that carry one object per message instead of one
// per line. The zero value is ready to use; an Encoder is not safe for
// concurrent use.
type Encoder struct{ enc encoder }

// AppendChange appends c's JSON object, exactly as a line of the JSON
// lines output but without the trailing newline.
func (e *Encoder) AppendChange(dst []byte, c *change.Change) []byte {
	b := e.enc.appendChange(dst, c)
	return b[:len(b)-1]
}

// AppendKey appends the values of c's primary key as a JSON array in key
// order (the order of "pk"), encoded like the values of "before"/"after":
// the row after the change for inserts and updates, the row before it for
// deletes. A key column absent from the after image (binlog_row_image
// MINIMAL: the key did not change) is taken from the before image. It
// returns dst and false when c is DDL or its table has no primary key.
func (e *Encoder) AppendKey(dst []byte, c *change.Change) ([]byte, bool) {
	if c.After != nil {
		return appendKey(dst, c.Table, c.After, c.Before)
	}
	return appendKey(dst, c.Table, c.Before, nil)
}

// AppendBeforeKey is AppendKey for the row before the change (updates and
// deletes): with AppendKey, it tells an UPDATE that moved a row to
// another key.
func (e *Encoder) AppendBeforeKey(dst []byte, c *change.Change) ([]byte, bool) {
	return appendKey(dst, c.Table, c.Before, nil)
}

func appendKey(b []byte, t *tablemap.Table, row, fallback change.Row) ([]byte, bool) {
	if t == nil || len(t.PrimaryKey) == 0 || row == nil {
		return b, false
	}
	b = append(b, '[')
	for i, col := range t.PrimaryKey {
		if i > 0 {
			b = append(b, ',')
		}
		var v change.Value // Absent: encoded as null
		if col < len(row) {
			v = row[col]
		}
		if v.IsAbsent() && col < len(fallback) {
			v = fallback[col]
		}
		b = appendValue(b, &v)
	}
	return append(b, ']'), true
}
