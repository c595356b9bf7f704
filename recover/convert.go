package recovery

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// converter moves row images written under an earlier schema of the
// incarnation to its final schema (the last TABLE_MAP), the way the ALTER
// TABLE statements between them moved the stored rows: columns follow
// their renames (CHANGE, RENAME COLUMN), dropped columns go, and added
// columns get the DEFAULT literal of their ADD clause — or, without one,
// NULL for a nullable column and the type's implicit default otherwise,
// as the server does. A column whose value cannot be known that way (an
// expression DEFAULT, a column of unknown origin) gets the same fallback
// and is reported in Notes.
type converter struct {
	final    *tablemap.Table // with the output name
	finalPos change.Position
	alters   []alterEvent
	cache    map[convKey]*mapping
	notes    map[string]uint64 // note → rows
}

type convKey struct {
	from  *tablemap.Table
	first int // index of the first alter after the row
}

// mapping says where each final column comes from.
type mapping struct {
	identity bool
	src      []int          // index in the event-time row, or -1
	fill     []change.Value // when src is -1
	note     []string       // when src is -1 and the value is a guess
}

func newConverter(final *tablemap.Table, finalPos change.Position, alters []alterEvent) *converter {
	return &converter{final: final, finalPos: finalPos, alters: alters, cache: map[convKey]*mapping{}, notes: map[string]uint64{}}
}

// convert returns c's images in the final schema. The returned change
// has Table = the final table.
func (cv *converter) convert(c *change.Change) (change.Change, error) {
	first := sort.Search(len(cv.alters), func(i int) bool { return before(c.Pos, cv.alters[i].ev.Pos) })
	k := convKey{c.Table, first}
	m := cv.cache[k]
	if m == nil {
		m = cv.build(c.Table, first)
		cv.cache[k] = m
	}
	out := *c
	out.Table = cv.final
	if m.identity {
		return out, nil
	}
	out.Before = cv.apply(m, c.Before, false)
	out.After = cv.apply(m, c.After, c.Op == change.Insert)
	return out, nil
}

func (cv *converter) apply(m *mapping, row change.Row, count bool) change.Row {
	if row == nil {
		return nil
	}
	out := make(change.Row, len(m.src))
	for j, i := range m.src {
		if i >= 0 {
			if i < len(row) {
				out[j] = row[i]
			}
			continue
		}
		out[j] = m.fill[j]
		if count && m.note[j] != "" {
			cv.notes[m.note[j]]++
		}
	}
	return out
}

type origin struct {
	idx     int // in the event-time table; -1: added by an ALTER
	add     *colOp
	alterAt change.Position
}

func (cv *converter) build(from *tablemap.Table, first int) *mapping {
	cur := map[string]origin{}
	for i := range from.Columns {
		cur[strings.ToLower(from.Columns[i].Name)] = origin{idx: i}
	}
	applied := 0
	for _, a := range cv.alters[first:] {
		if !before(a.ev.Pos, cv.finalPos) {
			break
		}
		applied++
		for k := range a.info.ops {
			op := &a.info.ops[k]
			name := strings.ToLower(op.Name)
			switch op.Kind {
			case opRename:
				if o, ok := cur[name]; ok {
					delete(cur, name)
					cur[strings.ToLower(op.to)] = o
				}
			case opDrop:
				delete(cur, name)
			case opAdd:
				cur[name] = origin{idx: -1, add: op, alterAt: a.ev.Pos}
			}
		}
	}
	n := len(cv.final.Columns)
	m := &mapping{src: make([]int, n), fill: make([]change.Value, n), note: make([]string, n)}
	m.identity = applied == 0 && len(from.Columns) == n
	for j := range cv.final.Columns {
		fc := &cv.final.Columns[j]
		o, ok := cur[strings.ToLower(fc.Name)]
		switch {
		case ok && o.idx >= 0:
			m.src[j] = o.idx
			if o.idx != j || !strings.EqualFold(from.Columns[o.idx].Name, fc.Name) {
				m.identity = false
			}
		case ok:
			m.src[j] = -1
			m.fill[j], m.note[j] = fillValue(fc, o.add, o.alterAt)
			m.identity = false
		default:
			m.src[j] = -1
			v, _ := fillValue(fc, nil, change.Position{})
			m.fill[j] = v
			m.note[j] = fmt.Sprintf("column %s is not in the rows written before it appeared (no ALTER TABLE that added it was recognised): they get %s",
				tablemap.QuoteIdent(fc.Name), describeFill(v))
			m.identity = false
		}
	}
	return m
}

// fillValue is the value a column added by ALTER TABLE (op; nil: unknown)
// has in the rows that existed before it, and a note when it is a guess.
func fillValue(c *tablemap.Column, op *colOp, at change.Position) (change.Value, string) {
	where := fmt.Sprintf("the ALTER TABLE at %s:%d", at.File, at.Offset)
	if op != nil && op.def != nil {
		l := op.def
		switch {
		case l.null:
			return change.NullValue(), ""
		case l.number != "":
			if _, err := strconv.ParseFloat(l.number, 64); err == nil && !strings.ContainsAny(l.number, "eE") {
				return change.TextValue(change.Decimal, []byte(strings.TrimPrefix(l.number, "+"))), ""
			}
			f, _ := strconv.ParseFloat(l.number, 64)
			return change.Float64Value(f), ""
		default:
			return change.TextValue(change.String, []byte(l.Text)), ""
		}
	}
	v := implicitDefault(c)
	if op != nil && !op.defExpr {
		// No DEFAULT clause: the server uses exactly this.
		return v, ""
	}
	if op != nil {
		return v, fmt.Sprintf("column %s was added by %s with a DEFAULT expression binlogcdc cannot evaluate: the rows written before it get %s",
			tablemap.QuoteIdent(c.Name), where, describeFill(v))
	}
	return v, ""
}

func describeFill(v change.Value) string {
	if v.IsNull() {
		return "NULL"
	}
	return "'" + string(v.Bytes()) + "'"
}

// implicitDefault is the value a column without a DEFAULT gets: NULL when
// nullable, else the type's implicit default.
func implicitDefault(c *tablemap.Column) change.Value {
	if c.Nullable {
		return change.NullValue()
	}
	switch c.Type {
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24, mysql.MYSQL_TYPE_LONG,
		mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_YEAR:
		if c.Unsigned && c.Type != mysql.MYSQL_TYPE_YEAR {
			return change.UintValue(0)
		}
		return change.IntValue(0)
	case mysql.MYSQL_TYPE_BIT:
		return change.UintValue(0)
	case mysql.MYSQL_TYPE_FLOAT:
		return change.Float32Value(0)
	case mysql.MYSQL_TYPE_DOUBLE:
		return change.Float64Value(0)
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		z := "0"
		if c.Scale > 0 {
			z += "." + strings.Repeat("0", c.Scale)
		}
		return change.TextValue(change.Decimal, []byte(z))
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		return change.TextValue(change.Date, []byte("0000-00-00"))
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		return change.TextValue(change.Datetime, []byte("0000-00-00 00:00:00"+fraction(c.FSP)))
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		return change.TimestampValue(0, []byte("0000-00-00 00:00:00"+fraction(c.FSP)))
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		return change.TextValue(change.Time, []byte("00:00:00"+fraction(c.FSP)))
	case mysql.MYSQL_TYPE_ENUM:
		if len(c.EnumValues) > 0 {
			return change.EnumValue(1, []byte(c.EnumValues[0]))
		}
	case mysql.MYSQL_TYPE_SET:
		return change.SetValue(0, nil)
	case mysql.MYSQL_TYPE_JSON:
		return change.TextValue(change.JSON, []byte("null"))
	case mysql.MYSQL_TYPE_STRING:
		if c.IsBinary() {
			return change.TextValue(change.Bytes, make([]byte, c.Length))
		}
		return change.TextValue(change.String, []byte{})
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_BLOB:
		if c.IsBinary() {
			return change.TextValue(change.Bytes, []byte{})
		}
		return change.TextValue(change.String, []byte{})
	}
	return change.NullValue()
}

func fraction(fsp int) string {
	if fsp == 0 {
		return ""
	}
	return "." + strings.Repeat("0", fsp)
}

// sameColumns reports whether two TABLE_MAPs describe the same columns.
func sameColumns(a, b *tablemap.Table) bool {
	if len(a.Columns) != len(b.Columns) {
		return false
	}
	for i := range a.Columns {
		x, y := &a.Columns[i], &b.Columns[i]
		if x.Name != y.Name || x.Type != y.Type || x.Meta != y.Meta || x.Length != y.Length || x.Unsigned != y.Unsigned ||
			x.Nullable != y.Nullable || x.Collation != y.Collation || x.Precision != y.Precision || x.Scale != y.Scale ||
			x.FSP != y.FSP || x.Bits != y.Bits || x.GeometryType != y.GeometryType ||
			strings.Join(x.EnumValues, "\x00") != strings.Join(y.EnumValues, "\x00") ||
			strings.Join(x.SetValues, "\x00") != strings.Join(y.SetValues, "\x00") {
			return false
		}
	}
	return true
}
