package main

import (
	"context"
	"io"

	"github.com/binlogcdc/binlogcdc"
)

const recoverUsage = `Usage: binlogcdc recover --table db.table [flags] FILE... (or ARCHIVE-DIR or s3://BUCKET/PREFIX, as for read)
       binlogcdc recover --table db.table --source mysql://user@host:port --from earliest [flags]

Rebuilds a table that was dropped or truncated from its row changes in the
binlogs, as it was just before the DROP (or TRUNCATE).

The binlogs are searched for the table's incarnations: each CREATE, DROP,
TRUNCATE, RENAME (both ways) of that name and DROP DATABASE of its database.
An incarnation renamed away and dropped under another name is followed.
--list prints them; by default the last one dropped or truncated is
recovered, --incarnation N or --before TIME picks another.

The table's schema is the binlog's CREATE TABLE statement when the
incarnation was created inside the binlogs, with the ALTER TABLEs that
followed it applied (each checked against the TABLE_MAPs after it); else
it is built from the table's last TABLE_MAP (binlog_row_metadata=FULL;
the output says what that cannot carry: defaults, secondary indexes…).
Rows written before an ALTER are converted as the server converted them;
what cannot be reproduced exactly is reported (see docs/recover.md).

Output: SQL on stdout (CREATE TABLE and multi-row INSERTs with exact
literals; the table is rebuilt in memory up to --memory-budget, then in a
temporary on-disk store under $TMPDIR, removed at exit; a transaction's
changes wait for its commit in a spill file there past 8 MiB: memory
stays bounded at any table and transaction size), or, with --to, the row changes applied to a server through
the replay machinery (exactly once; resumable; conflicts per --on-conflict).

With --source instead of files, the server's binlogs are read over the
replication protocol (for a managed server without file access), from
--start-position or --from earliest to the end of its binlog when the
command starts; they are read once per pass (two or three), nothing is
kept on disk but the
rebuilt rows above --memory-budget and the spill file of a big transaction.

A table older than the binlogs cannot be rebuilt from them alone: restore
your last backup, then run recover --to against that server with
--start-position at the backup's binlog position.
` + profileUsage + `
Flags:
`

func runRecoverArgs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o binlogcdc.RecoverOptions
	f, err := parseFlags("recover", recoverUsage, args, stderr, o.AddFlags)
	if err != nil {
		return err
	}
	o.Remote.Ctx = ctx // an s3:// archive's requests end at a signal
	files, cleanup, err := o.CheckFlags(f, f.Args())
	defer cleanup()
	if err != nil {
		return err
	}
	return profiled(o.CPUProfile, o.MemProfile, func() error { // profile.go
		return binlogcdc.Recover(ctx, o, files, stdout, stderr)
	})
}
