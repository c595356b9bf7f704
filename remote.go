package binlogcdc

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/archive"
	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
)

// RemoteOptions are the flags of 'read --source' and 'recover --source':
// a server's binlogs read over the replication protocol instead of files.
type RemoteOptions struct {
	Conn      ConnOptions // --source and its connection flags
	StartGTID string      // --start-gtid
	From      string      // --from
	// S3Endpoint: --s3-endpoint, the store an s3:// archive is read from
	// ("": AWS S3), as archive's --upload-endpoint.
	S3Endpoint string
	// Ctx, if set, bounds the requests to the store of an s3:// archive
	// (CheckFlags plans the read and checks its files; the read then
	// opens them): cancelled, they stop.
	Ctx context.Context

	// Warnf, if set, is told when reading files stops at a ROTATE whose
	// file is not there (binlog.FileSource.Warnf).
	Warnf func(format string, args ...any)

	// archive: the FILE argument is an archive DIR (archiveread.go), which
	// takes --start-gtid too; arch is the part of it to read.
	archive bool
	arch    *archive.ReadPlan

	// Set by connect.
	cfg    binlog.LiveConfig
	end    change.Position
	remote bool
}

// AddFlags binds the flags. gtid: the command takes --start-gtid (read).
func (o *RemoteOptions) AddFlags(f *pflag.FlagSet, gtid bool) {
	o.Conn.AddFlags(f)
	f.Lookup("source").Usage = "read this server's binlogs over the replication protocol instead of files, up to the end of its binlog when the command starts (`DSN` mysql://user@host:port; port 3306 when left out)"
	if gtid {
		f.StringVar(&o.StartGTID, "start-gtid", "", "with --source or an archive DIR: start after the transactions in this GTID `SET` (MySQL uuid:1-100, MariaDB 0-1-100), e.g. a backup's")
	}
	f.StringVar(&o.From, "from", "", "with --source: `earliest` starts at the oldest binlog the server has")
	f.StringVar(&o.S3Endpoint, "s3-endpoint", "", "read an s3://BUCKET/PREFIX archive from the S3-compatible store at `URL` (http://host:port or https://…, as archive's --upload-endpoint) instead of AWS S3")
}

// Check checks the flags before anything connects: with --source no
// FILE arguments, one start (startPos: --start-position was given), and
// a DSN that parses; without it, none of the flags that need it.
func (o *RemoteOptions) Check(f *pflag.FlagSet, args []string, startPos bool) error {
	if o.S3Endpoint != "" && (len(args) != 1 || !isS3(args[0])) {
		return UsageError{Msg: "--s3-endpoint needs an s3://BUCKET/PREFIX archive to read", Hint: "binlogcdc read s3://backups/db1-binlogs --s3-endpoint http://127.0.0.1:9000"}
	}
	if o.Conn.Source == "" {
		for _, n := range []string{"start-gtid", "from", "password-file", "ssl-mode", "ssl-ca", "ssl-cert", "ssl-key", "server-id"} {
			if flagChanged(f, n) && !(o.archive && n == "start-gtid") {
				if n == "start-gtid" {
					return UsageError{Msg: "--start-gtid needs --source or an archive DIR", Hint: "--source mysql://repl@db1:3306, or the directory of 'binlogcdc archive'; with binlog files, --start-position FILE:POS"}
				}
				return UsageError{Msg: "--" + n + " needs --source", Hint: "--source mysql://repl@db1:3306 reads that server's binlogs; without it, give binlog files"}
			}
		}
		if o.StartGTID != "" && startPos {
			return UsageError{Msg: "give one start: --start-position or --start-gtid", Hint: "--start-gtid 0-1-100 (the GTID in a backup's mariadb_backup_binlog_info)"}
		}
		return nil
	}
	if len(args) > 0 {
		return UsageError{Msg: fmt.Sprintf("--source reads the server's binlogs: FILE arguments (%s) make no sense with it", strings.Join(args, " ")),
			Hint: "drop the files, or drop --source to read files"}
	}
	if o.From != "" && o.From != "earliest" {
		return UsageError{Msg: "--from: want earliest, not " + o.From, Hint: "--from earliest (read stops at the end of the binlog as it is when it starts; to follow new changes, use 'binlogcdc stream')"}
	}
	n := 0
	for _, set := range []bool{startPos, o.StartGTID != "", o.From != ""} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return UsageError{Msg: "--source needs a start: --start-position, --start-gtid or --from earliest",
			Hint: "--from earliest reads every binlog the server still has; --start-position binlog.000042:4 starts there"}
	case n > 1:
		return UsageError{Msg: "give one start: --start-position, --start-gtid or --from earliest", Hint: "--from earliest"}
	}
	if err := CheckStartGTID(o.StartGTID); err != nil { // args.go
		return err
	}
	_, err := o.Conn.LiveConfig("remote read")
	return err
}

// Connect checks the server (binlog.Preflight) and notes the end of its
// binlog now: reading stops there. Without --source it does nothing.
func (o *RemoteOptions) Connect(ctx context.Context, logf func(string, ...any)) error {
	if o.Conn.Source == "" {
		return nil
	}
	cfg, err := o.Conn.LiveConfig(fmt.Sprintf("remote read pid %d", os.Getpid()))
	if err != nil {
		return err
	}
	info, err := o.Conn.Preflight(ctx, &cfg) // dsn.go
	if err != nil {
		return err
	}
	if o.end, err = binlog.CurrentPosition(ctx, cfg); err != nil {
		return err
	}
	o.cfg, o.remote = cfg, true
	logf("reading the binlogs of %s (%s %s) up to %s:%d, the end of its binlog now", o.Conn.RedactedSource(), info.Flavor, info.Version, o.end.File, o.end.Offset)
	return nil
}

// Open returns the source to read: the server's binlogs from start (or
// the start flags when start is zero) to the end noted by connect, or
// the files.
func (o *RemoteOptions) Open(ctx context.Context, files []string, start change.Position) (binlog.Source, error) {
	if o.arch != nil {
		return o.openArchived(start) // archiveread.go
	}
	if !o.remote {
		return openFiles(files, start, o.Warnf)
	}
	gtid := ""
	if start.File == "" {
		switch {
		case o.StartGTID != "":
			gtid = o.StartGTID
		default: // --from earliest
			var err error
			if start, err = binlog.EarliestPosition(ctx, o.cfg); err != nil {
				return nil, err
			}
		}
	}
	return binlog.DialRemote(ctx, o.cfg, start, gtid, o.end)
}

// IsRemote reports whether Connect connected: the binlogs are the
// server's, not files.
func (o *RemoteOptions) IsRemote() bool { return o.remote }

// openFiles opens the binlog files from start, telling warnf (if set)
// where a ROTATE could not be followed.
func openFiles(files []string, start change.Position, warnf func(string, ...any)) (*binlog.FileSource, error) {
	src, err := binlog.OpenFiles(files, start)
	if err == nil {
		src.Warnf = warnf
	}
	return src, err
}

// resume is resumeFiles (replay.go) for the target's checkpoint cp: with
// --source, reading resumes at cp unless cp is at or past the end.
func (o *RemoteOptions) resume(files []string, cp change.Position) (start change.Position, done bool, err error) {
	if o.arch != nil {
		return o.resumeArchived(cp) // archiveread.go
	}
	if !o.remote {
		return resumeFiles(files, cp)
	}
	if !binlogBefore(cp, o.end) {
		return start, true, nil
	}
	return cp, false, nil
}

// binlogBefore reports whether a comes before b (file names of one
// server sort by their fixed-width numeric suffix).
func binlogBefore(a, b change.Position) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Offset < b.Offset
}

// infof returns a printer of notes to w.
func infof(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) { fmt.Fprintf(w, "binlogcdc: "+format+"\n", args...) }
}
