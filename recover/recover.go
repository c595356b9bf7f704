// Package recovery rebuilds a table that was dropped or truncated, and
// whose data now lives only in the binlogs (binlogcdc recover).
//
// It reads the binlogs up to three times:
//
//  1. pass A reads every event without decoding rows: the DDL statements
//     (CREATE, DROP, TRUNCATE, RENAME, ALTER TABLE, DROP DATABASE) and the
//     table names of the TABLE_MAP events give every table's
//     incarnations and the names each one had over time;
//  2. pass B decodes the rows events of the names the wanted table's
//     incarnations had, and counts each incarnation's inserts, updates
//     and deletes (rows are attributed by their event-time name and their
//     position relative to the DDL), keeping each one's last TABLE_MAP;
//  3. pass C replays the chosen incarnation's row changes, in order,
//     into a copy of the table (in memory, on disk past Options.
//     MemoryBudget: rowstore.go; WriteSQL) or into a sink
//     (Apply), moved to the final schema when ALTER TABLE changed it.
package recovery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Options select the binlogs and the table.
type Options struct {
	Files       []string        // binlog files, or one .index file
	Start, Stop change.Position // as for binlogcdc read; zero: no bound
	DB, Table   string
	// Open, if set, opens the binlogs at from (zero: Start) instead of
	// Files: a server's binlogs read over the network (read --source).
	// The binlogs are read more than once, so each call must yield the
	// same events.
	Open func(ctx context.Context, from change.Position) (binlog.Source, error)
	// MemoryBudget is how many bytes of the rebuilt table's rows stay in
	// memory before they move to an on-disk store under TempDir (""
	// the system's temporary directory); 0: DefaultMemoryBudget.
	MemoryBudget int64
	TempDir      string
	// StartTime and StopTime bound the transactions read by their start
	// time, as for read (pipeline.Options); zero: none.
	StartTime, StopTime time.Time
	// OpenEnd: the last file is still being written (an archive's open
	// file): a transaction cut off at its end is left out (pipeline.Options).
	OpenEnd bool
	// SkipGTID, if set, leaves out the MariaDB transactions it reports
	// (pipeline.Options): what an archive's later server history
	// repeats of the one before.
	SkipGTID func(pos change.Position, gtid string) bool
}

// open opens the binlogs at from (zero: their start).
func (o Options) open(ctx context.Context, from change.Position) (binlog.Source, error) {
	if o.Open != nil {
		return o.Open(ctx, from)
	}
	return binlog.OpenFiles(o.Files, from)
}

// History is the wanted table name's incarnations in the binlogs.
type History struct {
	DB, Table     string
	Incarnations  []*Incarnation
	ServerVersion string // of the server that wrote the binlogs
	MariaDB       bool
	// First is where reading began: an incarnation that was not created
	// inside the binlogs existed before it.
	First change.Position

	opts   Options
	cat    *catalog
	filter *pipeline.Filter
}

// ErrNotFound is returned by Load when the binlogs never mention the table.
var ErrNotFound = errors.New("the binlogs never mention the table: no CREATE, DROP, TRUNCATE, RENAME or ALTER of it, and no row change")

// Load reads the binlogs (passes A and B) and returns the table's history.
func Load(ctx context.Context, o Options) (*History, error) {
	if o.DB == "" || o.Table == "" {
		return nil, errors.New("recover: the table needs a database and a name")
	}
	cat, err := scan(ctx, o, o.Start, o.Stop)
	if err != nil {
		return nil, err
	}
	h := &History{DB: o.DB, Table: o.Table, ServerVersion: cat.serverVersion, MariaDB: cat.mariadb, First: cat.first, opts: o, cat: cat}
	key := nameKey(o.DB, o.Table)
	type found struct {
		inc  *Incarnation
		from change.Position
	}
	var fs []found
	for _, obj := range cat.objects {
		for _, s := range obj.spans {
			if s.key == key {
				fs = append(fs, found{obj, s.from})
				break
			}
		}
	}
	if len(fs) == 0 {
		return h, fmt.Errorf("%s: %w", quoteName(o.DB, o.Table), ErrNotFound)
	}
	sort.SliceStable(fs, func(i, j int) bool { return before(fs[i].from, fs[j].from) })
	var patterns []string
	seen := map[string]bool{}
	for i, f := range fs {
		f.inc.N = i + 1
		h.Incarnations = append(h.Incarnations, f.inc)
		for _, s := range f.inc.spans {
			if !seen[s.key] {
				seen[s.key] = true
				patterns = append(patterns, pipeline.QuoteName(s.DB, s.Name)) // matched case-insensitively
			}
		}
	}
	if h.filter, err = pipeline.NewFilter(patterns, nil); err != nil {
		return nil, err
	}
	c := &counter{cat: cat, in: map[*Incarnation]bool{}}
	for _, inc := range h.Incarnations {
		c.in[inc] = true
	}
	if err := h.run(ctx, c, o.Stop); err != nil {
		return nil, err
	}
	return h, nil
}

// foldPattern is a case-insensitive path.Match pattern for a name. (The
// table filter now matches names case-insensitively itself; kept for its
// test until recover's next cleanup.)
func foldPattern(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			b.WriteString("[" + strings.ToLower(string(r)) + strings.ToUpper(string(r)) + "]")
		case r == '*' || r == '?' || r == '[' || r == '\\' || r == ']':
			b.WriteString("\\" + string(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// run reads the binlogs through the pipeline into s, for the names of the
// table's incarnations.
func (h *History) run(ctx context.Context, s sink.Sink, stop change.Position) error {
	return h.runFrom(ctx, s, change.Position{}, stop)
}

// runFrom is run starting at from (zero: Options.Start).
func (h *History) runFrom(ctx context.Context, s sink.Sink, from, stop change.Position) error {
	if from.File == "" {
		from = h.opts.Start
	}
	src, err := h.opts.open(ctx, from)
	if err != nil {
		return err
	}
	defer src.Close()
	p := pipeline.New(src, s, pipeline.Options{Filter: h.filter, Stop: stop, OpenEnd: h.opts.OpenEnd, SkipGTID: h.opts.SkipGTID,
		StartTime: h.opts.StartTime, StopTime: h.opts.StopTime})
	runErr := p.Run(ctx)
	if err := s.Close(ctx); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

// counter is pass B's sink: it counts each incarnation's row changes and
// keeps its last TABLE_MAP. A transaction's changes are held as runs of
// one incarnation and TABLE_MAP (with their counts and first and last
// positions), so its memory does not grow with the transaction's size.
type counter struct {
	cat     *catalog
	in      map[*Incarnation]bool
	pending []counted
}

type counted struct {
	inc         *Incarnation
	table       *tablemap.Table
	first, last change.Position
	ops         [3]uint64 // inserts, updates, deletes
}

func (c *counter) Write(_ context.Context, ch *change.Change) error {
	if ch.Op == change.DDL {
		return nil
	}
	inc := c.cat.objectAt(ch.Table.DB, ch.Table.Name, ch.Pos)
	if inc == nil || !c.in[inc] {
		return nil
	}
	if n := len(c.pending); n == 0 || c.pending[n-1].inc != inc || c.pending[n-1].table != ch.Table {
		c.pending = append(c.pending, counted{inc: inc, table: ch.Table, first: ch.Pos})
	}
	p := &c.pending[len(c.pending)-1]
	p.last = ch.Pos
	if ch.Op >= change.Insert && ch.Op <= change.Delete {
		p.ops[ch.Op-change.Insert]++
	}
	return nil
}

func (c *counter) Commit(context.Context, change.TxEnd) error {
	for _, p := range c.pending {
		p.inc.Inserts += p.ops[0]
		p.inc.Updates += p.ops[1]
		p.inc.Deletes += p.ops[2]
		// A TABLE_MAP is kept where the columns change, and the first
		// one after each ALTER TABLE (the stage's schema, even when that
		// ALTER changed nothing a TABLE_MAP shows). Within a run (one
		// transaction, one TABLE_MAP) neither can happen after its first
		// change: an ALTER TABLE is a transaction of its own.
		if p.inc.lastTable == nil || p.inc.lastTable != p.table && !sameTable(p.inc.lastTable, p.table) ||
			p.inc.alteredBetween(p.inc.lastPos, p.first) {
			p.inc.maps = append(p.inc.maps, seenMap{p.first, p.table})
		}
		p.inc.lastTable, p.inc.lastPos = p.table, p.last
	}
	c.pending = c.pending[:0]
	return nil
}

func (c *counter) Rollback(context.Context) error { c.pending = c.pending[:0]; return nil }
func (c *counter) Close(context.Context) error    { return nil }

// Last returns the incarnation whose rows were destroyed last (dropped,
// truncated, replaced or its database dropped).
func (h *History) Last() (*Incarnation, error) {
	var best *Incarnation
	for _, inc := range h.Incarnations {
		if inc.End.Destroyed() && (best == nil || before(best.Ended.Pos, inc.Ended.Pos)) {
			best = inc
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no incarnation of %s was dropped or truncated in the binlogs; pick one with --incarnation N (see --list)", quoteName(h.DB, h.Table))
	}
	return best, nil
}

// Before returns the last incarnation destroyed before t.
func (h *History) Before(t time.Time) (*Incarnation, error) {
	var best *Incarnation
	for _, inc := range h.Incarnations {
		if inc.End.Destroyed() && inc.Ended.Time.Before(t) && (best == nil || before(best.Ended.Pos, inc.Ended.Pos)) {
			best = inc
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no incarnation of %s was dropped or truncated before %s (see --list)", quoteName(h.DB, h.Table), t.UTC().Format(time.DateTime))
	}
	return best, nil
}

// Number returns incarnation n (1-based, as --list numbers them).
func (h *History) Number(n int) (*Incarnation, error) {
	if n < 1 || n > len(h.Incarnations) {
		return nil, fmt.Errorf("%s has %d incarnations in the binlogs; there is no number %d (see --list)", quoteName(h.DB, h.Table), len(h.Incarnations), n)
	}
	return h.Incarnations[n-1], nil
}

func quoteName(db, name string) string {
	return tablemap.QuoteIdent(db) + "." + tablemap.QuoteIdent(name)
}

func where(ev *Event) string {
	return fmt.Sprintf("%s %s:%d", ev.Time.UTC().Format(time.DateTime), ev.Pos.File, ev.Pos.Offset)
}

// CreatedText describes how the incarnation of db.table began.
func (inc *Incarnation) CreatedText(db, table string) string {
	switch {
	case inc.Created != nil:
		s := where(inc.Created)
		if inc.CreatedBy != "CREATE TABLE" {
			s += " (" + inc.CreatedBy + ")"
		}
		if first := inc.spans[0]; first.key != nameKey(db, table) {
			s += " as " + first.DB + "." + first.Name
		}
		return s
	case inc.FirstSeen != nil:
		return fmt.Sprintf("unknown (first seen at %s:%d)", inc.FirstSeen.File, inc.FirstSeen.Offset)
	}
	return "before the binlogs"
}

// EndedText describes how the incarnation ended.
func (inc *Incarnation) EndedText(db, table string) string {
	cur := inc.current()
	name := cur.DB + "." + cur.Name
	renamed := nameKey(cur.DB, cur.Name) != nameKey(db, table)
	if inc.Ended == nil {
		if renamed {
			// The last rename that took the wanted name away.
			for i := len(inc.spans) - 1; i >= 0; i-- {
				if s := inc.spans[i]; s.key == nameKey(db, table) && s.toEv != nil {
					return fmt.Sprintf("RENAME %s (still exists as %s)", where(s.toEv), name)
				}
			}
			return "still exists as " + name
		}
		return "still exists"
	}
	s := inc.End.String() + " " + where(inc.Ended)
	if renamed {
		s += " (as " + name + ")"
	}
	return s
}

// WriteList prints the incarnations as a table.
func (h *History) WriteList(w io.Writer) error {
	fmt.Fprintf(w, "Incarnations of %s in the binlogs (written by %s; times are UTC):\n\n", quoteName(h.DB, h.Table), h.ServerVersion)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tCREATED\tENDED\tROWS ins/upd/del\tNAMES")
	for _, inc := range h.Incarnations {
		var names []string
		for _, s := range inc.spans {
			names = append(names, s.DB+"."+s.Name)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d/%d/%d\t%s\n", inc.N, inc.CreatedText(h.DB, h.Table), inc.EndedText(h.DB, h.Table),
			inc.Inserts, inc.Updates, inc.Deletes, strings.Join(names, " -> "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if last, err := h.Last(); err == nil {
		fmt.Fprintf(w, "\nrecover restores #%d by default (the last one dropped or truncated); pick another with --incarnation N or --before TIME.\n", last.N)
	}
	return nil
}
