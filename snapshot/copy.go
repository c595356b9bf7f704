package snapshot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Options configure Copy.
type Options struct {
	// Batch is how many rows go into one sink transaction (default 1000).
	Batch int
	// Progress, when set, is called after each batch and table.
	Progress func(Progress)
	// BeforeTable, when set, is called with each table's schema before
	// its first row (sinks that create tables).
	BeforeTable func(t *tablemap.Table) error
}

// Progress says how far a Copy is.
type Progress struct {
	Table              string // the table being read (db.table)
	TablesDone, Tables int
	Rows               uint64 // rows copied so far
	EstimatedRows      uint64 // the server's estimate of all rows (TABLE_ROWS)
	Elapsed            time.Duration
}

// Left estimates the time left from the rate so far; 0 when unknown.
func (p Progress) Left() time.Duration {
	if p.Rows == 0 || p.EstimatedRows <= p.Rows {
		return 0
	}
	return time.Duration(float64(p.Elapsed) / float64(p.Rows) * float64(p.EstimatedRows-p.Rows))
}

// Stats are what a Copy did.
type Stats struct {
	Tables int
	Rows   uint64
}

// Copy reads each table inside the snapshot and writes its rows to out as
// change.Snapshot changes (After only) at the snapshot's position, in
// primary-key order, Batch rows per sink transaction. Rows stream from
// the server one at a time, so memory stays bounded whatever the size of
// the table.
func (s *Source) Copy(ctx context.Context, out sink.Sink, tables []TableInfo, opts Options) (Stats, error) {
	if opts.Batch <= 0 {
		opts.Batch = 1000
	}
	stop := context.AfterFunc(ctx, func() { s.conn.Close() })
	defer stop()
	var st Stats
	p := Progress{Tables: len(tables)}
	for _, t := range tables {
		p.EstimatedRows += t.Rows
	}
	start := time.Now()
	report := func() {
		if opts.Progress != nil {
			p.Elapsed = time.Since(start)
			p.Rows = st.Rows
			opts.Progress(p)
		}
	}
	// A sink that keeps a checkpoint (sink/mysql) keeps the GTID position
	// with it: the resume check finds the position's history by it.
	tx := change.TxEnd{Next: change.Position{File: s.Pos.File, Offset: s.Pos.Offset}, Time: s.Pos.Time, GTID: s.Pos.GTID}
	var cv converter
	for _, ti := range tables {
		ts, err := loadSchema(s.conn, ti.DB, ti.Name, s.mariadb)
		if err != nil {
			return st, s.err(ctx, "schema", err)
		}
		if opts.BeforeTable != nil {
			if err := opts.BeforeTable(ts.table); err != nil {
				return st, err
			}
		}
		p.Table = ti.DB + "." + ti.Name
		report()
		q := selectSQL(ts)
		inBatch := 0
		var result mysql.Result
		// The snapshot is consistent as a whole, not table by table: a
		// target checks no foreign keys while it loads it (as a dump does).
		c := change.Change{Op: change.Snapshot, Table: ts.table, Time: s.Pos.Time, Pos: tx.Next, GTID: s.Pos.GTID,
			Flags: change.RowsNoForeignKeyChecks}
		err = s.conn.ExecuteSelectStreaming(q, &result, func(row []mysql.FieldValue) error {
			r, err := cv.convert(ts, row)
			if err != nil {
				return fmt.Errorf("%s row %d: %w", p.Table, st.Rows, err)
			}
			c.After, c.RowIndex = r, int(st.Rows)
			if err := out.Write(ctx, &c); err != nil {
				return err
			}
			st.Rows++
			inBatch++
			if inBatch >= opts.Batch {
				inBatch = 0
				if err := out.Commit(ctx, tx); err != nil {
					return err
				}
				report()
			}
			return nil
		}, nil)
		if err != nil {
			return st, s.err(ctx, "reading "+p.Table, err)
		}
		if inBatch > 0 {
			if err := out.Commit(ctx, tx); err != nil {
				return st, err
			}
		}
		st.Tables++
		p.TablesDone++
		report()
	}
	return st, nil
}

// selectSQL reads every column of the table in its exact form, in
// primary-key order when that costs no sort.
func selectSQL(ts *tableSchema) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, c := range ts.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.expr)
	}
	t := ts.table
	b.WriteString(" FROM ")
	b.WriteString(tablemap.QuoteIdent(t.DB) + "." + tablemap.QuoteIdent(t.Name))
	// Key order is the clustered index's: no sort. A key with a prefix
	// part would need a sort of the whole table before the first row
	// (and rows need no order), so such a table is read as it comes.
	prefix := false
	for _, p := range t.PrimaryKeyPrefix {
		prefix = prefix || p > 0
	}
	if len(t.PrimaryKey) > 0 && !prefix {
		b.WriteString(" ORDER BY ")
		for i, k := range t.PrimaryKey {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(tablemap.QuoteIdent(t.Columns[k].Name))
		}
	}
	return b.String()
}

// AsInserts wraps a sink that applies changes (sink/mysql): snapshot rows
// reach it as inserts.
func AsInserts(s sink.Sink) sink.Sink { return insertSink{s} }

type insertSink struct{ sink.Sink }

func (s insertSink) Write(ctx context.Context, c *change.Change) error {
	if c.Op != change.Snapshot {
		return s.Sink.Write(ctx, c)
	}
	ins := *c
	ins.Op = change.Insert
	return s.Sink.Write(ctx, &ins)
}
