package mysqlsink

import (
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
)

// TableStats counts what was applied to one table.
type TableStats struct {
	Inserted, Updated, Deleted uint64
	// Conflicts resolved by --on-conflict skip or overwrite.
	Skipped, Overwritten uint64
}

// Rows is the number of row changes applied or resolved.
func (t *TableStats) Rows() uint64 {
	return t.Inserted + t.Updated + t.Deleted + t.Skipped + t.Overwritten
}

// Stats counts a run: rows per table (`db`.`table`) as committed on the
// target, source transactions received, target commits.
type Stats struct {
	Tables            map[string]*TableStats
	Transactions      uint64
	TargetCommits     uint64
	DDL               uint64
	Started, Finished time.Time
}

func (s *Stats) table(name string) *TableStats {
	if s.Tables == nil {
		s.Tables = map[string]*TableStats{}
	}
	t := s.Tables[name]
	if t == nil {
		t = &TableStats{}
		s.Tables[name] = t
	}
	return t
}

// add adds o's table counts to s and empties o.
func (s *Stats) add(o *Stats) {
	for name, ot := range o.Tables {
		t := s.table(name)
		t.Inserted += ot.Inserted
		t.Updated += ot.Updated
		t.Deleted += ot.Deleted
		t.Skipped += ot.Skipped
		t.Overwritten += ot.Overwritten
	}
	o.Tables = nil
}

func (s *Stats) clone() Stats {
	c := *s
	c.Tables = map[string]*TableStats{}
	for n, t := range s.Tables {
		tc := *t
		c.Tables[n] = &tc
	}
	return c
}

// Rows is the number of row changes applied or resolved on all tables.
func (s *Stats) Rows() uint64 {
	var n uint64
	for _, t := range s.Tables {
		n += t.Rows()
	}
	return n
}

// Print writes the summary: totals with the rate, then one line per table.
func (s *Stats) Print(w io.Writer) {
	end := s.Finished
	if end.IsZero() {
		end = time.Now()
	}
	d := end.Sub(s.Started)
	rate := 0.0
	if d > 0 {
		rate = float64(s.Rows()) / d.Seconds()
	}
	fmt.Fprintf(w, "binlogcdc: applied %d rows of %d transactions in %d target commits, %d DDL, in %v (%.0f rows/s)\n",
		s.Rows(), s.Transactions, s.TargetCommits, s.DDL, d.Round(time.Millisecond), rate)
	names := make([]string, 0, len(s.Tables))
	for n := range s.Tables {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t := s.Tables[n]
		fmt.Fprintf(w, "binlogcdc:   %s: %d inserted, %d updated, %d deleted, conflicts: %d skipped, %d overwritten\n",
			n, t.Inserted, t.Updated, t.Deleted, t.Skipped, t.Overwritten)
	}
}

// ConflictError is a change that does not fit the target: an UPDATE or
// DELETE that matches no row, an INSERT or UPDATE that hits a duplicate
// key. The target transaction holding it was rolled back, so the target
// stands at Checkpoint.
type ConflictError struct {
	Op         change.Op
	Table      string // `db`.`table`
	Key        string // the row's key values, as SQL literals
	Pos        change.Position
	Row        int
	GTID       string
	Problem    string
	Checkpoint change.Position
}

func (e *ConflictError) describe() string {
	g := ""
	if e.GTID != "" {
		g = " gtid " + e.GTID
	}
	return fmt.Sprintf("%s of %s (%s) at %s:%d row %d%s: %s", e.Op, e.Table, e.Key, e.Pos.File, e.Pos.Offset, e.Row, g, e.Problem)
}

func (e *ConflictError) Error() string {
	at := "the start (nothing applied yet)"
	if e.Checkpoint.File != "" {
		at = fmt.Sprintf("%s:%d", e.Checkpoint.File, e.Checkpoint.Offset)
	}
	return fmt.Sprintf("conflict: %s; the target stays at %s (fix the row, or rerun with --on-conflict overwrite or skip)", e.describe(), at)
}
