package binlogcdc

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink"
	"github.com/binlogcdc/binlogcdc/snapshot"
)

// IncrementalOptions are stream's flags for incremental snapshots
// (snapshot.Incremental): tables re-snapshotted while the stream runs,
// on request through a signal table on the source.
type IncrementalOptions struct {
	SignalTable string // --signal-table
	ChunkRows   int    // --snapshot-chunk
	NewTables   bool   // --snapshot-new-tables
}

// incrementalChunkBytes bounds a chunk's bytes: the next chunk has fewer
// rows when one was larger.
const incrementalChunkBytes = 4 << 20

// AddFlags binds --signal-table and --snapshot-chunk.
func (o *IncrementalOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.SignalTable, "signal-table", "", "watch `DB.TABLE` on the source for requests: a row inserted with type 'snapshot' and data 'db.t1,db.t2' re-snapshots those tables while the stream runs (incremental snapshot, MariaDB; see docs/snapshot.md)")
	f.IntVar(&o.ChunkRows, "snapshot-chunk", 1000, "incremental snapshots: rows per chunk, each read in its own consistent snapshot (fewer when a chunk passes 4 MiB)")
	f.BoolVar(&o.NewTables, "snapshot-new-tables", false, "resuming with a wider --tables than the checkpoint was made with: copy the tables it adds by an incremental snapshot while streaming (MariaDB; the checkpoint must have been made with --signal-table or this flag)")
}

func (o *IncrementalOptions) on() bool { return o.SignalTable != "" || o.NewTables }

// check checks the flags against the others, before connecting.
func (o *IncrementalOptions) check(so *StreamOptions) error {
	if !o.on() {
		return nil
	}
	if o.SignalTable != "" {
		if _, _, err := pipeline.ParseTableName(o.SignalTable); err != nil {
			return UsageError{Msg: "--signal-table: " + err.Error(), Hint: "--signal-table shop.binlogcdc_signal"}
		}
	}
	if o.ChunkRows <= 0 {
		return UsageError{Msg: "--snapshot-chunk must be positive", Hint: "--snapshot-chunk 1000"}
	}
	switch {
	case so.Kafka.ExactlyOnce:
		return UsageError{Msg: "--signal-table with --kafka-exactly-once is not supported yet", Hint: "publish at-least-once with --checkpoint FILE"}
	case so.Replay.To == "" && so.Replay.enabled():
		return UsageError{Msg: "--signal-table writes JSON lines, --to mysql:// or --to kafka://, not SQL text", Hint: "drop --format sql, or use --to mysql://…"}
	case so.Replay.Parallel > 1:
		return UsageError{Msg: "--signal-table with --parallel is not supported yet", Hint: "apply on one connection (--parallel 1)"}
	}
	return nil
}

// openIncremental sets up incremental snapshots once connected (nil:
// no --signal-table).
func (o *IncrementalOptions) open(cfg binlog.LiveConfig, info *binlog.ServerInfo, filter *pipeline.Filter, batch int, logf func(string, ...any)) (*snapshot.Incremental, error) {
	if !o.on() {
		return nil, nil
	}
	if info.Flavor != "mariadb" {
		return nil, UsageError{Msg: "--signal-table: " + snapshot.ErrNoExactPosition.Error(), Hint: "drop --signal-table"}
	}
	if !strings.EqualFold(info.RowImage, "FULL") {
		return nil, UsageError{Msg: "--signal-table needs binlog_row_image=FULL (a change to a row not yet copied may have to be written as a whole row), the server has " + info.RowImage, Hint: "SET GLOBAL binlog_row_image = 'FULL'"}
	}
	var db, table string
	if o.SignalTable != "" {
		db, table, _ = pipeline.ParseTableName(o.SignalTable)
	}
	return &snapshot.Incremental{
		Reader: &snapshot.ChunkReader{Flavor: info.Flavor, Dial: func(ctx context.Context) (*client.Conn, error) {
			return binlog.Connect(ctx, cfg)
		}},
		Filter: filter, SignalDB: db, SignalTable: table,
		ChunkRows: o.ChunkRows, ChunkBytes: incrementalChunkBytes, Batch: batch, Logf: logf,
	}, nil
}

// wrapIncremental puts inc in front of sk, restoring its progress from
// the checkpoint (resumed, a file) or the --to target; the checkpoint
// saves it from then on. Its tables go into cov, the stream's coverage.
func (so *StreamOptions) wrapIncremental(ctx context.Context, inc *snapshot.Incremental, cov *pipeline.Coverage, sk sink.Sink, start change.Position, rp *replayRun, resumed *checkpoint.Checkpoint, saver *checkpoint.Saver, onCommit func(change.TxEnd) error, logf func(string, ...any)) (sink.Sink, error) {
	if inc == nil {
		return sk, nil
	}
	// The signal table is read from here on (an initial snapshot, taken
	// before, does not copy it).
	if inc.SignalTable != "" && !inc.Filter.Add(inc.SignalDB, inc.SignalTable) {
		return nil, UsageError{Msg: "--signal-table " + pipeline.QuoteName(inc.SignalDB, inc.SignalTable) + " is excluded by --exclude-tables", Hint: "leave it out of --exclude-tables"}
	}
	fromCheckpoint := resumed != nil
	var state []byte
	inc.Sink, inc.Coverage = sk, cov
	tx := change.TxEnd{Next: start}
	if rp != nil && rp.target != nil {
		var err error
		if state, err = rp.target.IncrementalState(); err != nil {
			return nil, err
		}
		inc.Target = rp.target
		inc.Sink = snapshot.AsInserts(sk)
		if cp, ok := rp.target.Checkpoint(); ok && cp.Next == start {
			tx.GTID, fromCheckpoint = cp.GTID, true
		}
	} else if resumed != nil {
		state = resumed.Incremental
		if resumed.Position() == start {
			tx.GTID = resumed.LastGTID
		}
	}
	if err := inc.Restore(state); err != nil {
		return nil, err
	}
	if r := inc.Running(); len(r) > 0 {
		logf("incremental snapshot resumed: %v", r)
	}
	if so.Incremental.NewTables && fromCheckpoint {
		if err := so.requestNewTables(ctx, inc, logf); err != nil {
			return nil, err
		}
	}
	inc.Select(snapshot.Selection{Tables: so.Tables, Exclude: so.Exclude})
	// Chunks can be read before the first commit (an idle source): they
	// are committed at the start position, with the last GTID it has.
	// The new tables' requests take effect there.
	inc.Start(tx)
	inc.OnChunk = onCommit
	saver.State = inc.State
	return inc, nil
}

// requestNewTables asks for the tables the current --tables and
// --exclude-tables select and the checkpoint's did not
// (--snapshot-new-tables).
func (so *StreamOptions) requestNewTables(ctx context.Context, inc *snapshot.Incremental, logf func(string, ...any)) error {
	sel := inc.Saved().Selection
	if sel == nil {
		return UsageError{Msg: "--snapshot-new-tables: the checkpoint does not record the tables it was made with (it was saved without --signal-table or --snapshot-new-tables)",
			Hint: "ask for the new tables through --signal-table, or run once with --snapshot-new-tables and the old --tables to record them"}
	}
	before, err := pipeline.NewFilter(sel.Tables, sel.Exclude)
	if err != nil {
		return fmt.Errorf("--snapshot-new-tables: the checkpoint's tables: %w", err)
	}
	now, _ := pipeline.NewFilter(so.Tables, so.Exclude)
	conn, err := inc.Reader.Dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	tables, err := snapshot.ListTables(conn, now)
	if err != nil {
		return err
	}
	added := map[string]bool{}
	for _, n := range inc.Saved().Added {
		added[n] = true
	}
	var fresh []string
	for _, t := range tables {
		n := pipeline.QuoteName(t.DB, t.Name)
		if before.Table(t.DB, t.Name) || added[n] || (strings.EqualFold(t.DB, inc.SignalDB) && strings.EqualFold(t.Name, inc.SignalTable)) {
			continue
		}
		fresh = append(fresh, n)
	}
	if len(fresh) == 0 {
		logf("--snapshot-new-tables: no table is selected now that was not before")
		return nil
	}
	logf("--snapshot-new-tables: newly selected: %s", strings.Join(fresh, ", "))
	inc.Request(fresh...)
	return nil
}
