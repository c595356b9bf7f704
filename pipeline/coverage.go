package pipeline

import (
	"fmt"
	"sort"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Coverage is what a consumer holds of each table from snapshots, and as
// of which binlog position. A stream has one: it holds both the window a
// resumed initial snapshot left (the tables read at later positions) and
// the tables incremental snapshots re-read while it runs
// (TableCoverage.Incremental), and its pipeline reconciles every row
// change with it. It is an ordered list of key-range chunks per table,
// each read in one consistent snapshot at Pos (the first change not in its
// rows starts at Pos). A snapshot resumed after a crash reads the rest of
// the tables in a new consistent snapshot at a later position, so the
// chunks of one table can have different positions; the stream then
// starts at the earliest one and Reconcile makes each row change fit what
// the consumer holds.
//
// Keys in no chunk of a covered table are not held yet (as if at an
// infinite position): their rows come with a later chunk. Tables not in
// the Coverage pass unchanged.
//
// Table names match as Filter matches them: case-insensitively.
//
// A Coverage is not safe for concurrent use.
type Coverage struct {
	tables map[string]*TableCoverage // coverageName(db, table) →
	// byTable caches the lookup by the event-time table (TABLE_MAPs
	// reuse their *tablemap.Table): nil when the table is not covered.
	byTable map[*tablemap.Table]*covTable
}

// TableCoverage is what is held of one table.
type TableCoverage struct {
	DB, Table string
	// Key names the key columns, in key order, when the chunks are key
	// ranges (the key's order can be reproduced exactly: see
	// CompareKeys). Nil: the table is held or not as a whole, in one
	// chunk with Lo and Hi nil.
	Key []string
	// Chunks are in key order and do not overlap.
	Chunks []Chunk
	// Incremental: the table is re-read by an incremental snapshot while
	// the stream runs (snapshot.Incremental), each chunk at or after the
	// stream's position, so a DDL statement on it is applied as it comes
	// (CheckDDL leaves it alone); it is saved with the incremental
	// snapshot's state. Otherwise it is in the window of a resumed
	// initial snapshot, saved with that snapshot's state.
	Incremental bool
}

// Chunk is a range of keys held as of Pos: Lo exclusive, Hi inclusive,
// nil for unbounded. Lo and Hi hold the key columns' values in key order.
type Chunk struct {
	Lo, Hi []change.Value
	Pos    change.Position
}

type covTable struct {
	tc  *TableCoverage
	key []int // the key columns in the event-time table
}

// NewCoverage returns an empty Coverage.
func NewCoverage() *Coverage { return &Coverage{tables: map[string]*TableCoverage{}} }

func coverageName(db, table string) string {
	return strings.ToLower(db) + "\x00" + strings.ToLower(table)
}

// Empty reports whether nothing is covered: Reconcile passes everything
// unchanged. A nil Coverage is empty.
func (c *Coverage) Empty() bool { return c == nil || len(c.tables) == 0 }

// Tables returns the covered tables in name order.
func (c *Coverage) Tables() []*TableCoverage {
	if c == nil {
		return nil
	}
	out := make([]*TableCoverage, 0, len(c.tables))
	for _, t := range c.tables {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].DB != out[j].DB {
			return out[i].DB < out[j].DB
		}
		return out[i].Table < out[j].Table
	})
	return out
}

// Table returns the coverage of db.table, or nil.
func (c *Coverage) Table(db, table string) *TableCoverage {
	if c == nil {
		return nil
	}
	return c.tables[coverageName(db, table)]
}

// SetTable makes db.table covered with no chunk yet (nothing of it held),
// keyed by key (nil: as a whole), replacing what was there.
func (c *Coverage) SetTable(db, table string, key []string) *TableCoverage {
	tc := &TableCoverage{DB: db, Table: table, Key: append([]string(nil), key...)}
	c.tables[coverageName(db, table)] = tc
	c.byTable = nil
	return tc
}

// HasInitial reports whether a table of an initial snapshot's window (not
// Incremental) is covered.
func (c *Coverage) HasInitial() bool {
	if c == nil {
		return false
	}
	for _, tc := range c.tables {
		if !tc.Incremental {
			return true
		}
	}
	return false
}

// Only returns the tables whose Incremental is incremental, as a Coverage
// of their own (sharing their chunks): what one kind's state saves.
func (c *Coverage) Only(incremental bool) *Coverage {
	out := NewCoverage()
	if c == nil {
		return out
	}
	for k, tc := range c.tables {
		if tc.Incremental == incremental {
			out.tables[k] = tc
		}
	}
	return out
}

// Adopt takes the tables of o (read back from a saved state) into c,
// marked Incremental as said; a table c covers already is replaced.
func (c *Coverage) Adopt(o *Coverage, incremental bool) {
	if o == nil {
		return
	}
	for k, tc := range o.tables {
		tc.Incremental = incremental
		c.tables[k] = tc
	}
	c.byTable = nil
}

// Drop forgets db.table.
func (c *Coverage) Drop(db, table string) {
	delete(c.tables, coverageName(db, table))
	c.byTable = nil
}

// AddChunk records that the consumer holds the keys of ch of db.table as
// of ch.Pos. The table must be covered (SetTable). A chunk of a table
// held as a whole has Lo and Hi nil. Overlapping chunks are refused; a
// chunk that starts where the one before it ends, at the same position,
// extends it (the bounds are copied).
func (c *Coverage) AddChunk(db, table string, ch Chunk) error {
	tc := c.Table(db, table)
	if tc == nil {
		return fmt.Errorf("coverage: %s is not covered", QuoteName(db, table))
	}
	return tc.add(ch)
}

func (tc *TableCoverage) add(ch Chunk) error {
	ch.Lo, ch.Hi = cloneKey(ch.Lo), cloneKey(ch.Hi)
	name := QuoteName(tc.DB, tc.Table)
	if tc.Key == nil {
		if ch.Lo != nil || ch.Hi != nil || len(tc.Chunks) > 0 {
			return fmt.Errorf("coverage: %s is held as a whole: one chunk with no bounds", name)
		}
		tc.Chunks = []Chunk{ch}
		return nil
	}
	for _, b := range [][]change.Value{ch.Lo, ch.Hi} {
		if b != nil && len(b) != len(tc.Key) {
			return fmt.Errorf("coverage: %s: a chunk bound has %d values for a key of %d columns", name, len(b), len(tc.Key))
		}
	}
	if ch.Lo != nil && ch.Hi != nil {
		if d, err := CompareKeys(ch.Lo, ch.Hi); err != nil {
			return fmt.Errorf("coverage: %s: %w", name, err)
		} else if d >= 0 {
			return fmt.Errorf("coverage: %s: an empty chunk (its low bound is not below its high bound)", name)
		}
	}
	// The chunks before ch end at or below its Lo; the first one after
	// them must start at or above its Hi.
	i := sort.Search(len(tc.Chunks), func(i int) bool { return hiAboveLo(tc.Chunks[i].Hi, ch.Lo) })
	if i < len(tc.Chunks) {
		next := tc.Chunks[i]
		if next.Lo == nil || ch.Hi == nil {
			return fmt.Errorf("coverage: %s: a chunk overlaps one already held", name)
		}
		if d, err := CompareKeys(next.Lo, ch.Hi); err != nil || d < 0 {
			return fmt.Errorf("coverage: %s: a chunk overlaps one already held", name)
		}
	}
	// A chunk that continues the one before it at the same position
	// extends it: one run's chunks stay one.
	if i > 0 {
		prev := &tc.Chunks[i-1]
		if prev.Pos == ch.Pos && prev.Hi != nil && ch.Lo != nil {
			if d, err := CompareKeys(prev.Hi, ch.Lo); err == nil && d == 0 {
				prev.Hi = ch.Hi
				return nil
			}
		}
	}
	tc.Chunks = append(tc.Chunks, Chunk{})
	copy(tc.Chunks[i+1:], tc.Chunks[i:])
	tc.Chunks[i] = ch
	return nil
}

// cloneKey copies a key out of the decoder's buffers.
func cloneKey(k []change.Value) []change.Value {
	if k == nil {
		return nil
	}
	out := make([]change.Value, len(k))
	for i, v := range k {
		out[i] = v.Clone()
	}
	return out
}

// hiAboveLo reports whether a high bound is above a low bound (nil:
// unbounded, above everything as a high bound, below as a low one).
func hiAboveLo(hi, lo []change.Value) bool {
	if hi == nil || lo == nil {
		return true
	}
	d, _ := CompareKeys(hi, lo)
	return d > 0
}

// Complete reports whether the chunks hold every key.
func (tc *TableCoverage) Complete() bool {
	n := len(tc.Chunks)
	if n == 0 || tc.Chunks[0].Lo != nil || tc.Chunks[n-1].Hi != nil {
		return false
	}
	for i := 1; i < n; i++ {
		prev, cur := tc.Chunks[i-1].Hi, tc.Chunks[i].Lo
		if prev == nil || cur == nil {
			return false
		}
		if d, err := CompareKeys(prev, cur); err != nil || d != 0 {
			return false
		}
	}
	return true
}

// Last returns the last chunk, or nil.
func (tc *TableCoverage) Last() *Chunk {
	if len(tc.Chunks) == 0 {
		return nil
	}
	return &tc.Chunks[len(tc.Chunks)-1]
}

// MaxPos is the largest position of a chunk (the zero Position for none).
func (tc *TableCoverage) MaxPos() change.Position {
	var m change.Position
	for _, ch := range tc.Chunks {
		if m.Before(ch.Pos) {
			m = ch.Pos
		}
	}
	return m
}

// MinPos is the smallest position of a chunk of any table, where a
// stream that brings the consumer up to date must start; ok is false when
// no chunk is held.
func (c *Coverage) MinPos() (min change.Position, ok bool) {
	if c == nil {
		return
	}
	for _, tc := range c.tables {
		for _, ch := range tc.Chunks {
			if !ok || ch.Pos.Before(min) {
				min, ok = ch.Pos, true
			}
		}
	}
	return
}

// Forget drops the tables that are complete and whose every chunk's
// position is at or before pos (the position of the next transaction):
// from there on every change of them is to be applied as it is. It
// reports whether the Coverage is now empty.
func (c *Coverage) Forget(pos change.Position) bool {
	if c == nil {
		return true
	}
	for k, tc := range c.tables {
		if tc.Complete() && !pos.Before(tc.MaxPos()) {
			delete(c.tables, k)
			c.byTable = nil
		}
	}
	return len(c.tables) == 0
}

// lookup returns the coverage of the change's table, nil when it is not
// covered.
func (c *Coverage) lookup(t *tablemap.Table) (*covTable, error) {
	if ct, ok := c.byTable[t]; ok {
		return ct, nil
	}
	if c.byTable == nil {
		c.byTable = map[*tablemap.Table]*covTable{}
	}
	tc := c.tables[coverageName(t.DB, t.Name)]
	if tc == nil {
		c.byTable[t] = nil
		return nil, nil
	}
	ct := &covTable{tc: tc}
	if tc.Key != nil {
		if len(t.PrimaryKey) != len(tc.Key) {
			return nil, fmt.Errorf("%s: its primary key is (%s) in the binlog but was (%s) in the snapshot: its key changed inside the snapshot's window; take the snapshot again",
				QuoteName(t.DB, t.Name), strings.Join(t.PKNames, ", "), strings.Join(tc.Key, ", "))
		}
		for i, k := range t.PrimaryKey {
			if !strings.EqualFold(t.Columns[k].Name, tc.Key[i]) || (i < len(t.PrimaryKeyPrefix) && t.PrimaryKeyPrefix[i] > 0) {
				return nil, fmt.Errorf("%s: its primary key is (%s) in the binlog but was (%s) in the snapshot: its key changed inside the snapshot's window; take the snapshot again",
					QuoteName(t.DB, t.Name), strings.Join(t.PKNames, ", "), strings.Join(tc.Key, ", "))
			}
		}
		ct.key = t.PrimaryKey
	}
	c.byTable[t] = ct
	return ct, nil
}

// visible reports whether the consumer must see a change at pos to a row
// with key k: k is in a chunk read at or before pos.
func (ct *covTable) visible(k []change.Value, pos change.Position) (bool, error) {
	chunks := ct.tc.Chunks
	if ct.key == nil {
		return len(chunks) > 0 && !pos.Before(chunks[0].Pos), nil
	}
	var err error
	i := sort.Search(len(chunks), func(i int) bool {
		if chunks[i].Hi == nil {
			return true
		}
		d, e := CompareKeys(chunks[i].Hi, k)
		if e != nil {
			err = e
		}
		return d >= 0
	})
	if err != nil {
		return false, err
	}
	if i == len(chunks) {
		return false, nil
	}
	if lo := chunks[i].Lo; lo != nil {
		d, err := CompareKeys(lo, k)
		if err != nil {
			return false, err
		}
		if d >= 0 {
			return false, nil
		}
	}
	return !pos.Before(chunks[i].Pos), nil
}

// Reconcile makes a row change fit what the consumer holds, in place. For
// a covered table, an image (before or after) is visible when its key's
// chunk was read at or before the position where the change takes effect
// (ch.CommitPos for an XA transaction's change, else ch.Pos): both
// visible, the change is kept as it is; only the before image, it
// becomes a Delete of it; only the after image, an Insert of it; neither,
// it is dropped (keep false). Changes of tables not covered, and DDL, are
// kept (see CheckDDL).
//
// An after image that becomes an Insert must be whole: with
// binlog_row_image MINIMAL or NOBLOB it may not be, and that is an error
// naming the position (a partial row is never written).
func (c *Coverage) Reconcile(ch *change.Change) (keep bool, err error) {
	pos := ch.Pos
	if ch.CommitPos.File != "" {
		// An XA transaction's change takes effect where it commits: a
		// chunk read between its XA PREPARE and its XA COMMIT does not
		// hold it.
		pos = ch.CommitPos
	}
	if c.Empty() || ch.Table == nil || ch.Op == change.DDL {
		return true, nil
	}
	ct, err := c.lookup(ch.Table)
	if err != nil {
		return false, fmt.Errorf("at %s:%d: %w", pos.File, pos.Offset, err)
	}
	if ct == nil {
		return true, nil
	}
	var before, after bool
	if ch.Before != nil {
		if before, err = ct.visible(ct.keyOf(ch.Before, nil), pos); err != nil {
			return false, ct.err(ch, err)
		}
	}
	if ch.After != nil {
		if after, err = ct.visible(ct.keyOf(ch.After, ch.Before), pos); err != nil {
			return false, ct.err(ch, err)
		}
	}
	switch {
	case ch.Before != nil && ch.After != nil && before && after:
		return true, nil
	case ch.Before != nil && before:
		ch.Op, ch.After = change.Delete, nil
		return true, nil
	case ch.After != nil && after:
		if ch.Before != nil {
			for i, v := range ch.After {
				if v.IsAbsent() {
					return false, ct.err(ch, fmt.Errorf("the update's after image does not hold column %s (binlog_row_image MINIMAL or NOBLOB), and it must be written as a whole row: the row was not in the snapshot yet when it changed. Use binlog_row_image=FULL while a snapshot runs",
						tablemap.QuoteIdent(ch.Table.Columns[i].Name)))
				}
			}
		}
		ch.Op, ch.Before = change.Insert, nil
		return true, nil
	}
	return false, nil
}

func (ct *covTable) err(ch *change.Change, err error) error {
	return fmt.Errorf("at %s:%d: %s: %w", ch.Pos.File, ch.Pos.Offset, QuoteName(ch.Table.DB, ch.Table.Name), err)
}

// keyOf returns the key of a row image (nil for a table held as a
// whole). A key column the image does not carry (a MINIMAL after image
// of an update that left it alone) is taken from other.
func (ct *covTable) keyOf(row, other change.Row) []change.Value {
	if ct.key == nil {
		return nil
	}
	k := make([]change.Value, len(ct.key))
	for i, col := range ct.key {
		if col < len(row) && !row[col].IsAbsent() {
			k[i] = row[col]
		} else if col < len(other) {
			k[i] = other[col]
		}
	}
	return k
}

// CheckDDL stops a statement that would change a covered table inside
// its window (before its largest chunk position, or before it is held
// whole): applied to rows of which some already hold its effect and some
// do not, it could not be right. Statements binlogcdc cannot attribute to
// tables stop too while anything is covered.
func (c *Coverage) CheckDDL(ch *change.Change) error {
	if c.Empty() || ch.Op != change.DDL {
		return nil
	}
	// An incremental snapshot's table is read at or after the stream's
	// position: its statements are applied as they come.
	inWindow := func(tc *TableCoverage) bool {
		return !tc.Incremental && (!tc.Complete() || ch.Pos.Before(tc.MaxPos()))
	}
	var hit []string
	t := ch.Touches
	switch {
	case t == nil || t.Kind == "unknown":
		for _, tc := range c.Tables() {
			if inWindow(tc) {
				hit = append(hit, QuoteName(tc.DB, tc.Table))
			}
		}
		if len(hit) > 0 {
			return fmt.Errorf("at %s:%d: a statement binlogcdc cannot attribute to tables (%.80q) inside the window of the resumed snapshot of %s: it may change rows of which the snapshot holds some before and some after it. Take the snapshot again",
				ch.Pos.File, ch.Pos.Offset, ch.SQL, strings.Join(hit, ", "))
		}
		return nil
	case t.Kind == "table":
		for _, n := range t.Tables {
			if tc := c.Table(n.DB, n.Table); tc != nil && inWindow(tc) {
				hit = append(hit, QuoteName(tc.DB, tc.Table))
			}
		}
	case t.Kind == "database":
		for _, db := range t.DBs {
			for _, tc := range c.Tables() {
				if strings.EqualFold(tc.DB, db) && inWindow(tc) && strings.HasPrefix(strings.ToUpper(strings.TrimSpace(ch.SQL)), "DROP") {
					hit = append(hit, QuoteName(tc.DB, tc.Table))
				}
			}
		}
	}
	if len(hit) > 0 {
		return fmt.Errorf("at %s:%d: DDL (%.80q) on %s inside the window of the resumed snapshot (parts of it were read before this statement, parts after): it cannot be applied right. Take the snapshot again (move the checkpoint away, or start from an empty target)",
			ch.Pos.File, ch.Pos.Offset, ch.SQL, strings.Join(hit, ", "))
	}
	return nil
}
