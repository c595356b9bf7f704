// Package archive keeps a server's binlog files: it follows the server as
// a replica (the project's own dump loop, binlog.LiveSource.NextRaw) and
// writes each file into a directory under the server's own name, byte for
// byte as the server has it, with an index and a manifest.
//
// What the server sends is not the file: each dump starts with an
// artificial ROTATE naming the file and a FORMAT_DESCRIPTION_EVENT (the
// file's own at offset 4, with its in-use flag cleared; a resent copy
// with log_pos 0 when the dump starts further in), and heartbeats come
// while the server is idle. The archiver writes the magic bytes itself,
// the file's FORMAT_DESCRIPTION_EVENT with the in-use flag set while the
// file is open (as the server's is, so that the open file is a prefix of
// the server's), every real event as it came, and clears the flag when
// the file ends with a ROTATE or STOP event. A file that ends because the
// server was killed keeps the flag set, as the server's does.
package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
)

// Start says where a new archive starts. The archive always holds whole
// files: it starts at the beginning of the file that holds the start.
type Start struct {
	Earliest bool   // the oldest binlog the server has
	Now      bool   // the server's current binlog
	File     string // this file
	GTID     string // the file holding the first transaction after this GTID set
}

// Config is an archiver's settings.
type Config struct {
	Dir  string
	Live binlog.LiveConfig // Flavor set
	// Source names the server in messages and the manifest (host:port).
	Source string
	// ServerID is the server's @@server_id (for the manifest).
	ServerID uint32
	Start    Start
	// Sync: fdatasync the open file each time the archive has caught up
	// with the server (or every SyncBytes written while catching up).
	Sync bool
	// Compress: "zstd" stores complete files zstd-compressed (compress.go).
	Compress string
	// Keep: what expires (keep.go); Upload: where complete files are sent
	// (nil: nowhere).
	Keep   Keep
	Upload Uploader
	// UploadOpenEvery: with Upload, send what the open file gained since
	// the last part this often (when the archive has caught up); 0: never.
	UploadOpenEvery time.Duration
	// StopAtEnd: copy up to the end of the server's binlog when the
	// archiver starts, then return.
	StopAtEnd bool
	// VerifyAll: check the checksum of every complete file at the start
	// (otherwise only the newest's, and every file's size).
	VerifyAll bool
	// Hash: the checksum algorithm of new files in the manifest,
	// HashXXH3 ("": the default) or HashSHA256 (sum.go).
	Hash string
	// Logf prints notes for the user (stderr).
	Logf func(format string, args ...any)
	// MaxRetry bounds the wait between reconnection attempts (default 30 s).
	MaxRetry time.Duration
}

// Run archives until ctx ends (then it returns ctx.Err(), with every whole
// event received written and the manifest saved) or, with StopAtEnd, until
// the end; a fatal problem (another server history, a purged file, a
// damaged stream or file, a failed write) returns an error. A lost
// connection is retried.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if err := CheckHash(cfg.Hash); err != nil {
		return err
	}
	if cfg.MaxRetry == 0 {
		cfg.MaxRetry = 30 * time.Second
	}
	d, err := openDir(cfg.Dir)
	if err != nil {
		return err
	}
	defer d.close()
	a := &archiver{cfg: cfg, d: d}
	if d.fresh {
		d.m.Source, d.m.Flavor, d.m.ServerID = cfg.Source, cfg.Live.Flavor, cfg.ServerID
	} else if d.m.Flavor != "" && d.m.Flavor != cfg.Live.Flavor {
		return &Error{Msg: fmt.Sprintf("the archive %s holds %s binlogs, but %s is %s", cfg.Dir, d.m.Flavor, cfg.Source, cfg.Live.Flavor),
			Hint: "archive each server history into its own directory"}
	}
	if err := d.verifySums(cfg.VerifyAll); err != nil {
		return err
	}
	for p := d.prev; p != nil && cfg.VerifyAll; p = p.prev {
		if err := p.verifySums(true); err != nil { // earlier server histories (history.go)
			return err
		}
	}
	if err := a.finishCompressed(); err != nil { // compress.go
		return err
	}
	if err := a.finishExpiry(); err != nil { // keep.go
		return err
	}
	if err := a.resumeOpen(); err != nil {
		return err
	}
	if cfg.StopAtEnd {
		if a.end, err = binlog.CurrentPosition(ctx, cfg.Live); err != nil {
			return err
		}
	}
	// Compression, uploads and expiry: in the background (worker.go).
	a.startWorker(ctx)
	err = a.loop(ctx)
	a.stopWorker()
	var refused *Error
	if errors.As(err, &refused) && !refused.Write {
		// Refused (another history, a purged file, …): what was received
		// is written, the manifest left as it was (a restart measures
		// the open file again).
		if ferr := a.flush(true); ferr != nil {
			return ferr
		}
		return err
	}
	if ferr := a.finish(); err == nil || errors.Is(err, errStop) {
		err = ferr
	}
	if err == nil && cfg.StopAtEnd && cfg.background() {
		// A one-shot backup ends with its files compressed, uploaded
		// and expired as far as they can be.
		err = a.pass(ctx, true)
	}
	return err
}

type archiver struct {
	cfg Config
	d   *dir
	cur *openFile // the newest file, open for writing; nil when the newest is complete or there is none
	// end: with StopAtEnd, where the server's binlog ended at the start.
	end      change.Position
	sessions int
	// The worker (worker.go): mu guards the manifests, a.d and a.cur
	// (the pointer, its entry and flushed) between it and the loop;
	// saveMu orders the manifest's writes; failures counts its failed
	// passes.
	bg       *worker
	mu       sync.Mutex
	saveMu   sync.Mutex
	failures atomic.Int64
	// sentManifest: the bucket manifest last uploaded, by history
	// directory (upload.go; the worker's alone).
	sentManifest map[string][]byte
}

// loop runs dump sessions, reconnecting after a lost connection.
func (a *archiver) loop(ctx context.Context) error {
	wait := time.Second
	for {
		connected, err := a.session(ctx)
		if err == nil || errors.Is(err, errStop) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !transient(err) || (a.sessions == 0 && !connected) {
			return err
		}
		if connected {
			wait = time.Second
		}
		if ferr := a.flush(true); ferr != nil {
			return ferr
		}
		a.cfg.Logf("the connection to %s ended (%v); reconnecting in %v", a.cfg.Source, err, wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, a.cfg.MaxRetry)
	}
}

// transient reports whether err is a lost or refused connection (a
// network cut, a server restarting), worth reconnecting after.
func transient(err error) bool {
	var ae *Error
	var me *mysql.MyError
	var ne net.Error
	var pe *binlog.PreflightError
	switch {
	case errors.As(err, &ae), errors.As(err, &pe):
		return false
	case errors.As(err, &me):
		// The server shutting down ends its dump threads with these.
		return me.Code == mysql.ER_SERVER_SHUTDOWN || me.Code == 1927 // MariaDB's ER_CONNECTION_KILLED
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.As(err, &ne),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	s := err.Error()
	return strings.Contains(s, "connection refused") || strings.Contains(s, "connection reset") || strings.Contains(s, "broken pipe") || strings.Contains(s, "i/o timeout")
}

// finish writes what was received and saves the manifest.
func (a *archiver) finish() error {
	if a.cur == nil {
		return nil
	}
	if err := a.flush(true); err != nil {
		return err
	}
	a.locked(func() { a.cur.entry.Size = uint64(a.cur.off) })
	return a.save(a.d)
}

// session is one connection: it works out where to resume, dumps from
// there and writes what comes until the connection ends. connected: the
// dump started.
func (a *archiver) session(ctx context.Context) (connected bool, err error) {
	hist, err := binlog.OpenHistory(ctx, a.cfg.Live)
	if err != nil {
		return false, err
	}
	files, err := hist.Binlogs(ctx)
	var sid uint32
	if err == nil {
		sid, err = hist.ServerID(ctx)
	}
	if err == nil && (a.d.pending || (a.d.m.ServerID != 0 && sid != a.d.m.ServerID)) {
		err = a.failover(ctx, hist, sid) // history.go
	}
	hist.Close()
	if err != nil {
		return false, err
	}
	if len(files) == 0 {
		return false, &binlog.PreflightError{Problem: "the server lists no binlogs", Hint: "is log_bin on?"}
	}
	p, err := a.plan(ctx, files)
	if err != nil {
		return false, err
	}
	src, err := binlog.DialLive(ctx, a.cfg.Live, change.Position{File: p.file, Offset: p.from}, "")
	if err != nil {
		return false, err
	}
	defer src.Close()
	a.sessions++
	a.cfg.Logf("connected to %s, archiving into %s from %s:%d", a.cfg.Source, a.cfg.Dir, p.file, p.from)
	st := &dumpState{a: a, plan: p}
	for {
		raw, err := src.NextRaw(ctx)
		if err != nil {
			if st.plan.verify && ctx.Err() == nil && !transient(err) {
				// The server cannot read an event where the archive's
				// last one starts.
				return true, &Error{Msg: fmt.Sprintf("the server %s has no event at %s:%d, where the archive %s has its last one (%v): the archive was written from another server history (or the server's binlog was reset)", a.cfg.Source, p.file, p.from, a.cfg.Dir, err),
					Hint: "archive each server history into its own directory"}
			}
			return true, err
		}
		if err := st.event(raw); err != nil {
			return true, err
		}
		if !src.Buffered() {
			if err := a.flush(false); err != nil {
				return true, err
			}
		}
	}
}
