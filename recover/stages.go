package recovery

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/schemahist"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// An incarnation's schema changes at each ALTER TABLE. Its stages are the
// schemas between them: stage 0 before the first ALTER, stage k after the
// k-th. Each is known from the first TABLE_MAP of a row change in it
// (event-time metadata), or else derived from the DDL text: the CREATE
// TABLE statement for stage 0, the ALTER statement applied to the stage
// before it for the others. Rows written in stage i are carried through
// every later stage, converted at each ALTER as the server converted the
// stored rows (valconv.go).

type seenMap struct {
	pos change.Position
	t   *tablemap.Table
}

// sameTable reports whether two TABLE_MAPs describe the same columns and
// primary key.
func sameTable(a, b *tablemap.Table) bool {
	return sameColumns(a, b) && slices.Equal(a.PrimaryKey, b.PrimaryKey) && slices.Equal(a.PrimaryKeyPrefix, b.PrimaryKeyPrefix)
}

type stage struct {
	t     *tablemap.Table   // nil: unknown
	shape *schemahist.Shape // the derivation (nil: none)
	alter *alterEvent       // the ALTER that began it (nil for stage 0)
	// fromMap: t is a TABLE_MAP, not a derivation.
	fromMap bool
}

// stages returns inc's stages, and notes on derivations that failed or
// disagreed with a TABLE_MAP.
func (h *History) stages(inc *Incarnation) ([]stage, []string) {
	var notes []string
	maps := inc.maps
	if len(maps) == 0 {
		if t, pos := inc.lastTableMap(); t != nil {
			maps = []seenMap{{pos, t}}
		}
	}
	// mapIn returns the first TABLE_MAP in (from, to); to zero: no bound.
	mapIn := func(from, to change.Position) *tablemap.Table {
		for _, m := range maps {
			if before(from, m.pos) && (to.File == "" || before(m.pos, to)) {
				return m.t
			}
		}
		return nil
	}
	out := make([]stage, len(inc.alters)+1)
	var firstAlter change.Position
	if len(inc.alters) > 0 {
		firstAlter = inc.alters[0].ev.Pos
	}
	s0 := &out[0]
	if inc.createSQL != "" && !inc.alteredBefore {
		var guess uint32
		if ev := inc.Created; ev != nil {
			guess = ev.CollServer
			if ev.CollDatabase != 0 && inc.hadDB(ev.DB) {
				guess = ev.CollDatabase
			}
		}
		var first *tablemap.Table
		if len(maps) > 0 {
			first = maps[0].t
		}
		sh, err := schemahist.ShapeFromCreate(inc.createSQL, first, guess, h.MariaDB)
		if err != nil {
			notes = append(notes, fmt.Sprintf("binlogcdc did not read the CREATE TABLE statement: %v", err))
		} else {
			s0.shape = sh
			notes = append(notes, sh.Notes...)
			sh.Notes = nil
		}
	}
	if note := s0.settle(mapIn(change.Position{}, firstAlter), "the CREATE TABLE statement"); note != "" {
		notes = append(notes, note)
	}
	for k := range inc.alters {
		a := &inc.alters[k]
		st := &out[k+1]
		st.alter = a
		var next change.Position
		if k+1 < len(inc.alters) {
			next = inc.alters[k+1].ev.Pos
		}
		prev := &out[k]
		if prev.shape != nil {
			base := prev.shape
			if base.DefColl == 0 {
				base = base.Clone()
				// The default of the ALTER session's database when that is
				// the table's, else the server's.
				base.DefColl, base.Guessed = a.ev.CollServer, true
				if a.ev.CollDatabase != 0 && inc.hadDB(a.ev.DB) {
					base.DefColl = a.ev.CollDatabase
				}
			}
			sh, err := base.ApplyAlter(a.ev.SQL, h.MariaDB)
			if err != nil {
				notes = append(notes, fmt.Sprintf("the schema after the ALTER TABLE at %s:%d was not derived from its text: %v", a.ev.Pos.File, a.ev.Pos.Offset, err))
			} else {
				st.shape = sh
				notes = append(notes, sh.Notes...)
				sh.Notes = nil
			}
		}
		what := fmt.Sprintf("the ALTER TABLE at %s:%d", a.ev.Pos.File, a.ev.Pos.Offset)
		if note := st.settle(mapIn(a.ev.Pos, next), what); note != "" {
			notes = append(notes, note)
		}
	}
	return out, notes
}

// settle sets the stage's table from its first TABLE_MAP m (nil: none)
// and its derivation from what (a statement): the TABLE_MAP with the
// derivation's visibility when they agree, the TABLE_MAP alone (and a
// note) when they do not, the derivation when there is no TABLE_MAP.
func (st *stage) settle(m *tablemap.Table, what string) string {
	if m == nil {
		if st.shape != nil {
			st.t = st.shape.T
		}
		return ""
	}
	st.t, st.fromMap = m, true
	note := ""
	if st.shape != nil {
		if why, ok := agrees(st.shape.T, m); !ok {
			note = "binlogcdc's reading of " + what + " differs from the TABLE_MAP after it (" + why + "): the TABLE_MAP is used"
			st.shape = nil
		}
	}
	if st.shape == nil {
		st.shape = schemahist.FromTableMap(m)
		return note
	}
	st.t = schemahist.WithVisibility(m, st.shape.T)
	st.shape.T = st.t
	return note
}

// agrees reports whether a derived table matches a TABLE_MAP: the same
// columns, types and primary key (visibility aside: MariaDB does not log
// it); else what differs.
func agrees(d, m *tablemap.Table) (string, bool) {
	if len(d.Columns) != len(m.Columns) {
		return fmt.Sprintf("%d columns, the TABLE_MAP has %d", len(d.Columns), len(m.Columns)), false
	}
	for i := range d.Columns {
		x, y := d.Columns[i], m.Columns[i]
		x.Visible, y.Visible = true, true
		if !strings.EqualFold(x.Name, y.Name) || !sameType(&x, &y) || x.Nullable != y.Nullable {
			return fmt.Sprintf("column %s is %s, the TABLE_MAP says %s %s", tablemap.QuoteIdent(x.Name), describeCol(&x), tablemap.QuoteIdent(y.Name), describeCol(&y)), false
		}
	}
	if !slices.Equal(d.PrimaryKey, m.PrimaryKey) {
		return "the primary key differs", false
	}
	return "", true
}

func describeCol(c *tablemap.Column) string {
	s := typeText(c)
	if !c.Nullable {
		s += " NOT NULL"
	}
	return s
}

// hadDB reports whether one of the incarnation's names was in database db.
func (inc *Incarnation) hadDB(db string) bool {
	for _, s := range inc.spans {
		if strings.EqualFold(s.DB, db) {
			return true
		}
	}
	return false
}

// alteredBetween reports whether an ALTER TABLE of the incarnation lies
// between positions a and b.
func (inc *Incarnation) alteredBetween(a, b change.Position) bool {
	i := sort.Search(len(inc.alters), func(i int) bool { return before(a, inc.alters[i].ev.Pos) })
	return i < len(inc.alters) && before(inc.alters[i].ev.Pos, b)
}
