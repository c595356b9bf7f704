package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc"
	"github.com/binlogcdc/binlogcdc/archive"
	"github.com/binlogcdc/binlogcdc/archive/s3up"
	"github.com/binlogcdc/binlogcdc/binlog"
)

// ArchiveOptions are the flags of 'binlogcdc archive'.
type ArchiveOptions struct {
	Conn          ConnOptions
	Dir           string
	From          string
	StartPosition string
	StartGTID     string
	StopAtEnd     bool
	Sync          bool
	Compress      string
	KeepDays      float64
	KeepSize      string
	Upload        string
	UploadAt      string
	UploadOpen    time.Duration
	VerifyAll     bool
	Hash          string
	Heartbeat     time.Duration
	CPUProfile    string // debugging aids (profile.go)
	MemProfile    string
}

// AddFlags binds the flags.
func (o *ArchiveOptions) AddFlags(f *pflag.FlagSet) {
	o.Conn.AddFlags(f)
	f.Lookup("source").Usage = "server whose binlogs to keep: `mysql://user@host:port` (a password in the DSN works but shows in ps; prefer --password-file or MYSQL_PWD)"
	f.StringVar(&o.Dir, "dir", "", "archive directory (`DIR`): the binlog files under the server's names, an index and binlogcdc-archive.json; created if missing")
	f.StringVar(&o.From, "from", "", "a new archive starts `AT` earliest (the oldest binlog the server has; the default) or now (the beginning of the server's current binlog)")
	f.StringVar(&o.StartPosition, "start-position", "", "a new archive starts at the beginning of this binlog `FILE` (FILE:POS: the file that holds POS)")
	f.StringVar(&o.StartGTID, "start-gtid", "", "a new archive starts at the beginning of the binlog holding the first transaction after this GTID `SET`")
	f.BoolVar(&o.StopAtEnd, "stop-at-end", false, "copy the binlogs up to the server's position when the command starts, then exit 0 (a one-shot backup)")
	f.BoolVar(&o.Sync, "sync", false, "fdatasync the open file each time the archive has caught up with the server (see docs/archive.md for what each setting keeps after a power loss)")
	f.StringVar(&o.Compress, "compress", "", "store each complete file compressed: `ALGO` zstd (binlog.000042.zst; the manifest keeps the binlog's checksum and size and the compressed file's); crash-safe at every step")
	f.Float64Var(&o.KeepDays, "keep-days", 0, "remove complete files whose last event is older than `N` days (fractions work: 0.5), oldest first; never the open file, the newest one, or one not yet uploaded (0: keep all)")
	f.StringVar(&o.KeepSize, "keep-size", "", "remove the oldest complete files while DIR holds more than `SIZE` of binlogs (500MB, 10GB, 1TiB), with the same exceptions as --keep-days")
	f.StringVar(&o.Upload, "upload", "", "send each complete file (compressed, with --compress) to `s3://BUCKET/PREFIX`, checked by size and MD5; credentials only from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or MINIO_*) or ~/.aws/credentials; a file is expired only once uploaded")
	f.StringVar(&o.UploadAt, "upload-endpoint", "", "S3-compatible store at `URL` (http://host:port or https://…) instead of AWS S3")
	f.DurationVar(&o.UploadOpen, "upload-open-every", 0, "with --upload, also send what the open file gained every `DURATION` (5s), as NAME.part-OFFSET objects, removed once the whole file is uploaded: the loss window of the open file is about that long (0: only complete files)")
	f.BoolVar(&o.VerifyAll, "verify-all", false, "at the start, check the checksum of every complete file in DIR against the manifest (default: the newest one's, and every file's size)")
	f.StringVar(&o.Hash, "hash", "", "checksum `ALGO` of new files in the manifest: xxh3-64 (the default: fast) or sha256 (a \"sha256\" field, as sha256sum prints it); files hashed before keep theirs")
	f.DurationVar(&o.Heartbeat, "heartbeat", 10*time.Second, "server heartbeat period; no data for 3× this long counts as a network cut and reconnects")
	addProfileFlags(f, &o.CPUProfile, &o.MemProfile) // hidden; profile.go
}

const archiveUsage = `Usage: binlogcdc archive --source mysql://user@host:port --dir DIR [flags]

Follows a MySQL or MariaDB server as a replica and keeps its binlog files
in DIR under the server's own names, byte for byte as the server has them:
once the server has closed a file, the archived copy is identical to it
(cmp); the file being written is a prefix of the server's. DIR also holds
an index (binlog.index, as the server's: 'binlogcdc read DIR/binlog.index')
and a manifest, binlogcdc-archive.json: for each file its size, whether it
is complete, its checksum once complete, its first and last GTID and event
time.

Runs until stopped (SIGINT/SIGTERM: writes what it received, saves the
manifest, exits 0); with --stop-at-end it copies the binlogs up to the
server's position at the start and exits 0.

Start: an existing archive continues where DIR ends (the start flags are
then ignored); a new one starts at the beginning of a file: --from earliest
(the default), --from now, --start-position FILE[:POS] or --start-gtid SET.

Safe to kill: a restart cuts a torn event at the end of the open file back
(and says so) and asks the server for the archive's last event again,
which must be the same byte for byte: nothing is written twice or skipped,
and a DIR written from another server history is refused. A lost
connection (a network cut, the server restarting) is retried. A file
purged on the server before it was archived is an error naming it. Every
event's CRC32 and log_pos are checked as it arrives. One archiver per DIR
(DIR/binlogcdc-archive.lock).

Failover (MySQL and MariaDB): with --source a promoted replica (another
server_id) that has logged the archive's last transaction with the same
changes, the archive goes on by GTID in DIR/history-2; any other server
is refused (docs/archive.md, "Failover").

Durability: a complete file is fsynced before the manifest says so. The
open file is written when the archive has caught up with the server (and
every 1 MiB while catching up); with --sync it is also fdatasynced then,
so that after a power loss DIR holds at least what it held when the
archive last caught up.

The user needs REPLICATION SLAVE and REPLICATION CLIENT (MariaDB: BINLOG
MONITOR); any binlog_format.
` + profileUsage + `
Flags:
`

func runArchiveArgs(ctx context.Context, args []string, stdout, stderr io.Writer, sig *signals) error {
	var o ArchiveOptions
	f, err := parseFlags("archive", archiveUsage, args, stderr, o.AddFlags)
	if err != nil {
		return err
	}
	start, err := o.check(f)
	if err != nil {
		return err
	}
	var up archive.Uploader
	if o.Upload != "" {
		t, err := s3up.New(o.Upload, o.UploadAt)
		if err != nil {
			return badArchiveFlag("--upload: "+err.Error(), "--upload s3://backups/db1-binlogs")
		}
		up = t
	}
	keep := archive.Keep{Age: time.Duration(o.KeepDays * 24 * float64(time.Hour))}
	if o.KeepSize != "" {
		keep.Size, _ = archive.ParseSize(o.KeepSize) // checked by check
	}
	cfg, err := o.Conn.LiveConfig("archive " + absPath(o.Dir))
	if err != nil {
		return err
	}
	cfg.Heartbeat = o.Heartbeat
	cfg.AnnotateRows = true                                           // every event of the file
	info, err := o.Conn.PreflightWith(ctx, &cfg, binlog.PreflightRaw) // dsn.go
	if err != nil {
		return err
	}
	logf := cmdInfof(stderr)
	stopping := sig.onStop(func() {}, func() bool { return false })
	return profiled(o.CPUProfile, o.MemProfile, func() error { // profile.go: an error writing a profile is returned
		err := archive.Run(ctx, archive.Config{
			Dir:             o.Dir,
			Live:            cfg,
			Source:          net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))),
			ServerID:        info.ServerID,
			Start:           start,
			Sync:            o.Sync,
			Compress:        o.Compress,
			Keep:            keep,
			Upload:          up,
			UploadOpenEvery: o.UploadOpen,
			VerifyAll:       o.VerifyAll,
			Hash:            o.Hash,
			StopAtEnd:       o.StopAtEnd,
			Logf:            logf,
		})
		if errors.Is(err, context.Canceled) && stopping() {
			return nil
		}
		return err
	})
}

// check checks the flags before anything connects or is written.
func (o *ArchiveOptions) check(f *pflag.FlagSet) (archive.Start, error) {
	var s archive.Start
	if f.NArg() > 0 {
		return s, usageError{Msg: "archive takes no arguments: " + strings.Join(f.Args(), " "), Hint: "binlogcdc archive --source mysql://repl@db1:3306 --dir /backup/binlogs"}
	}
	if o.Dir == "" {
		return s, usageError{Msg: "--dir is required", Hint: "--dir /backup/binlogs (created if missing)"}
	}
	if o.Compress != "" && o.Compress != "zstd" {
		return s, badArchiveFlag("--compress: want zstd, not "+o.Compress, "--compress zstd")
	}
	if err := archive.CheckHash(o.Hash); err != nil {
		return s, badArchiveFlag(err.Error(), "--hash sha256")
	}
	if o.KeepDays < 0 {
		return s, badArchiveFlag("--keep-days must not be negative", "--keep-days 30")
	}
	if o.KeepSize != "" {
		if _, err := archive.ParseSize(o.KeepSize); err != nil {
			return s, badArchiveFlag("--keep-size "+err.Error(), "--keep-size 10GB")
		}
	}
	if o.Upload != "" {
		if _, _, err := s3up.ParseURL(o.Upload); err != nil {
			return s, badArchiveFlag("--upload "+err.Error(), "--upload s3://backups/db1-binlogs")
		}
	} else if o.UploadAt != "" || o.UploadOpen != 0 {
		return s, badArchiveFlag("--upload-endpoint and --upload-open-every need --upload", "--upload s3://backups/db1-binlogs --upload-endpoint http://127.0.0.1:9000")
	}
	if o.UploadOpen < 0 {
		return s, badArchiveFlag("--upload-open-every must not be negative", "--upload-open-every 5s")
	}
	if o.Heartbeat <= 0 {
		return s, usageError{Msg: "--heartbeat must be positive", Hint: "--heartbeat 10s"}
	}
	s, err := o.start()
	if err != nil {
		return s, err
	}
	for flag, in := range binlogcdc.ConnFiles(o.Conn) { // args.go
		if in != "" && inDir(in, o.Dir) {
			return s, usageError{Msg: fmt.Sprintf("%s %s is inside --dir %s, which holds only the archive", flag, in, o.Dir), Hint: "keep the file elsewhere"}
		}
	}
	return s, nil
}

// start checks --from, --start-position and --start-gtid: where the
// archive starts when DIR is empty.
func (o *ArchiveOptions) start() (archive.Start, error) {
	var s archive.Start
	n := 0
	for _, set := range []bool{o.From != "", o.StartPosition != "", o.StartGTID != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return s, usageError{Msg: "give one start: --from, --start-position or --start-gtid", Hint: "--from earliest"}
	}
	switch o.From {
	case "", "earliest":
		s.Earliest = true
	case "now":
		s.Now = true
	default:
		return s, usageError{Msg: "--from: want earliest or now, not " + o.From, Hint: "--from earliest"}
	}
	if o.StartPosition != "" {
		s.Earliest = false
		file, _, _ := strings.Cut(o.StartPosition, ":")
		if file == "" || strings.ContainsAny(file, "/\\") {
			return s, usageError{Msg: "--start-position " + o.StartPosition + ": want a binlog file name, FILE or FILE:POS", Hint: "--start-position binlog.000042"}
		}
		s.File = file
	}
	if o.StartGTID != "" {
		s.Earliest = false
		if err := binlogcdc.CheckStartGTID(o.StartGTID); err != nil { // args.go
			return s, err
		}
		s.GTID = o.StartGTID
	}
	return s, nil
}

// inDir reports whether path lies in directory dir.
func inDir(path, dir string) bool {
	p, d := absPath(path), absPath(dir)
	return strings.HasPrefix(p, d+string(filepath.Separator))
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// archiveError prints an archive.Error (report, main.go).
func archiveError(e *archive.Error, stderr io.Writer) int {
	fmt.Fprintf(stderr, "binlogcdc: %s\n", e.Msg)
	if e.Hint != "" {
		fmt.Fprintf(stderr, "hint: %s\n", e.Hint)
	}
	return exitError
}

// badArchiveFlag is the usage error of one of archive's flags.
func badArchiveFlag(msg, hint string) error { return usageError{Msg: msg, Hint: hint} }
