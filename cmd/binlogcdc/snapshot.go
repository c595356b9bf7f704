package main

import (
	"context"
	"io"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc"
)

const snapshotUsage = `Usage: binlogcdc snapshot --source mysql://user@host:port [flags]

Copies the selected tables as they are at one binlog position, without
stopping the server, then prints that position (file:pos and GTID
position) and saves it with --checkpoint: 'binlogcdc stream --checkpoint
FILE' (or --to the same target) then continues from exactly there, so
every change is delivered once.

Rows are JSON lines with "op":"snapshot" and "after" only (stdout or -o),
encoded exactly as 'read' encodes the same values from a binlog; with
--to mysql://… they are inserted into the target (tables created when
missing, exactly once: see docs/snapshot.md); with --to kafka://…
they are published like inserts, keyed by primary key.

MariaDB: START TRANSACTION WITH CONSISTENT SNAPSHOT and the
binlog_snapshot_file/position status give the exact position without any
lock. MySQL: FLUSH TABLES WITH READ LOCK is held for the moment the
snapshot starts (needs RELOAD). The user needs SELECT on the tables, and
what stream needs (REPLICATION SLAVE, REPLICATION CLIENT or BINLOG
MONITOR). Tables must be InnoDB (see --allow-non-transactional).
Views, sequences and system-versioned tables are not copied: each is
named on stderr with why. A --tables pattern (a name or a glob) that
selects no table to copy (no such table, only a view, only excluded
tables) is an error (exit code 1), before anything is copied.

Killed part-way (kill -9 included), the same command continues from the
last finished chunk (with --checkpoint, or on the --to mysql:// target):
the rest is read in a new consistent snapshot at a later position, and
the stream that follows reconciles its changes with the parts (see
docs/snapshot.md, "Resuming a snapshot after kill -9"). A DDL on the tables since
the first part makes it take the snapshot again as a whole.

Flags:
`

func runSnapshotArgs(ctx context.Context, args []string, stdout, stderr io.Writer, sig *signals) error {
	var o binlogcdc.StreamOptions
	f, err := parseFlags("snapshot", snapshotUsage, args, stderr, func(f *pflag.FlagSet) {
		o.AddFlags(f)
		for _, n := range []string{"start-position", "start-gtid", "from", "checkpoint-interval", "heartbeat", "snapshot", "ddl",
			"metrics-addr", "health-window", "kafka-exactly-once", "kafka-replica-name", "kafka-transaction-timeout",
			"keep-dropped", "replay-accounts", "omit-columns", "create-tables", "fire-triggers", "on-conflict",
			"signal-table", "snapshot-chunk", "snapshot-new-tables", "verify-every", "verify-on-diff"} {
			if f.Lookup(n) != nil {
				f.MarkHidden(n)
			}
		}
		if c := f.Lookup("checkpoint"); c != nil {
			c.Usage = "save the snapshot's progress and then its position to `FILE` (new, or an unfinished snapshot's: it is continued), for 'binlogcdc stream --checkpoint FILE'"
		}
	})
	if err != nil {
		return err
	}
	if f.NArg() > 0 {
		return usageError{Msg: "snapshot takes no arguments", Hint: "--tables shop.orders"}
	}
	if err := o.CheckSnapshotFlags(f); err != nil {
		return err
	}
	return profiled(o.CPUProfile, o.MemProfile, func() error { // profile.go
		return runStream(ctx, o, stdout, stderr, sig)
	})
}
