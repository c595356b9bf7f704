package recovery

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/sqllex"
	"github.com/binlogcdc/binlogcdc/schemahist"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// converter moves row images written under an earlier schema of the
// incarnation to its final schema, one ALTER TABLE at a time (its
// stages), the way each ALTER moved the stored rows: columns follow their
// renames (CHANGE, RENAME COLUMN), dropped columns go, added columns get
// the DEFAULT literal of their ADD clause — or, without one, NULL for a
// nullable column and the type's implicit default otherwise, as the
// server does — and values whose type changed are converted as the
// server converted them (valconv.go). A value that cannot be known that
// way (an expression DEFAULT, a conversion binlogcdc does not reproduce,
// a schema it could not derive) is reported in Notes.
type converter struct {
	final  *tablemap.Table // with the output name
	stages []stage
	cache  map[convKey]*chain
	notes  map[string]*noteCount
	// warnings are notes about no particular row.
	warnings []string
	at       change.Position // the change being converted
	rowNotes []*noteCount    // the notes of the row being converted
}

// noteCount is how many row images a note concerns, where the first was
// written, and the keys of the first few.
type noteCount struct {
	n        uint64
	first    change.Position
	examples []string
}

// warn records a note that concerns no particular row.
func (cv *converter) warn(s string) {
	if !slices.Contains(cv.warnings, s) {
		cv.warnings = append(cv.warnings, s)
	}
}

func (cv *converter) note(s string) {
	nc := cv.notes[s]
	if nc == nil {
		nc = &noteCount{first: cv.at}
		cv.notes[s] = nc
	}
	nc.n++
	if len(nc.examples) < 3 && !slices.Contains(cv.rowNotes, nc) {
		cv.rowNotes = append(cv.rowNotes, nc)
	}
}

// noteKeys gives the notes of the row just converted its key.
func (cv *converter) noteKeys(t *tablemap.Table, row change.Row) {
	if len(cv.rowNotes) == 0 {
		return
	}
	k := keyText(t, row)
	for _, nc := range cv.rowNotes {
		if !slices.Contains(nc.examples, k) {
			nc.examples = append(nc.examples, k)
		}
	}
	cv.rowNotes = cv.rowNotes[:0]
}

// keyText names a row for messages: its primary key, or its first
// columns.
func keyText(t *tablemap.Table, row change.Row) string {
	idx := t.PrimaryKey
	if len(idx) == 0 {
		for i := 0; i < len(t.Columns) && i < 2; i++ {
			idx = append(idx, i)
		}
	}
	var parts []string
	for _, i := range idx {
		if i < len(row) && i < len(t.Columns) {
			parts = append(parts, tablemap.QuoteIdent(t.Columns[i].Name)+"="+valueText(row[i]))
		}
	}
	return strings.Join(parts, " ")
}

func valueText(v change.Value) string {
	switch v.Kind() {
	case change.Absent:
		return "?"
	case change.Null:
		return "NULL"
	case change.Int:
		return strconv.FormatInt(v.Int(), 10)
	case change.Uint:
		return strconv.FormatUint(v.Uint(), 10)
	case change.Float32, change.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case change.Bytes:
		b := v.Bytes()
		if len(b) > 16 {
			return fmt.Sprintf("X'%X…'", b[:16])
		}
		return fmt.Sprintf("X'%X'", b)
	}
	t := string(v.Bytes())
	if r := []rune(t); len(r) > 24 {
		t = string(r[:24]) + "…"
	}
	return "'" + strings.ReplaceAll(t, "'", "''") + "'"
}

type convKey struct {
	from, to    *tablemap.Table
	first, last int // the row's stage, the target's
}

// chain is the steps from one event-time table to the final one.
type chain struct {
	identity bool
	steps    []*mapping
}

// mapping is one step: where each column of the next schema comes from.
type mapping struct {
	from, to *tablemap.Table
	sess     session
	src      []int          // index in the row before, or -1
	fill     []change.Value // when src is -1
	note     []string       // when src is -1 and the value is a guess, or the conversion is not exact
	conv     []bool         // the value's type changes
}

func newConverter(final *tablemap.Table, stages []stage) *converter {
	return &converter{final: final, stages: stages, cache: map[convKey]*chain{}, notes: map[string]*noteCount{}}
}

// stageOf returns the stage a change at pos was written in.
func (cv *converter) stageOf(pos change.Position) int {
	return sort.Search(len(cv.stages)-1, func(i int) bool { return before(pos, cv.stages[i+1].alter.ev.Pos) })
}

// target is the table of stage last: the final table for the last stage;
// nil when the stage's schema is unknown.
func (cv *converter) target(last int) *tablemap.Table {
	if last == len(cv.stages)-1 {
		return cv.final
	}
	return cv.stages[last].t
}

// chainTo returns the chain from rows of from in stage first to the
// table to of stage last.
func (cv *converter) chainTo(from *tablemap.Table, first, last int, to *tablemap.Table) *chain {
	k := convKey{from, to, first, last}
	ch := cv.cache[k]
	if ch == nil {
		ch = cv.build(from, first, last, to)
		cv.cache[k] = ch
	}
	return ch
}

// convert returns c's images in the final schema. The returned change
// has Table = the final table.
func (cv *converter) convert(c *change.Change) (change.Change, error) {
	return cv.convertTo(c, len(cv.stages)-1), nil
}

// convertTo returns c's images in stage last's schema (Table set to it;
// the change's own table when that stage's schema is unknown).
func (cv *converter) convertTo(c *change.Change, last int) change.Change {
	to := cv.target(last)
	if to == nil {
		to = c.Table
	}
	ch := cv.chainTo(c.Table, cv.stageOf(c.Pos), last, to)
	out := *c
	out.Table = to
	if ch.identity {
		return out
	}
	cv.at = c.Pos
	out.Before = cv.apply(ch, c.Before, false)
	out.After = cv.apply(ch, c.After, c.Op != change.Delete)
	return out
}

func (cv *converter) apply(ch *chain, row change.Row, count bool) change.Row {
	return cv.applyInto(ch, row, count, false)
}

// applyInto is apply; inPlace lets a step that keeps the columns where
// they are write into row itself.
func (cv *converter) applyInto(ch *chain, row change.Row, count, inPlace bool) change.Row {
	if row == nil {
		return nil
	}
	for _, m := range ch.steps {
		var out change.Row
		if inPlace && m.aligned() && len(row) == len(m.src) {
			out = row
		} else {
			out = make(change.Row, len(m.src))
		}
		for j, i := range m.src {
			if i < 0 {
				out[j] = m.fill[j]
				if count && m.note[j] != "" {
					cv.note(m.note[j])
				}
				continue
			}
			if i >= len(row) {
				continue
			}
			if !m.conv[j] {
				out[j] = row[i]
				continue
			}
			v, ok := convertValue(row[i], &m.from.Columns[i], &m.to.Columns[j], m.sess)
			if !ok && count && !row[i].IsAbsent() {
				cv.note(m.note[j])
			}
			out[j] = v
		}
		row = out
	}
	if count && len(ch.steps) > 0 {
		cv.noteKeys(ch.steps[len(ch.steps)-1].to, row)
	}
	return row
}

// build returns the chain from a row written under from, in stage first,
// to stage last: one step per stage between whose schema is known.
func (cv *converter) build(from *tablemap.Table, first, last int, to *tablemap.Table) *chain {
	ch := &chain{}
	cur := from
	pending := 0 // alters since cur
	for k := first + 1; k < last; k++ {
		pending++
		st := &cv.stages[k]
		if st.t == nil {
			continue
		}
		ch.steps = append(ch.steps, cv.step(cur, st.t, cv.stages[k-pending+1:k+1]))
		cur, pending = st.t, 0
	}
	if first < last {
		pending++
	}
	ch.steps = append(ch.steps, cv.step(cur, to, cv.stages[last+1-pending:last+1]))
	// Skip steps that change nothing.
	steps := ch.steps[:0]
	for _, m := range ch.steps {
		if !isIdentity(m) {
			steps = append(steps, m)
		}
	}
	ch.steps = steps
	ch.identity = len(steps) == 0
	return ch
}

// aligned reports whether every column stays at its index (only types
// change), so a row can be converted in place.
func (m *mapping) aligned() bool {
	for j, i := range m.src {
		if i != j {
			return false
		}
	}
	return true
}

func isIdentity(m *mapping) bool {
	if len(m.from.Columns) != len(m.to.Columns) {
		return false
	}
	for j, i := range m.src {
		if i != j || m.conv[j] || !strings.EqualFold(m.from.Columns[i].Name, m.to.Columns[j].Name) {
			return false
		}
	}
	return true
}

type origin struct {
	idx     int // in the table before; -1: added by an ALTER
	add     *schemahist.ColOp
	alterAt change.Position
}

// step maps rows of from to to across the ALTERs of stages (none: the
// same stage).
func (cv *converter) step(from, to *tablemap.Table, stages []stage) *mapping {
	cur := map[string]origin{}
	for i := range from.Columns {
		cur[strings.ToLower(from.Columns[i].Name)] = origin{idx: i}
	}
	var sess session
	where := "the binlog's TABLE_MAPs"
	for _, st := range stages {
		a := st.alter
		if a == nil {
			continue
		}
		sess = session{mode: a.ev.SQLMode, tz: zoneOf(a.ev.TimeZone)}
		where = fmt.Sprintf("the ALTER TABLE at %s:%d", a.ev.Pos.File, a.ev.Pos.Offset)
		for k := range a.info.Ops {
			op := &a.info.Ops[k]
			name := strings.ToLower(op.Name)
			switch op.Kind {
			case schemahist.OpRename:
				if o, ok := cur[name]; ok {
					delete(cur, name)
					cur[strings.ToLower(op.To)] = o
				}
			case schemahist.OpDrop:
				delete(cur, name)
			case schemahist.OpAdd:
				cur[name] = origin{idx: -1, add: op, alterAt: a.ev.Pos}
			}
		}
	}
	skipped := len(stages) > 1
	ignore := false
	for _, st := range stages {
		if st.alter != nil {
			if toks := sqllex.Lex(st.alter.ev.SQL[:min(len(st.alter.ev.SQL), 64)]); len(toks) > 2 && (toks[1].Is("IGNORE") || toks[2].Is("IGNORE")) {
				ignore = true
			}
		}
	}
	n := len(to.Columns)
	m := &mapping{from: from, to: to, sess: sess, src: make([]int, n), fill: make([]change.Value, n), note: make([]string, n), conv: make([]bool, n)}
	defer func() {
		if !ignore {
			return
		}
		for _, j := range to.PrimaryKey {
			if m.conv[j] || m.src[j] < 0 {
				cv.warn(fmt.Sprintf("%s is ALTER IGNORE and changed primary key column %s: where keys became equal the server kept one row (the first in the old key order) and deleted the others; recover keeps the row written last, and counts the others as conflicts",
					where, tablemap.QuoteIdent(to.Columns[j].Name)))
			}
		}
	}()
	for j := range to.Columns {
		tc := &to.Columns[j]
		o, ok := cur[strings.ToLower(tc.Name)]
		switch {
		case ok && o.idx >= 0:
			m.src[j] = o.idx
			fc := &from.Columns[o.idx]
			if !sameType(fc, tc) || fc.Nullable && !tc.Nullable {
				m.conv[j] = true
				m.note[j] = fmt.Sprintf("column %s: the conversion of its values from %s to %s by %s is not reproduced exactly: they are approximations",
					tablemap.QuoteIdent(tc.Name), typeText(fc), typeText(tc), where)
				if skipped {
					m.note[j] = fmt.Sprintf("column %s: its type changed from %s to %s over several ALTER TABLEs (up to %s) whose intermediate schemas binlogcdc could not derive: its values in rows written before them are approximations",
						tablemap.QuoteIdent(tc.Name), typeText(fc), typeText(tc), where)
				}
			}
		case ok:
			m.src[j] = -1
			m.fill[j], m.note[j] = fillValue(tc, o.add, o.alterAt, sess)
		default:
			m.src[j] = -1
			v, _ := fillValue(tc, nil, change.Position{}, sess)
			m.fill[j] = v
			m.note[j] = fmt.Sprintf("column %s is not in the rows written before it appeared (no ALTER TABLE that added it was recognised): they get %s",
				tablemap.QuoteIdent(tc.Name), describeFill(v))
		}
	}
	return m
}

// typeText names a column's type for messages.
func typeText(c *tablemap.Column) string {
	s, err := tablemap.ColumnDefinition(c, true)
	if err != nil {
		return fmt.Sprintf("type %d", c.Type)
	}
	s = strings.TrimSuffix(strings.TrimSuffix(s, " INVISIBLE"), " NULL")
	s = strings.TrimSuffix(s, " NOT")
	return s
}

// fillValue is the value a column added by ALTER TABLE (op; nil: unknown)
// has in the rows that existed before it, and a note when it is a guess.
func fillValue(c *tablemap.Column, op *schemahist.ColOp, at change.Position, sess session) (change.Value, string) {
	where := fmt.Sprintf("the ALTER TABLE at %s:%d", at.File, at.Offset)
	if op != nil && op.AutoInc {
		return implicitDefault(c), fmt.Sprintf("column %s was added by %s with AUTO_INCREMENT: the numbers the server gave the rows written before it are not in the binlog (they get %s)",
			tablemap.QuoteIdent(c.Name), where, describeFill(implicitDefault(c)))
	}
	if op != nil && op.Def != nil {
		l := op.Def
		var v change.Value
		var from *tablemap.Column
		switch {
		case l.Null:
			v, from = change.NullValue(), c
		case l.Number != "":
			v, from = change.TextValue(change.Decimal, []byte(strings.TrimPrefix(l.Number, "+"))), &literalNumber
		default:
			v, from = change.TextValue(change.String, []byte(l.Text)), &literalText
		}
		out, ok := convertValue(v, from, c, sess)
		if !ok {
			return out, fmt.Sprintf("column %s was added by %s with DEFAULT %s, which binlogcdc does not convert to %s exactly: the rows written before it get %s",
				tablemap.QuoteIdent(c.Name), where, describeFill(v), typeText(c), describeFill(out))
		}
		return out, ""
	}
	v := implicitDefault(c)
	if op != nil && !op.DefExpr {
		// No DEFAULT clause: the server uses exactly this.
		return v, ""
	}
	if op != nil {
		return v, fmt.Sprintf("column %s was added by %s with a DEFAULT expression binlogcdc cannot evaluate: the rows written before it get %s",
			tablemap.QuoteIdent(c.Name), where, describeFill(v))
	}
	return v, ""
}

// The types of DEFAULT literals, for convertValue.
var (
	literalNumber = tablemap.Column{Type: mysql.MYSQL_TYPE_NEWDECIMAL, Precision: 65, Scale: 30, Nullable: true}
	literalText   = tablemap.Column{Type: mysql.MYSQL_TYPE_VARCHAR, Length: 1 << 20, Collation: 45, Nullable: true}
)

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
