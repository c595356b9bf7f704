package main

import (
	"context"
	"io"

	"github.com/binlogcdc/binlogcdc"
)

const readUsage = `Usage: binlogcdc read [flags] FILE...
       binlogcdc read [flags] ARCHIVE-DIR
       binlogcdc read [flags] s3://BUCKET/PREFIX
       binlogcdc read --source mysql://user@host:port --from earliest [flags]

Decodes binlog files into JSON lines on stdout: one object per row change,
with column names and types as they were when the change was written (see
docs/json.md for the format, docs/read.md for this command).

FILE may be binlog files (binlog.000001 binlog.000002 …, also gzip- or
zstd-compressed: binlog.000001.gz), the server's .index file, or - for one
binlog on stdin. The files are read in sequence order, whatever order they were
given in; a gap in the sequence is refused. A ROTATE to the next file is
followed when that file was given or sits in the same directory, plain or
compressed (.gz, .zst); when it is not there, a warning says so, and a gap
(a later file of the series is there) stops the run with exit code 4.
Stdin is decoded as it arrives, each transaction written at its commit.
No output (-o, profiles) may be an input file or any file of its series
beside it. A mistake in which files were named exits with code 2.

ARCHIVE-DIR is a directory 'binlogcdc archive --dir' writes: the files to
read are picked from its manifest by --start-position, --start-gtid,
--start-datetime and the stop flags, without opening the others; each
complete file picked must have the checksum the manifest gives, every file
it lists must be there, and the file still being written is read up to
its last whole transaction. Times are UTC (see docs/archive.md).
s3://BUCKET/PREFIX reads the archive 'binlogcdc archive --upload' sends
there (its manifest and files), in the same way: only the files picked
are downloaded, each checked before anything of it is output;
--s3-endpoint for a store other than AWS S3; credentials from
AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or MINIO_*) or ~/.aws/credentials.

--stop-before 'DROP TABLE db.t' (or 'DELETE db.t', --stop-before-gtid)
stops right before the first such transaction, for a point-in-time
restore: restore a backup, then apply the archive from the backup's
binlog position with --to (docs/archive.md, "Point-in-time restore").
--find lists the matching transactions and where each starts.

With --source instead of files, the server's binlogs are read over the
replication protocol (like mysqlbinlog --read-from-remote-server), from
--start-position, --start-gtid or --from earliest up to the end of its
binlog when the command starts (or --stop-position/--stop-datetime), and
the output is what reading the same files gives. The user needs
REPLICATION SLAVE and REPLICATION CLIENT (MariaDB: BINLOG MONITOR).

The server must have written the binlog with binlog_format=ROW and
binlog_row_metadata=FULL (MySQL 8.0+, MariaDB 10.5+); otherwise binlogcdc
stops with an error that says how to fix the server.

With --to, the changes are applied to a MySQL/MariaDB server instead,
exactly once (it keeps its position in its binlogcdc.checkpoint table);
--format sql writes them as SQL, --flashback the SQL that undoes them (see
docs/replay.md). --format debezium, maxwell or canal writes those tools'
JSON instead of binlogcdc's, also to --to kafka:// (see docs/formats.md,
docs/kafka.md).
` + profileUsage + `
Flags:
`

func runReadArgs(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	var o binlogcdc.ReadOptions
	f, err := parseFlags("read", readUsage, args, stderr, o.AddFlags)
	if err != nil {
		return err
	}
	o.Remote.Ctx = ctx // an s3:// archive's requests end at a signal
	files, cleanup, err := o.CheckFlags(f, f.Args())
	defer cleanup()
	if err != nil {
		return err
	}
	// One CPU for a replay on one connection on a small machine (procs.go).
	setReplayProcs(o.Replay.Parallel, o.Replay.LoadData, o.Replay.To)
	return profiled(o.CPUProfile, o.MemProfile, func() error { // profile.go
		return binlogcdc.Read(ctx, o, files, stdout, stderr)
	})
}
