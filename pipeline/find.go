package pipeline

// Finding transactions: the first (or every) transaction that does a
// given operation on a given table, for --stop-before, --stop-before-gtid
// and --find. Find runs the pipeline itself over the input, with every
// table and DDL selected, into a sink that only looks: the transactions
// it names are the ones a run with the same bounds sees, and their start
// is where that run's begin sees them start (Options.Stop stops exactly
// there).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/ddl"
)

// Matcher selects transactions: by an operation on a table
// (ParseMatcher), or by GTID.
type Matcher struct {
	Spec string // as given, for messages
	op   string // INSERT, UPDATE, DELETE, DDL, or a DDL verb ("DROP TABLE")
	name *Filter
	gtid string
}

// GTIDMatcher matches the transaction with this GTID.
func GTIDMatcher(gtid string) *Matcher {
	return &Matcher{Spec: "GTID " + gtid, gtid: strings.TrimSpace(gtid)}
}

// objects are the words that may follow CREATE, ALTER and DROP in a spec.
var objects = map[string]bool{"TABLE": true, "DATABASE": true, "SCHEMA": true, "VIEW": true, "SEQUENCE": true,
	"INDEX": true, "TRIGGER": true, "PROCEDURE": true, "FUNCTION": true, "EVENT": true, "USER": true, "ROLE": true}

// ParseMatcher reads a spec "OP [NAME]": OP is INSERT, UPDATE, DELETE
// (rows of that kind), DDL (any schema change), or a schema change's
// leading words (DROP TABLE, TRUNCATE TABLE, ALTER TABLE, RENAME TABLE,
// CREATE TABLE, DROP DATABASE, …); NAME is a db.table pattern as for
// --tables (globs; a database for … DATABASE), and leaving it out matches
// any table.
func ParseMatcher(spec string) (*Matcher, error) {
	w := strings.Fields(spec)
	bad := func(why string) error {
		return fmt.Errorf("%q: %s; want OP [db.table], e.g. 'DROP TABLE shop.orders', 'DELETE shop.orders', 'TRUNCATE shop.*', 'DDL'", spec, why)
	}
	if len(w) == 0 {
		return nil, bad("empty")
	}
	m := &Matcher{Spec: spec}
	op := strings.ToUpper(w[0])
	rest := w[1:]
	switch op {
	case "INSERT", "UPDATE", "DELETE", "DDL":
	case "TRUNCATE", "RENAME":
		if len(rest) > 0 && strings.EqualFold(rest[0], "TABLE") {
			rest = rest[1:]
		}
		op += " TABLE"
	case "CREATE", "ALTER", "DROP":
		if len(rest) == 0 || !objects[strings.ToUpper(rest[0])] {
			return nil, bad(op + " needs what it is about (TABLE, DATABASE, VIEW, INDEX, …)")
		}
		obj := strings.ToUpper(rest[0])
		if obj == "SCHEMA" {
			obj = "DATABASE"
		}
		op += " " + obj
		rest = rest[1:]
	default:
		return nil, bad("unknown operation " + w[0])
	}
	m.op = op
	switch len(rest) {
	case 0:
	case 1:
		pat := rest[0]
		if !strings.Contains(pat, ".") {
			if !strings.HasSuffix(op, " DATABASE") {
				return nil, bad("name the table as db.table")
			}
			pat += ".*"
		}
		f, err := NewFilter([]string{pat}, nil)
		if err != nil {
			return nil, bad(err.Error())
		}
		m.name = f
	default:
		return nil, bad("one name at most (quote the spec: --stop-before 'DROP TABLE shop.orders')")
	}
	return m, nil
}

// rows reports whether the matcher selects rows (not DDL, not a GTID).
func (m *Matcher) rows() bool {
	return m.op == "INSERT" || m.op == "UPDATE" || m.op == "DELETE"
}

// match reports whether c is an operation the matcher selects, and says
// what it is.
func (m *Matcher) match(c *change.Change) (string, bool) {
	if m.gtid != "" {
		return "", c.GTID == m.gtid
	}
	if c.Op != change.DDL {
		if m.op != strings.ToUpper(c.Op.String()) || c.Table == nil {
			return "", false
		}
		if m.name != nil && !m.name.Table(c.Table.DB, c.Table.Name) {
			return "", false
		}
		return fmt.Sprintf("%s %s", m.op, QuoteName(c.Table.DB, c.Table.Name)), true
	}
	st := ddl.Parse(c.SQL, c.DB)
	if m.op != "DDL" && st.Verb != m.op {
		return "", false
	}
	what := fmt.Sprintf("%s: %.200s", verbOf(st), c.SQL)
	if m.name == nil {
		return what, true
	}
	for _, n := range st.Tables {
		if m.name.Table(n.DB, n.Table) {
			return what, true
		}
	}
	for _, d := range st.DBs {
		if any, _ := m.name.Database(d); any {
			return what, true
		}
	}
	return "", false
}

// Match is a transaction Find found.
type Match struct {
	Start change.Position // where it begins: Options.Stop stops right before it
	GTID  string
	Time  time.Time // its commit time (Change.Time)
	What  string    // the operation that matched ("DELETE `shop`.`orders`", "DROP TABLE: DROP TABLE …")
}

// errFound ends a Find run that needs no more matches.
var errFound = errors.New("pipeline: found")

// Find reads src as a run with opts would (its bounds: Stop, StopTime,
// StartTime, ApplyFrom; not its filters) and calls each with every
// transaction m matches, in order, until each returns false. It returns
// whether the run reached a stop bound (Stats.Stopped).
func Find(ctx context.Context, src binlog.Source, opts Options, m *Matcher, each func(Match) bool) error {
	fo := Options{StartTime: opts.StartTime, StopTime: opts.StopTime, Stop: opts.Stop, ApplyFrom: opts.ApplyFrom,
		SkipGTID: opts.SkipGTID, OpenEnd: opts.OpenEnd, DDL: true}
	if m.rows() && m.name != nil {
		// Rows of one table: only its rows are decoded (a table the run
		// leaves out, and cannot decode, is no concern), no DDL.
		fo.Filter, fo.DDL = m.name, false
	}
	fs := &findSink{m: m, each: each}
	p := New(src, fs, fo)
	fs.p = p
	err := p.Run(ctx)
	if errors.Is(err, errFound) {
		return nil
	}
	return err
}

// findSink looks at the changes of a Find run.
type findSink struct {
	p      *Pipeline
	m      *Matcher
	each   func(Match) bool
	inTx   bool // the open transaction matched already
	writes bool // the open transaction wrote something
}

func (s *findSink) Write(_ context.Context, c *change.Change) error {
	s.writes = true
	if s.inTx {
		return nil
	}
	what, ok := s.m.match(c)
	if !ok {
		return nil
	}
	s.inTx = true
	if !s.each(Match{Start: s.p.tx.start, GTID: c.GTID, Time: c.Time, What: what}) {
		return errFound
	}
	return nil
}

func (s *findSink) Commit(_ context.Context, tx change.TxEnd) error {
	// A transaction that matches by GTID but passed nothing on (an XA
	// PREPARE, an empty transaction): it began after the last end.
	if s.m.gtid != "" && !s.writes && tx.GTID == s.m.gtid && s.p.Stats.Last.File != "" {
		if !s.each(Match{Start: s.p.Stats.Last, GTID: tx.GTID, Time: tx.Time, What: "GTID " + tx.GTID}) {
			return errFound
		}
	}
	s.inTx, s.writes = false, false
	return nil
}

func (s *findSink) Rollback(context.Context) error {
	s.inTx, s.writes = false, false
	return nil
}

func (s *findSink) Close(context.Context) error { return nil }
