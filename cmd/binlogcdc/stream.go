package main

import (
	"context"
	"io"

	"github.com/binlogcdc/binlogcdc"
)

const streamUsage = `Usage: binlogcdc stream --source mysql://user@host:port [flags]

Connects to a MySQL or MariaDB server as a replica and prints the same JSON
lines as 'read', as transactions commit, until stopped (SIGINT/SIGTERM:
finishes the current transaction, saves the checkpoint, exits 0).

Start point, first that applies: the --checkpoint file when it exists,
--snapshot (copy the selected tables first, then stream from the position
they were copied at; see 'binlogcdc snapshot --help'), --start-position,
--start-gtid, --from now|earliest. Without any, --from now.

Delivery: at-least-once. A transaction's lines are written and flushed
before its checkpoint is saved; if the process dies between the two, that
transaction is printed again after a restart. Deduplicate on
(pos.file, pos.offset, pos.row), or on gtid. With -o FILE, the checkpoint
also records FILE's size, and a restart cuts FILE back to it first: FILE
holds whole transactions, each once.

A checkpoint is used only on the server history it belongs to (checked on
its GTIDs and binlog position; after a failover, a replica that logged its
GTIDs resumes it by GTID) and by one process at a time (FILE.lock). A
failure to write the checkpoint or -o stops the stream (exit 1).

The server needs binlog_format=ROW and binlog_row_metadata=FULL, and the
user REPLICATION SLAVE plus REPLICATION CLIENT (MariaDB: BINLOG MONITOR).

With --to mysql://…, the changes are applied to that server instead,
exactly once: it keeps its position in its binlogcdc.checkpoint table,
which wins over the start flags (see docs/replay.md).

--signal-table DB.TABLE (MariaDB): a row inserted there on the source
with type 'snapshot' and data 'db.t1,db.t2' copies those tables again
while the stream runs, chunk by chunk, each chunk in its own consistent
snapshot; the stream's changes to them are fitted to what was copied, and
a table not selected yet is added (see docs/snapshot.md, "Re-snapshot
tables while streaming").

--format debezium, maxwell or canal writes those tools' JSON instead of
binlogcdc's, to stdout, --output or --to kafka:// (see docs/formats.md).
` + profileUsage + `
Flags:
`

func runStreamArgs(ctx context.Context, args []string, stdout, stderr io.Writer, sig *signals) error {
	var o binlogcdc.StreamOptions
	f, err := parseFlags("stream", streamUsage, args, stderr, o.AddFlags)
	if err != nil {
		return err
	}
	if f.NArg() > 0 {
		return usageError{Msg: "stream takes no arguments", Hint: "to read files, use 'binlogcdc read FILE...'"}
	}
	if err := o.CheckFlags(f); err != nil {
		return err
	}
	return profiled(o.CPUProfile, o.MemProfile, func() error { // profile.go
		return runStream(ctx, o, stdout, stderr, sig)
	})
}

// runStream runs the stream; SIGINT/SIGTERM stop it gracefully (exit 0),
// also while it connects: it finishes its open transaction, anything
// else is cancelled.
func runStream(ctx context.Context, o binlogcdc.StreamOptions, stdout, stderr io.Writer, sig *signals) error {
	s := &binlogcdc.Stream{Options: o, Stdout: stdout, Log: stderr}
	sig.onStop(s.Stop, s.InTransaction)
	return s.Run(ctx)
}
