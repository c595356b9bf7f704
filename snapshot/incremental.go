package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Incremental re-snapshots chosen tables while a stream runs (Debezium's
// incremental snapshots; DBLog's idea, with MariaDB's exact snapshot
// positions in place of watermark writes). It is a sink.Sink between the
// pipeline and the real sink:
//
//   - A request is a row inserted into the signal table on the source
//     (ordered in the binlog, so durable and exactly once); it takes
//     effect when its transaction commits. A requested table not yet
//     selected is added to the stream's selection.
//   - At transaction boundaries (after each commit, and while the source
//     has nothing at hand), the next chunk of the table being
//     re-snapshotted is read in its own consistent snapshot at position
//     Pc (never before the stream's position), written as snapshot rows
//     (a --to target first empties the chunk's key range) and added to
//     the coverage with Pc.
//   - The stream's changes to such a table pass through the coverage (the
//     stream's one: Coverage, which the pipeline in front reconciles
//     every row change with; pipeline.Options.Coverage): an image is visible when its key's chunk was read at or before the
//     position where the change takes effect (its own, or its XA
//     COMMIT's: change.Change.CommitPos). So each key's history is its
//     snapshot row at Pc, then its changes after Pc, once each, in the
//     source's order.
//   - Once the last chunk is read and the stream has passed its position,
//     the table is streamed as before.
//
// The progress (State) is saved with the checkpoint at each transaction
// boundary: a restart resumes the incremental snapshot where it was.
type Incremental struct {
	Sink   sink.Sink
	Reader *ChunkReader
	// Filter is the stream's selection: a requested table is added to it.
	Filter *pipeline.Filter
	// SignalDB, SignalTable name the signal table ("" : none).
	SignalDB, SignalTable string
	// Target, when set (--to mysql://), replaces each chunk's key range.
	Target RangeTarget
	// ChunkRows and ChunkBytes bound a chunk (defaults 1000 rows, 4 MiB;
	// the rows of the next chunk shrink when one is larger in bytes).
	ChunkRows  int
	ChunkBytes int64
	// Batch is how many rows of a whole-table chunk go into one sink
	// transaction (default 1000).
	Batch int
	// OnChunk is called after a chunk is committed to Sink, with the
	// stream's last transaction (the checkpoint is saved there again,
	// now with the chunk in the state).
	OnChunk func(tx change.TxEnd) error
	Logf    func(format string, args ...any)
	// Coverage is the stream's coverage, shared with the pipeline that
	// writes to this sink (pipeline.Options.Coverage), which reconciles
	// each row change with it. The tables re-read here are in it, marked
	// Incremental, and only they are saved with the state. Nil: one of
	// its own (the caller then reconciles with Coverage()).
	Coverage *pipeline.Coverage

	state   State
	pending []string // tables requested in the open transaction
	dirty   bool     // the state changed outside a commit (Start)
	inTx    bool     // changes were written since the last commit
	last    change.TxEnd
	rows    int // the next chunk's rows
}

// RangeTarget is a sink that applies changes to a database: before a
// chunk's rows it deletes the rows it holds in the chunk's key range.
type RangeTarget interface {
	// ReplaceRange empties (lo, hi] of t's primary key on the target, or
	// the whole table, creating it when missing, inside the target
	// transaction the chunk's rows and the checkpoint commit in.
	ReplaceRange(t *tablemap.Table, lo, hi change.Row, whole bool) error
	// SetState makes the next Commit save state with the checkpoint.
	SetState(state []byte)
}

// State is an incremental snapshot's progress, saved with the checkpoint.
type State struct {
	// Added are the tables requests added to the selection (db.table,
	// quoted as pipeline.QuoteName quotes them).
	Added []string `json:"added,omitempty"`
	// Tables are the tables being re-snapshotted, in order: the first is
	// read; the rest wait.
	Tables []TableState `json:"tables,omitempty"`
	// Rows counts the snapshot rows written (their row numbers).
	Rows uint64 `json:"rows"`
	// Coverage is what the stream's changes pass through.
	Coverage json.RawMessage `json:"coverage,omitempty"`
	// Selection is the --tables and --exclude-tables the stream ran
	// with (nil: not recorded), so that a restart with a wider selection
	// can copy the tables it adds (--snapshot-new-tables).
	Selection *Selection `json:"selection,omitempty"`
}

// Selection is a stream's table patterns.
type Selection struct {
	Tables  []string `json:"tables,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
}

// Saved returns the saved state taken up by Restore.
func (in *Incremental) Saved() State { return in.state }

// Select records the selection the stream runs with, saved from the
// next checkpoint on.
func (in *Incremental) Select(sel Selection) { in.state.Selection = &sel }

// TableState is one table's progress.
type TableState struct {
	DB    string `json:"db"`
	Table string `json:"table"`
	// After is the key of the last row read (nil: none yet).
	After []KeyValue `json:"after,omitempty"`
	// Read: every chunk is read; the table is done once the stream
	// passes Until, the last chunk's position.
	Read  bool            `json:"read,omitempty"`
	Until change.Position `json:"until,omitempty"`
	Rows  uint64          `json:"rows"`
}

// KeyValue is a key value as saved.
type KeyValue struct {
	K change.Kind `json:"k"`
	N uint64      `json:"n,omitempty"`
	B []byte      `json:"b,omitempty"`
}

func keyToJSON(r change.Row) []KeyValue {
	if r == nil {
		return nil
	}
	out := make([]KeyValue, len(r))
	for i, v := range r {
		out[i] = KeyValue{K: v.Kind(), N: v.Uint(), B: append([]byte(nil), v.Bytes()...)}
	}
	return out
}

func keyFromJSON(k []KeyValue) change.Row {
	if k == nil {
		return nil
	}
	out := make(change.Row, len(k))
	for i, v := range k {
		out[i] = change.RawValue(v.K, v.N, v.B)
	}
	return out
}

// Restore takes up a saved state: its tables are selected again.
func (in *Incremental) Restore(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("incremental snapshot: the saved state is damaged: %w", err)
	}
	if len(st.Coverage) > 0 {
		saved := pipeline.NewCoverage()
		if err := json.Unmarshal(st.Coverage, saved); err != nil {
			return fmt.Errorf("incremental snapshot: the saved state is damaged: %w", err)
		}
		in.coverage().Adopt(saved, true)
	}
	for _, n := range st.Added {
		db, t, err := pipeline.ParseTableName(n)
		if err != nil {
			return fmt.Errorf("incremental snapshot: the saved state names %q: %w", n, err)
		}
		in.Filter.Add(db, t)
	}
	in.state = st
	return nil
}

// Start says where the stream starts (the checkpoint's position and
// last GTID): chunks can be read, and checkpointed, before its first
// commit.
func (in *Incremental) Start(tx change.TxEnd) {
	in.last = tx
	in.takeRequests() // Request's, before the first change
	in.dirty = true   // the selection, and what Start took, are saved at the first commit
}

// Running names the tables being re-snapshotted.
func (in *Incremental) Running() []string {
	var out []string
	for _, t := range in.state.Tables {
		out = append(out, pipeline.QuoteName(t.DB, t.Table))
	}
	return out
}

// Request asks for tables as a signal would (db.table as
// pipeline.QuoteName writes it), at Start or the next commit.
func (in *Incremental) Request(tables ...string) { in.pending = append(in.pending, tables...) }

// coverage returns Coverage, made when there is none.
func (in *Incremental) coverage() *pipeline.Coverage {
	if in.Coverage == nil {
		in.Coverage = pipeline.NewCoverage()
	}
	return in.Coverage
}

func (in *Incremental) logf(format string, args ...any) {
	if in.Logf != nil {
		in.Logf(format, args...)
	}
}

// ChecksUTF8 is its Sink's (sink.UTF8Checker): the chunks' text is read
// likewise.
func (in *Incremental) ChecksUTF8() bool { return sink.ChecksUTF8(in.Sink) }

// Write passes c on (the pipeline in front reconciled it with Coverage);
// a signal is noted.
func (in *Incremental) Write(ctx context.Context, c *change.Change) error {
	if c.Op == change.DDL || c.Table == nil {
		in.inTx = true
		return in.Sink.Write(ctx, c)
	}
	if in.SignalTable != "" && strings.EqualFold(c.Table.DB, in.SignalDB) && strings.EqualFold(c.Table.Name, in.SignalTable) {
		if c.Op == change.Insert {
			in.signal(c)
		}
		return nil
	}
	in.inTx = true
	return in.Sink.Write(ctx, c)
}

// signal reads a request: columns type ('snapshot' or Debezium's
// 'execute-snapshot') and data (db.t1,db.t2, or Debezium's
// {"data-collections": ["db.t1"]}).
func (in *Incremental) signal(c *change.Change) {
	var typ, data string
	for i, col := range c.Table.Columns {
		if i >= len(c.After) {
			break
		}
		switch strings.ToLower(col.Name) {
		case "type":
			typ = string(c.After[i].Bytes())
		case "data":
			data = string(c.After[i].Bytes())
		}
	}
	at := fmt.Sprintf("%s:%d", c.Pos.File, c.Pos.Offset)
	switch strings.ToLower(strings.TrimSpace(typ)) {
	case "snapshot", "execute-snapshot":
	default:
		in.logf("signal at %s: type %q is not one binlogcdc knows (snapshot); ignored", at, typ)
		return
	}
	names, err := signalTables(data)
	if err != nil || len(names) == 0 {
		in.logf("signal at %s: data %q names no tables (want db.t1,db.t2): %v; ignored", at, data, err)
		return
	}
	in.pending = append(in.pending, names...)
}

// signalTables reads "db.t1, db.t2" or {"data-collections": [...]}.
func signalTables(data string) ([]string, error) {
	data = strings.TrimSpace(data)
	var list []string
	if strings.HasPrefix(data, "{") {
		var d struct {
			Collections []string `json:"data-collections"`
		}
		if err := json.Unmarshal([]byte(data), &d); err != nil {
			return nil, err
		}
		list = d.Collections
	} else {
		list = strings.Split(data, ",")
	}
	var out []string
	for _, n := range list {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		db, t, err := pipeline.ParseTableName(n)
		if err != nil {
			return nil, err
		}
		out = append(out, pipeline.QuoteName(db, t))
	}
	return out, nil
}

// Commit commits the stream's transaction (with the requests it holds),
// then reads the next chunk, if any.
func (in *Incremental) Commit(ctx context.Context, tx change.TxEnd) error {
	changed := in.takeRequests()
	if in.retire(tx.Next) || in.dirty {
		changed = true
	}
	in.dirty = false
	if changed {
		if err := in.setState(); err != nil {
			return err
		}
	}
	if err := in.Sink.Commit(ctx, tx); err != nil {
		return err
	}
	in.inTx, in.last = false, tx
	_, err := in.next(ctx)
	return err
}

// takeRequests queues the tables requested in the transaction.
func (in *Incremental) takeRequests() bool {
	if len(in.pending) == 0 {
		return false
	}
	for _, n := range in.pending {
		db, t, _ := pipeline.ParseTableName(n)
		if strings.EqualFold(db, in.SignalDB) && strings.EqualFold(t, in.SignalTable) {
			in.logf("incremental snapshot: %s is the signal table; not copied", n)
			continue
		}
		if !in.Filter.Table(db, t) {
			if !in.Filter.Add(db, t) {
				in.logf("incremental snapshot: %s is excluded by --exclude-tables; not copied", n)
				continue
			}
			in.state.Added = append(in.state.Added, n)
			in.logf("incremental snapshot: %s added to the selection", n)
		}
		// Asked again while it runs: it starts over.
		in.state.Tables = slicesDeleteFunc(in.state.Tables, func(ts TableState) bool { return ts.DB == db && ts.Table == t })
		in.state.Tables = append(in.state.Tables, TableState{DB: db, Table: t})
		// Its key is set with its first chunk. A table still in a resumed
		// initial snapshot's window is read again whole: what it held
		// there is replaced.
		in.coverage().SetTable(db, t, nil).Incremental = true
		in.logf("incremental snapshot of %s requested (%d table(s) queued)", n, len(in.state.Tables))
	}
	in.pending = nil
	return true
}

func slicesDeleteFunc(s []TableState, del func(TableState) bool) []TableState {
	out := s[:0]
	for _, x := range s {
		if !del(x) {
			out = append(out, x)
		}
	}
	return out
}

// retire ends the tables whose last chunk the stream has passed.
func (in *Incremental) retire(next change.Position) bool {
	changed := false
	in.state.Tables = slicesDeleteFunc(in.state.Tables, func(ts TableState) bool {
		if !ts.Read || posBefore(next, ts.Until) {
			return false
		}
		in.coverage().Drop(ts.DB, ts.Table)
		in.logf("incremental snapshot of %s done: %d rows", pipeline.QuoteName(ts.DB, ts.Table), ts.Rows)
		changed = true
		return true
	})
	return changed
}

func posBefore(a, b change.Position) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Offset < b.Offset
}

// setState hands the state to a target (saved with its next commit).
func (in *Incremental) setState() error {
	if in.Target == nil {
		return nil
	}
	data, err := in.State()
	if err != nil {
		return err
	}
	in.Target.SetState(data)
	return nil
}

// State returns the progress as saved with a checkpoint (nil: nothing
// to save).
func (in *Incremental) State() ([]byte, error) {
	in.state.Coverage = nil
	if mine := in.coverage().Only(true); !mine.Empty() {
		cov, err := json.Marshal(mine)
		if err != nil {
			return nil, err
		}
		in.state.Coverage = cov
	}
	if len(in.state.Tables) == 0 && len(in.state.Added) == 0 && in.state.Coverage == nil && in.state.Selection == nil {
		return nil, nil
	}
	return json.Marshal(&in.state)
}

// WorkIdle reads chunks while the source has nothing at hand (waiting
// reports that) and the stream is between transactions.
func (in *Incremental) WorkIdle(ctx context.Context, waiting func() bool) error {
	for !in.inTx && len(in.state.Tables) > 0 && waiting() {
		if in.retire(in.last.Next) {
			if err := in.commitState(ctx, in.last); err != nil {
				return err
			}
			continue
		}
		read, err := in.next(ctx)
		if err != nil || !read {
			return err // !read: the tables wait for the stream to pass their last chunk
		}
	}
	return nil
}

// FlushIdle passes on to a sink that flushes when the source is idle.
func (in *Incremental) FlushIdle() error {
	if f, ok := in.Sink.(interface{ FlushIdle() error }); ok {
		return f.FlushIdle()
	}
	return nil
}

// next reads the next chunk of the first table not fully read; read is
// false when there is none.
func (in *Incremental) next(ctx context.Context) (read bool, err error) {
	if in.last.Next.File == "" {
		return false, nil // no position to checkpoint yet
	}
	i := 0
	for i < len(in.state.Tables) && in.state.Tables[i].Read {
		i++
	}
	if i == len(in.state.Tables) {
		return false, nil
	}
	ts := &in.state.Tables[i]
	if in.rows <= 0 {
		in.rows = max(in.ChunkRows, 1)
	}
	batch := in.Batch
	if batch <= 0 {
		batch = 1000
	}
	tx := in.last
	req := ChunkRequest{DB: ts.DB, Table: ts.Table, After: keyFromJSON(ts.After), Rows: in.rows}
	inBatch := 0
	c := change.Change{Op: change.Snapshot, Flags: change.RowsNoForeignKeyChecks, Place: change.PlaceIncremental}
	in.Reader.cv.lazyUTF8 = sink.ChecksUTF8(in.Sink) // as the pipeline's decoder
	ch, err := in.Reader.Read(ctx, req, func(got *Chunk) error {
		c.Table, c.Pos, c.Time, c.GTID = got.Table, got.Pos.Pos(), got.Pos.Time, got.Pos.GTID
		if got.Whole {
			in.logf("incremental snapshot of %s: read whole, in one consistent snapshot: %s", pipeline.QuoteName(ts.DB, ts.Table), got.Why)
		}
		if in.Target != nil {
			return in.Target.ReplaceRange(got.Table, got.Lo, got.Hi, got.Whole)
		}
		return nil
	}, func(r change.Row) error {
		c.After, c.RowIndex = r, int(in.state.Rows)
		if err := in.Sink.Write(ctx, &c); err != nil {
			return err
		}
		in.state.Rows++
		ts.Rows++
		if inBatch++; inBatch >= batch {
			// A whole table is committed in batches: a crash in it
			// leaves the state before it, so it is read again whole.
			inBatch = 0
			return in.Sink.Commit(ctx, tx)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		var re *requestError
		if req.After == nil && errors.As(err, &re) {
			// A table that cannot be copied: the request is dropped.
			in.logf("%v; the request is dropped", err)
			in.state.Tables = append(in.state.Tables[:i], in.state.Tables[i+1:]...)
			in.coverage().Drop(req.DB, req.Table)
			return true, in.commitState(ctx, tx)
		}
		return false, err
	}
	if err := addChunk(in.coverage(), ch); err != nil {
		return false, err
	}
	ts.After = keyToJSON(ch.Hi)
	if ch.Hi == nil {
		ts.Read, ts.Until = true, ch.Pos.Pos()
	}
	if in.ChunkBytes > 0 && ch.Bytes > in.ChunkBytes && ch.Rows > 1 {
		in.rows = max(1, int(int64(ch.Rows)*in.ChunkBytes/ch.Bytes))
	} else if in.rows < in.ChunkRows {
		in.rows = min(in.ChunkRows, in.rows*2)
	}
	in.retire(in.last.Next)
	return true, in.commitState(ctx, tx)
}

// commitState commits what the chunk wrote, with the state, and saves
// the checkpoint again.
func (in *Incremental) commitState(ctx context.Context, tx change.TxEnd) error {
	if err := in.setState(); err != nil {
		return err
	}
	if err := in.Sink.Commit(ctx, tx); err != nil {
		return err
	}
	if in.OnChunk != nil {
		return in.OnChunk(tx)
	}
	return nil
}

// Rollback drops the open transaction, with the requests it held.
func (in *Incremental) Rollback(ctx context.Context) error {
	in.pending, in.inTx = nil, false
	return in.Sink.Rollback(ctx)
}

// Close closes the sink and the reader.
func (in *Incremental) Close(ctx context.Context) error {
	in.Reader.Close()
	return in.Sink.Close(ctx)
}
