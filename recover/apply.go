package recovery

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Result is what replaying an incarnation's row changes did.
type Result struct {
	Inserts, Updates, Deletes uint64 // row changes replayed
	Rows                      uint64 // rows of the rebuilt table (Rebuild)
	// Partial counts the rebuilt rows that lack columns (binlog_row_image
	// MINIMAL or NOBLOB): their INSERT leaves those to the table's DEFAULT.
	Partial   uint64
	Conflicts Conflicts
	// Notes report columns whose values in rows written before an ALTER
	// TABLE are a guess, with the number of rows.
	Notes []string
}

// stopFor is where reading can stop for inc: after its end.
func (h *History) stopFor(inc *Incarnation) change.Position {
	stop := h.opts.Stop
	if inc.Ended != nil {
		// The DDL that ended it is a transaction of its own that starts
		// before its QUERY event; the pipeline stops after it.
		if stop.File == "" || before(inc.Ended.Pos, stop) {
			stop = inc.Ended.Pos
		}
	}
	return stop
}

// replayer is pass C's sink: it passes the incarnation's row changes, in
// the final schema, to each at their transaction's commit. It holds them
// until then: in memory (pending) up to limit bytes, then in a spill
// file (txspill.go).
type replayer struct {
	cat     *catalog
	inc     *Incarnation
	conv    *converter
	raw     bool // pass the changes in their event-time schema
	pending []change.Change
	held    int64 // pending's estimated size
	limit   int64
	spill   txSpill
	each    func(c *change.Change) error
	res     *Result
}

// newReplayer returns a replayer that holds up to txSpillBytes of a
// transaction's changes in memory, or Options.MemoryBudget if smaller;
// its spill file goes under Options.TempDir.
func newReplayer(h *History, inc *Incarnation, cv *converter, res *Result) replayer {
	limit := txSpillBytes
	if b := h.opts.MemoryBudget; b > 0 && b < limit {
		limit = b
	}
	return replayer{cat: h.cat, inc: inc, conv: cv, res: res, limit: limit, spill: txSpill{dir: h.opts.TempDir}}
}

func (r *replayer) Write(_ context.Context, c *change.Change) error {
	if c.Op == change.DDL || r.cat.objectAt(c.Table.DB, c.Table.Name, c.Pos) != r.inc {
		return nil
	}
	cc := *c
	if !r.raw {
		var err error
		if cc, err = r.conv.convert(c); err != nil {
			return err
		}
	}
	return r.hold(&cc)
}

// hold keeps a change until its transaction ends. Its values may point
// into the decoder's buffers: they are copied.
func (r *replayer) hold(c *change.Change) error {
	cc := *c
	if r.spill.n > 0 {
		return r.spill.add(&cc)
	}
	size := changeSize(&cc)
	if r.held+size > r.limit {
		// The transaction outgrew memory: it goes to the spill file,
		// what was held first.
		for i := range r.pending {
			if err := r.spill.add(&r.pending[i]); err != nil {
				return err
			}
		}
		r.drop()
		return r.spill.add(&cc)
	}
	r.held += size
	if cc.Before != nil {
		cc.Before = clone(cc.Before)
	}
	if cc.After != nil {
		cc.After = clone(cc.After)
	}
	r.pending = append(r.pending, cc)
	return nil
}

func (r *replayer) Commit(_ context.Context, _ change.TxEnd) error {
	apply := func(c *change.Change) error {
		switch c.Op {
		case change.Insert:
			r.res.Inserts++
		case change.Update:
			r.res.Updates++
		case change.Delete:
			r.res.Deletes++
		}
		return r.each(c)
	}
	for i := range r.pending {
		if err := apply(&r.pending[i]); err != nil {
			return err
		}
	}
	r.drop()
	if err := r.spill.each(apply); err != nil {
		return err
	}
	return r.spill.reset()
}

// drop forgets the changes held in memory.
func (r *replayer) drop() {
	clear(r.pending)
	r.pending, r.held = r.pending[:0], 0
}

// Rollback forgets the transaction: it did not commit.
func (r *replayer) Rollback(context.Context) error {
	r.drop()
	return r.spill.reset()
}

func (r *replayer) Close(context.Context) error { return r.spill.close() }

// ChecksUTF8 reports true: text in a UTF-8 or ASCII collation comes from
// the decoder as the binlog holds it (change.UncheckedText), and goes
// into the rebuilt table byte for byte. MariaDB's utf8mb4 stores UTF-8
// encoded surrogates, which a check of binlogcdc's would turn into
// U+FFFD. The conversions of an ALTER keep such text only where the new
// column surely holds it whole (convertValue).
func (r *replayer) ChecksUTF8() bool { return true }

// ChecksUTF8 is the replayer's.
func (a *applier) ChecksUTF8() bool { return true }

func (r *Result) addNotes(cv *converter) {
	r.Notes = append(r.Notes, cv.warnings...)
	keys := make([]string, 0, len(cv.notes))
	for k := range cv.notes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		nc := cv.notes[k]
		eg := ""
		if len(nc.examples) > 0 {
			eg = "; among them the row " + strings.Join(nc.examples, ", the row ")
		}
		plural := "s"
		if nc.n == 1 {
			plural = ""
		}
		if nc.first.File == "" { // rows converted at an ALTER (the SQL output)
			r.Notes = append(r.Notes, fmt.Sprintf("%s (%d row%s%s)", k, nc.n, plural, eg))
			continue
		}
		r.Notes = append(r.Notes, fmt.Sprintf("%s (%d row image%s, the first written at %s:%d%s)", k, nc.n, plural, nc.first.File, nc.first.Offset, eg))
	}
}

// Rows are a rebuilt table's rows, in memory or on disk (Options.
// MemoryBudget). Close removes what they keep on disk.
type Rows struct {
	st *stagedStore
}

// Each calls fn with the rows in insertion order; a row is fn's only
// until it returns.
func (r *Rows) Each(fn func(row change.Row) error) error {
	if r == nil || r.st == nil || r.st.store == nil {
		return nil
	}
	return r.st.each(fn)
}

// Close releases the rows.
func (r *Rows) Close() error {
	if r == nil || r.st == nil {
		return nil
	}
	return r.st.close()
}

// Rebuild replays inc's row changes (pass C) and returns the table's
// final rows, in the final schema (s.Final), in insertion order. They
// stay in memory up to Options.MemoryBudget, then move to disk: memory
// use is bounded whatever the table's size. The caller closes the rows.
func (h *History) Rebuild(ctx context.Context, inc *Incarnation, s *Schema) (*Rows, *Result, error) {
	res := &Result{}
	if s.Final == nil {
		return &Rows{}, res, nil // no row change in the binlogs: an empty table
	}
	cv := newConverter(s.Final, s.stages)
	st := &stagedStore{cv: cv, dir: h.opts.TempDir, memBudget: h.opts.MemoryBudget}
	rows := &Rows{st: st}
	r := newReplayer(h, inc, cv, res)
	r.raw, r.each = true, st.apply
	err := h.run(ctx, &r, h.stopFor(inc))
	if err == nil {
		err = st.moveTo(len(s.stages)-1, s.Final)
	}
	if err == nil && st.store != nil {
		// Without reading the large values back: only absent ones count.
		err = st.eachRow(false, func(row change.Row) error {
			if !complete(row) {
				res.Partial++
			}
			return nil
		})
	}
	if err != nil {
		rows.Close()
		return nil, nil, err
	}
	res.Conflicts = st.c
	res.Rows = st.size()
	res.addNotes(cv)
	if st.store != nil && st.store.largeOnDisk() {
		// The binlog events and the copies of the rows that brought the
		// large values are garbage now, but the heap's goal (twice what
		// was live with them) would let them stay while the values are
		// read back: collect them first.
		runtime.GC()
	}
	return rows, res, nil
}

// Apply replays inc's row changes (pass C) into out, each source
// transaction's changes followed by its Commit, in the final schema
// (s.Final, whose name is the output name). It closes out. Conflicts
// count, from the keys the binlogs inserted, the changes that refer to
// rows the binlogs did not insert (memory: the table's keys). from, if
// set, is where to resume (a transaction boundary: out's checkpoint);
// the conflicts are then counted from there.
func (h *History) Apply(ctx context.Context, inc *Incarnation, s *Schema, out sink.Sink, from change.Position) (*Result, error) {
	res := &Result{}
	if s.Final == nil {
		return res, out.Close(ctx)
	}
	cv := newConverter(s.Final, s.stages)
	a := &applier{out: out, r: newReplayer(h, inc, cv, res)}
	if pkMoves(s.stages, s.Final) {
		// An earlier primary key: a change written under it may carry
		// only that key (binlog_row_image MINIMAL), not the final one
		// the target finds rows by. The table is kept in memory (as for
		// the SQL output) to complete such images.
		st := &stagedStore{cv: cv, dir: h.opts.TempDir, memBudget: h.opts.MemoryBudget}
		defer st.close()
		a.r.raw = true
		a.r.each = func(c *change.Change) error {
			cc, err := st.complete(c)
			if err != nil {
				return err
			}
			if err := st.apply(c); err != nil {
				return err
			}
			fc := cv.convertTo(&cc, len(s.stages)-1)
			return out.Write(ctx, &fc)
		}
		err := h.runFrom(ctx, a, from, h.stopFor(inc))
		if st.store != nil {
			res.Conflicts = st.c
		}
		res.addNotes(cv)
		return res, err
	}
	keys := newStore(s.Final, true)
	keys.dir, keys.memBudget = h.opts.TempDir, h.opts.MemoryBudget
	defer keys.close()
	a.r.each = func(c *change.Change) error {
		if err := keys.apply(c); err != nil {
			return err
		}
		return out.Write(ctx, c)
	}
	err := h.runFrom(ctx, a, from, h.stopFor(inc))
	res.Conflicts = keys.c
	res.addNotes(cv)
	return res, err
}

// pkMoves reports whether a stage's primary key differs from the final
// one (by column names).
func pkMoves(stages []stage, final *tablemap.Table) bool {
	names := func(t *tablemap.Table) string {
		var b strings.Builder
		for _, i := range t.PrimaryKey {
			b.WriteString(strings.ToLower(t.Columns[i].Name) + "\x00")
		}
		return b.String()
	}
	want := names(final)
	for _, st := range stages {
		if st.t != nil && names(st.t) != want {
			return true
		}
	}
	return false
}

// applier forwards the replayer's changes and every commit to a sink.
type applier struct {
	out sink.Sink
	r   replayer
}

func (a *applier) Write(ctx context.Context, c *change.Change) error { return a.r.Write(ctx, c) }
func (a *applier) Commit(ctx context.Context, tx change.TxEnd) error {
	if err := a.r.Commit(ctx, tx); err != nil {
		return err
	}
	return a.out.Commit(ctx, tx)
}
func (a *applier) Rollback(ctx context.Context) error {
	a.r.Rollback(ctx)
	return a.out.Rollback(ctx)
}
func (a *applier) Close(ctx context.Context) error {
	err := a.out.Close(ctx)
	if cerr := a.r.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// streamLarge: WriteSQL writes the tuples of rows with large values a
// piece at a time (false, for the tests: whole, as it once did).
var streamLarge = true

// Limits of one multi-row INSERT in WriteSQL's output.
const (
	maxInsertRows  = 1000
	maxInsertBytes = 1 << 20
)

// WriteSQL writes the SQL that recreates the table: a header comment
// (header lines), the session settings, CREATE DATABASE IF NOT EXISTS,
// the CREATE TABLE and multi-row INSERTs with exact literals
// (sink/sqltext).
func WriteSQL(w io.Writer, header []string, s *Schema, db string, rows *Rows) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	for _, l := range header {
		fmt.Fprintf(bw, "-- %s\n", l)
	}
	for _, q := range sqltext.SessionSetup {
		fmt.Fprintf(bw, "%s;\n", q)
	}
	if db != "" {
		fmt.Fprintf(bw, "CREATE DATABASE IF NOT EXISTS %s;\n", tablemap.QuoteIdent(db))
	}
	fmt.Fprintf(bw, "%s;\n", s.CreateSQL)
	var b sqltext.Builder
	var cols, prev []int
	var scratch []byte
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		b.SQL = append(b.SQL, ";\n"...)
		if err := b.Err(); err != nil {
			return err
		}
		_, err := bw.Write(b.SQL)
		b.Reset()
		n = 0
		return err
	}
	// Rows holding an ENUM error value ('', index 0: what a non-strict
	// ALTER TABLE stored for a label the new ENUM lacks) are stored only
	// by a non-strict session: they come last, under such a sql_mode.
	relaxed := 0
	write := func(row change.Row) error {
		cols = sqltext.Columns(cols[:0], row, nil)
		if n > 0 && (n >= maxInsertRows || len(b.SQL) >= maxInsertBytes || !slices.Equal(cols, prev)) {
			if err := flush(); err != nil {
				return err
			}
		}
		if n == 0 {
			b.InsertHead("INSERT", s.Final, cols)
			prev = append(prev[:0], cols...)
		} else {
			b.SQL = append(b.SQL, ',')
		}
		if streamLarge && sqltext.HasLarge(cols, row) {
			// The statement so far, then the row's tuple a piece at a
			// time (a value of a megabyte or more): the statement is then
			// full (maxInsertBytes), its ";" written by the next flush.
			if err := b.Err(); err != nil {
				return err
			}
			var err error
			if scratch, err = sqltext.WriteTuple(bw, scratch, b.SQL, cols, row); err != nil {
				return err
			}
			b.Reset()
			n = maxInsertRows
			return nil
		}
		b.InsertTuple(cols, row)
		n++
		return nil
	}
	err := rows.Each(func(row change.Row) error {
		if enumError(row) {
			if i := sqltext.NotStored(row, nil); i >= 0 {
				return sqltext.NotStoredError(s.Final, i)
			}
			relaxed++
			return nil
		}
		return write(row)
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if relaxed > 0 {
		fmt.Fprintf(bw, "-- %d rows hold the ENUM error value '' (index 0), which only a non-strict sql_mode stores.\n", relaxed)
		fmt.Fprintf(bw, "SET SESSION sql_mode = '%s';\n", relaxedSQLMode)
		err := rows.Each(func(row change.Row) error {
			if !enumError(row) {
				return nil
			}
			return write(row)
		})
		if err != nil {
			return err
		}
		if err := flush(); err != nil {
			return err
		}
		fmt.Fprintf(bw, "SET SESSION sql_mode = '%s';\n", sqltext.SessionSQLMode)
	}
	return bw.Flush()
}

// relaxedSQLMode is sqltext.SessionSQLMode without strict mode.
var relaxedSQLMode = strings.Trim(strings.ReplaceAll(","+sqltext.SessionSQLMode+",", ",STRICT_ALL_TABLES,", ","), ",")

// enumError reports whether a row holds an ENUM error value.
func enumError(row change.Row) bool { return enumErrorColumn(row) >= 0 }

func enumErrorColumn(row change.Row) int {
	for i, v := range row {
		if v.Kind() == change.Enum && v.Uint() == 0 {
			return i
		}
	}
	return -1
}
