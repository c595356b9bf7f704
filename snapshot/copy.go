package snapshot

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
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
	// its first row (sinks that create tables). fresh: the table is
	// copied from its start, and whatever the sink holds of it from an
	// interrupted run must go (emptied); otherwise the copy continues
	// after the rows the sink holds.
	BeforeTable func(t *tablemap.Table, fresh bool) error
	// State, when set, is the snapshot's progress: tables it holds in
	// whole are skipped, tables it holds in part are continued after
	// their last chunk (in this snapshot, at its position), and each
	// finished chunk is recorded in it.
	State *ResumeState
	// Saved, when set with State, is called after each sink commit that
	// finished a chunk (a batch of a table copied in key ranges, or the
	// last batch of a table), with State up to date: the place to save it
	// with the checkpoint. A sink that keeps its own checkpoint (sink/mysql)
	// gets State as JSON in the TxEnd (change.TxEnd.Snapshot) instead.
	Saved func(tx change.TxEnd) error
	// Marks writes a change.MarkTableStart before the first row of each
	// table copied from its start and a change.MarkTableEnd after its
	// last row, in the same sink transactions as the rows (Snapshot
	// changes without a row: only for sinks whose format has such
	// records, Maxwell's bootstrap-start and bootstrap-complete).
	Marks bool
	// Places sets each row's change.Change.Place: first or last of its
	// table, in the first or last table (Debezium's source.snapshot
	// first, last, first_in_data_collection, last_in_data_collection).
	// Each row is then written when the next is read (a copy of one row).
	Places bool
	// Annotate, when set, gives the table each row carries for a table
	// read from the catalog: what the schema history knows beyond the
	// catalog's columns (change.Change.Table), e.g. MariaDB's JSON.
	Annotate func(*tablemap.Table) *tablemap.Table
}

// Progress says how far a Copy is.
type Progress struct {
	Table              string // the table being read (db.table)
	TablesDone, Tables int
	Rows               uint64 // rows copied so far
	RowsBefore         uint64 // of those, rows an interrupted run copied
	EstimatedRows      uint64 // the server's estimate of all rows (TABLE_ROWS)
	Elapsed            time.Duration
}

// Rate is the rows per second of this run.
func (p Progress) Rate() float64 {
	return float64(p.Rows-p.RowsBefore) / max(p.Elapsed.Seconds(), 0.001)
}

// Left estimates the time left from the rate so far; 0 when unknown.
func (p Progress) Left() time.Duration {
	if p.Rows <= p.RowsBefore || p.EstimatedRows <= p.Rows {
		return 0
	}
	return time.Duration(float64(p.Elapsed) / float64(p.Rows-p.RowsBefore) * float64(p.EstimatedRows-p.Rows))
}

// Stats are what a Copy did.
type Stats struct {
	Tables int
	Rows   uint64 // in this run
}

// Copy reads each table inside the snapshot and writes its rows to out as
// change.Snapshot changes (After only) at the snapshot's position, in
// primary-key order, Batch rows per sink transaction. Rows stream from
// the server one at a time (one SELECT per table), so memory stays
// bounded whatever the size of the table.
//
// With a State, the last key of each committed batch is a chunk
// boundary: a table whose key order binlogcdc reproduces exactly (see
// keyTypes) is recorded batch by batch, and a resumed run continues it
// with WHERE key > the last boundary; any other table is recorded when it
// is copied whole.
func (s *Source) Copy(ctx context.Context, out sink.Sink, tables []TableInfo, opts Options) (Stats, error) {
	if opts.Batch <= 0 {
		opts.Batch = 1000
	}
	stop := context.AfterFunc(ctx, func() { s.conn.Close() })
	defer stop()
	var st Stats
	state := opts.State
	p := Progress{Tables: len(tables)}
	if state != nil {
		p.RowsBefore = state.Rows
	}
	rows := p.RowsBefore
	for _, t := range tables {
		p.EstimatedRows += t.Rows
	}
	start := time.Now()
	report := func() {
		if opts.Progress != nil {
			p.Elapsed = time.Since(start)
			p.Rows = rows
			opts.Progress(p)
		}
	}
	// A sink that keeps a checkpoint (sink/mysql) keeps the GTID position
	// with it: the resume check finds the position's history by it. The
	// checkpoint is where the stream will start: the first snapshot's
	// position, when this one resumes an interrupted one.
	here := s.Pos.Pos()
	tx := change.TxEnd{Next: here, Time: s.Pos.Time, GTID: s.Pos.GTID}
	if state != nil {
		tx.Next, tx.GTID = state.Start, state.StartGTID
	}
	if state != nil {
		// Every table is covered from the start: before its chunks are
		// read, the consumer holds none of its rows (their changes come
		// with them).
		for _, ti := range tables {
			if state.Coverage.Table(ti.DB, ti.Name) == nil {
				state.Coverage.SetTable(ti.DB, ti.Name, nil)
			}
		}
	}
	var kill killHook
	kill.init()
	// saved records progress after a committed chunk.
	commit := func(chunk bool) error {
		t := tx
		if state != nil && chunk {
			state.Rows = rows
			data, err := state.MarshalJSON()
			if err != nil {
				return err
			}
			t.Snapshot = data
		}
		if err := out.Commit(ctx, t); err != nil {
			return err
		}
		if state != nil && chunk && opts.Saved != nil {
			if err := opts.Saved(t); err != nil {
				return err
			}
			kill.saved()
		}
		return nil
	}
	var cv converter
	cv.lazyUTF8 = sink.ChecksUTF8(out) // as pipeline.New does
	for idx, ti := range tables {
		name := tableKey(ti.DB, ti.Name)
		var tc *pipeline.TableCoverage
		if state != nil {
			tc = state.Coverage.Table(ti.DB, ti.Name)
			if tc != nil && tc.Complete() {
				st.Tables++
				p.TablesDone++
				continue
			}
		}
		ts, err := loadSchema(s.conn, ti.DB, ti.Name, s.mariadb)
		if err != nil {
			return st, s.err(ctx, "schema", err)
		}
		keyed := chunkable(ts)
		var after []change.Value // continue after this key
		if tc != nil && len(tc.Chunks) > 0 {
			// Held in part (a table held whole with its chunk is complete).
			if tc.Key == nil || !keyed || state.Schemas[name] != fingerprint(ts.table) {
				return st, fmt.Errorf("snapshot: %s.%s: its schema changed since its first part was copied; take the snapshot again", ti.DB, ti.Name)
			}
			after = tc.Last().Hi
		} else if state != nil {
			var key []string
			if keyed {
				key = ts.table.PKNames
			}
			tc = state.Coverage.SetTable(ti.DB, ti.Name, key)
			state.Schemas[name] = fingerprint(ts.table)
		}
		if opts.Annotate != nil {
			ts.table = opts.Annotate(ts.table)
		}
		if opts.BeforeTable != nil {
			if err := opts.BeforeTable(ts.table, after == nil); err != nil {
				return st, err
			}
		}
		p.Table = ti.DB + "." + ti.Name
		report()
		q, err := selectSQL(ts, after)
		if err != nil {
			return st, fmt.Errorf("snapshot: %s: %w", p.Table, err)
		}
		inBatch, tableRows := 0, 0
		lo := after
		var last []change.Value
		// The snapshot is consistent as a whole, not table by table: a
		// target checks no foreign keys while it loads it (as a dump does).
		c := change.Change{Op: change.Snapshot, Table: ts.table, Time: s.Pos.Time, Pos: here, GTID: s.Pos.GTID,
			Flags: change.RowsNoForeignKeyChecks}
		mark := func(m uint8) error {
			mc := c
			mc.Mark, mc.RowIndex, mc.Place = m, int(rows), 0
			inBatch++
			return out.Write(ctx, &mc)
		}
		if opts.Marks && after == nil {
			if err := mark(change.MarkTableStart); err != nil {
				return st, err
			}
		}
		// emit writes one row, and commits a full batch.
		emit := func(r change.Row, place uint8) error {
			c.After, c.RowIndex, c.Place = r, int(rows), place
			if err := out.Write(ctx, &c); err != nil {
				return err
			}
			rows++
			st.Rows++
			inBatch++
			tableRows++
			kill.row(name, tableRows, inBatch, opts.Batch)
			if inBatch >= opts.Batch {
				inBatch = 0
				chunk := state != nil && tc.Key != nil
				if chunk {
					last = keyOf(ts.table, r)
					if err := state.Coverage.AddChunk(ti.DB, ti.Name, pipeline.Chunk{Lo: lo, Hi: last, Pos: here}); err != nil {
						return err
					}
					lo = last
				}
				if err := commit(chunk); err != nil {
					return err
				}
				report()
			}
			return nil
		}
		// With Places, a row waits for the next one (or the end of the
		// table) to know whether it is the table's last.
		var held change.Row
		var heldPlace, place uint8
		if idx == 0 {
			place |= change.PlaceFirstTable
		}
		if idx == len(tables)-1 {
			place |= change.PlaceLastTable
		}
		firstRow := after == nil
		err = selectText(s.conn, q, len(ts.cols), func(row []textCell) error {
			r, err := cv.convert(ts, row)
			if err != nil {
				return fmt.Errorf("%s row %d: %w", p.Table, rows, err)
			}
			if !opts.Places {
				return emit(r, 0)
			}
			if held != nil {
				if err := emit(held, heldPlace); err != nil {
					return err
				}
			}
			held, heldPlace = r.Clone(), place
			if firstRow {
				heldPlace |= change.PlaceFirstInTable
				firstRow = false
			}
			return nil
		})
		if err == nil && held != nil {
			err = emit(held, heldPlace|change.PlaceLastInTable)
		}
		if err != nil {
			return st, s.err(ctx, "reading "+p.Table, err)
		}
		if opts.Marks {
			if err := mark(change.MarkTableEnd); err != nil {
				return st, err
			}
		}
		if state != nil {
			// The table is held whole: its last chunk has no upper bound.
			if tc.Key != nil {
				err = state.Coverage.AddChunk(ti.DB, ti.Name, pipeline.Chunk{Lo: lo, Pos: here})
			} else {
				err = state.Coverage.AddChunk(ti.DB, ti.Name, pipeline.Chunk{Pos: here})
			}
			if err != nil {
				return st, err
			}
		}
		if inBatch > 0 || state != nil {
			if err := commit(state != nil); err != nil {
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
func selectSQL(ts *tableSchema, after []change.Value) (string, error) {
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
	if after != nil {
		w, err := keyWhere(t, after)
		if err != nil {
			return "", err
		}
		b.WriteString(" WHERE " + w)
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
	return b.String(), nil
}

// AsInserts wraps a sink that applies changes (sink/mysql): snapshot rows
// reach it as inserts.
func AsInserts(s sink.Sink) sink.Sink { return insertSink{s} }

type insertSink struct{ sink.Sink }

// ChecksUTF8 is the wrapped sink's (sink.UTF8Checker).
func (s insertSink) ChecksUTF8() bool { return sink.ChecksUTF8(s.Sink) }

func (s insertSink) Write(ctx context.Context, c *change.Change) error {
	if c.Op != change.Snapshot {
		return s.Sink.Write(ctx, c)
	}
	ins := *c
	ins.Op = change.Insert
	return s.Sink.Write(ctx, &ins)
}
