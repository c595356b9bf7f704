// Package verify compares the tables of two servers — a source and a
// copy that binlogcdc replayed into — and names the rows that differ.
//
// For each table it compares the definitions (see schema.go), then
// proves the rows equal or not from every row of both sides, read in
// each side's consistent snapshot and hashed here (see stream.go): a
// false "equal" needs a collision of two independent 64-bit words of
// SHA-256 sums, at most 2^-128 per table. CHECKSUM TABLE is never used:
// it hashes a VARCHAR's or BLOB's bytes without their length, skips
// VIRTUAL columns and is 32 bits wide.
//
// When the rows differ, they are named by aggregates of per-row hashes
// computed on the servers: the MD5 of every column's exact text (see
// exact), folded into a count and two exact 64-bit sums. Tables whose
// primary key starts with an integer column have that column's range
// split 16 ways (each differing part again) down to parts of a few
// hundred rows, whose keys and hashes are then fetched and matched; other
// tables (other keys, no primary key) are split into buckets by a hash
// of the key (of the whole row without a key), and the rows of the
// differing buckets are matched the same way. A row is "changed" (same
// key, other values), "missing" on the target or "extra" on it; without
// a primary key, a row is missing or extra as many times as it is.
//
// System-versioned tables are compared with their history (FOR
// SYSTEM_TIME ALL, including the row_start/row_end columns).
package verify

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// Querier runs statements: a *client.Conn of go-mysql.
type Querier interface {
	Execute(command string, args ...any) (*mysql.Result, error)
	Prepare(query string) (*client.Stmt, error)
}

// Options change what Run compares.
type Options struct {
	// Select reports whether a table takes part (nil: all). The system
	// databases and binlogcdc.checkpoint never do.
	Select func(db, table string) bool
	// MaxRows is how many differing rows are named per table (default
	// 100); the comparison of a table stops there.
	MaxRows int
	// Leaf is the size of a key range whose rows are fetched rather than
	// split further (default 500).
	Leaf int
	// StrictSchema makes a definition difference that changes no data
	// (engine, comments, display widths...) a difference of the table.
	StrictSchema bool
	// Progress, when set, receives a line per table.
	Progress io.Writer
	// Sync, when set, lines the target's snapshot up with the source's
	// (live verification of a copy being applied: verify/live). A table
	// that is not transactional on a side is then not compared (see
	// Table.Unverified): no snapshot covers it.
	Sync Sync
	// Where, when set, is an SQL condition on the columns of every
	// selected table: only the rows that match it are compared (a key
	// range: verify/live compares a large table chunk by chunk).
	Where string
}

// Sync makes the target's snapshot hold exactly the source's snapshot's
// transactions, while the target is being applied to. Run calls Hold
// before the source's snapshot begins, then At with the source's
// session and its snapshot's binlog position; At calls open, which
// begins the target's snapshot, once the target holds exactly the
// source's transactions up to pos. Release is deferred after Hold.
type Sync interface {
	Hold(ctx context.Context) error
	At(ctx context.Context, src Querier, pos string, open func() error) error
	Release()
}

// Kind says how a row differs.
type Kind string

const (
	Changed Kind = "changed" // the same primary key holds other values on the target
	Missing Kind = "missing" // on the source, not on the target
	Extra   Kind = "extra"   // on the target, not on the source
)

// Row is one differing row: its primary key (or, without a key, all its
// values) as text, e.g. "`id`=5".
type Row struct {
	Kind Kind
	Row  string
}

// Table is the result for one table.
type Table struct {
	DB, Name   string
	Versioned  bool  // compared with its history (FOR SYSTEM_TIME ALL)
	SourceRows int64 // -1: the table is not there
	TargetRows int64
	// Schema lists the differences of the definitions that change data
	// (columns, their order and attributes, keys, system versioning),
	// and a table missing on one side.
	Schema []string
	// Cosmetic lists the differences of the definitions that change no
	// data (engine, comments, display widths, indexes that are not
	// keys...): the table differs for them only with StrictSchema.
	Cosmetic []string
	// RowsDiffer: the rows' digests differ (Rows names the rows found).
	RowsDiffer bool
	// Error says why the rows could not be compared (a side cannot read
	// them): the table is not proven equal.
	Error string
	Rows  []Row
	// Truncated is set when more rows differ than Options.MaxRows.
	Truncated bool
	// Method says how the data was found equal or different.
	Method string
	// Unverified says why the table was not compared (a live pass and a
	// table that is not transactional on a side): neither equal nor
	// differing.
	Unverified string
	strict     bool
}

// Equal reports whether the table is the same on both sides.
func (t *Table) Equal() bool {
	return t.Unverified == "" && len(t.Schema) == 0 && len(t.Rows) == 0 && !t.RowsDiffer && t.Error == "" &&
		t.SourceRows == t.TargetRows && (!t.strict || len(t.Cosmetic) == 0)
}

// Report is the result of Run.
type Report struct {
	Tables []*Table
	// SourcePos is the source's binlog position of its snapshot
	// ("file:offset"; "" without a binlog).
	SourcePos string
	// Warnings: the source changed while it was compared, and the like.
	Warnings []string
}

// Differing returns the tables that differ.
func (r *Report) Differing() []*Table {
	var out []*Table
	for _, t := range r.Tables {
		if !t.Equal() && t.Unverified == "" {
			out = append(out, t)
		}
	}
	return out
}

// unverified counts the tables not compared (Table.Unverified).
func (r *Report) unverified() int {
	n := 0
	for _, t := range r.Tables {
		if t.Unverified != "" {
			n++
		}
	}
	return n
}

// Run compares every selected table of src with dst. Each side is read in
// one consistent snapshot (START TRANSACTION WITH CONSISTENT SNAPSHOT),
// with time_zone +00:00 so that TIMESTAMPs compare as stored.
func Run(ctx context.Context, src, dst Querier, opts Options) (*Report, error) {
	if opts.MaxRows <= 0 {
		opts.MaxRows = 100
	}
	if opts.Leaf <= 0 {
		opts.Leaf = 500
	}
	s, d := &side{q: src, name: "source"}, &side{q: dst, name: "target"}
	startPos, err := begin(ctx, s, d, opts.Sync)
	if err != nil {
		return nil, err
	}
	srcTables, err := s.tables(opts.Select)
	if err != nil {
		return nil, err
	}
	dstTables, err := d.tables(opts.Select)
	if err != nil {
		return nil, err
	}
	rep := &Report{SourcePos: startPos}
	for _, key := range unionKeys(srcTables, dstTables) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st, dt := srcTables[key], dstTables[key]
		var res *Table
		switch {
		case dt == nil:
			res = &Table{DB: st.db, Name: st.name, SourceRows: -1, TargetRows: -1, Schema: []string{"missing on the target (or the --to user has no privilege on it)"}}
			if n, err := s.count(st); err == nil {
				res.SourceRows = n
			}
		case st == nil:
			res = &Table{DB: dt.db, Name: dt.name, SourceRows: -1, TargetRows: -1, Schema: []string{"extra on the target: the source has no such table (or the --source user has no privilege on it)"}}
			if n, err := d.count(dt); err == nil {
				res.TargetRows = n
			}
		case opts.Sync != nil && notTransactional(st, dt) != "":
			res = &Table{DB: st.db, Name: st.name, Versioned: st.versioned, SourceRows: -1, TargetRows: -1,
				Unverified: "engine " + notTransactional(st, dt) + " is not transactional"}
		default:
			if e := notTransactional(st, dt); e != "" {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("%s.%s uses the engine %s, which is not transactional: no consistent snapshot covers it, "+
					"so its result cannot be trusted if the source changed during the run (stop the writes, or compare it again)", quote(st.db), quote(st.name), e))
			}
			st.where, dt.where = opts.Where, opts.Where
			res, err = compareTable(s, d, st, dt, opts)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", quote(st.db), quote(st.name), err)
			}
		}
		rep.Tables = append(rep.Tables, res)
		if opts.Progress != nil {
			fmt.Fprintln(opts.Progress, res.summary())
		}
	}
	if end := s.binlogPos(); startPos != end && opts.Sync == nil {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the source changed while verify ran (its binlog moved from %s to %s): "+
			"each side was read in one consistent snapshot, the source's at %s, so a table found equal was equal at that position; "+
			"a difference may be a change the target had not applied yet (run verify again when the target has caught up)", startPos, end, startPos))
	}
	for _, sd := range []*side{s, d} {
		sd.exec("COMMIT")
	}
	return rep, nil
}

// notTransactional is the engine of a side's table when a consistent
// snapshot does not cover it (MyISAM, Aria, MEMORY…): anything but
// InnoDB; "" for InnoDB on both sides.
func notTransactional(st, dt *tableInfo) string {
	for _, t := range []*tableInfo{st, dt} {
		if e := t.options["ENGINE"]; !strings.EqualFold(e, "InnoDB") {
			return e
		}
	}
	return ""
}

// begin opens both sides' snapshots and returns the source's position:
// with sync, the target's once it holds what the source's does.
func begin(ctx context.Context, s, d *side, sync Sync) (string, error) {
	if sync == nil {
		for _, sd := range []*side{s, d} {
			if err := sd.begin(); err != nil {
				return "", err
			}
		}
		return s.snapshotPos(), nil
	}
	if err := sync.Hold(ctx); err != nil {
		return "", err
	}
	defer sync.Release()
	if err := s.begin(); err != nil {
		return "", err
	}
	pos, err := s.exactSnapshotPos()
	if err != nil {
		return "", err
	}
	return pos, sync.At(ctx, s.q, pos, d.begin)
}

// String is the table's one-line result, as Write prints it.
func (t *Table) String() string { return t.summary() }

// summary is the table's one-line result.
func (t *Table) summary() string {
	name := quote(t.DB) + "." + quote(t.Name)
	if t.Versioned {
		name += " (with history)"
	}
	if t.Unverified != "" {
		return fmt.Sprintf("NOT VERIFIED %s (%s)", name, t.Unverified)
	}
	if t.Equal() {
		line := fmt.Sprintf("ok      %s: %d rows equal (%s)", name, t.SourceRows, t.Method)
		if len(t.Cosmetic) > 0 {
			line += "; definitions differ in what changes no data: " + strings.Join(t.Cosmetic, "; ")
		}
		return line
	}
	var parts []string
	parts = append(parts, t.Schema...)
	if t.strict {
		parts = append(parts, t.Cosmetic...)
	}
	if t.Error != "" {
		parts = append(parts, t.Error)
	}
	switch {
	case t.SourceRows >= 0 && t.TargetRows >= 0:
		parts = append(parts, fmt.Sprintf("%d rows on the source, %d on the target", t.SourceRows, t.TargetRows))
	case t.SourceRows >= 0:
		parts = append(parts, fmt.Sprintf("%d rows on the source", t.SourceRows))
	case t.TargetRows >= 0:
		parts = append(parts, fmt.Sprintf("%d rows on the target", t.TargetRows))
	}
	counts := map[Kind]int{}
	for _, r := range t.Rows {
		counts[r.Kind]++
	}
	for _, k := range []Kind{Changed, Missing, Extra} {
		if counts[k] > 0 {
			what := map[Kind]string{Changed: "changed", Missing: "missing on the target", Extra: "extra on the target"}[k]
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], what))
		}
	}
	if t.Truncated {
		parts = append(parts, "more rows differ (only the first are listed)")
	}
	if t.RowsDiffer && len(t.Rows) == 0 {
		parts = append(parts, "the rows differ, but no single row could be named (the per-row hashes that name rows agree: compare the table's rows by other means)")
	}
	return fmt.Sprintf("DIFFERS %s: %s", name, strings.Join(parts, "; "))
}

// Write prints the report: a line per table, the differing rows under
// the table's line, warnings and a last line with the totals.
func (r *Report) Write(w io.Writer) {
	for _, t := range r.Tables {
		fmt.Fprintln(w, t.summary())
		for _, row := range t.Rows {
			fmt.Fprintf(w, "  %-7s %s\n", row.Kind, row.Row)
		}
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if r.SourcePos != "" {
		fmt.Fprintf(w, "source snapshot at binlog %s\n", r.SourcePos)
	}
	if n := len(r.Differing()); n > 0 {
		fmt.Fprintf(w, "%d of %d tables differ\n", n, len(r.Tables))
	} else if u := r.unverified(); u > 0 {
		fmt.Fprintf(w, "all %d verified tables are equal; %d NOT VERIFIED\n", len(r.Tables)-u, u)
	} else {
		fmt.Fprintf(w, "all %d tables are equal\n", len(r.Tables))
	}
}

// quote quotes an identifier with backticks.
func quote(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// literal is a string literal in utf8mb4, exact for any bytes.
func literal(s string) string {
	return fmt.Sprintf("_utf8mb4 X'%x'", s)
}

// Config says how to reach a server.
type Config struct {
	Addr     string // host:port
	User     string
	Password string
	// TLS, when set, encrypts the connection; with TLSPreferred a server
	// without TLS is used in plain text.
	TLS          *tls.Config
	TLSPreferred bool
}

// Dial opens a session for Run. Its queries have no time limit: a
// checksum of a large table takes as long as it takes.
func Dial(ctx context.Context, cfg Config) (*client.Conn, error) {
	connect := func(t *tls.Config) (*client.Conn, error) {
		return client.ConnectWithContext(ctx, cfg.Addr, cfg.User, cfg.Password, "", 10*time.Second, func(c *client.Conn) error {
			if t != nil {
				c.SetTLSConfig(t)
			}
			// MariaDB does not know MySQL 8's default collation (id 255).
			return c.SetCollation("utf8mb4_general_ci")
		})
	}
	c, err := connect(cfg.TLS)
	if err != nil && cfg.TLS != nil && cfg.TLSPreferred && strings.Contains(err.Error(), "TLS") {
		c, err = connect(nil)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Addr, err)
	}
	return c, nil
}
