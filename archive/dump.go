package archive

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
)

// plan is where a dump session starts.
type plan struct {
	file string
	from uint64
	// verify: the event at file:from is the archive's last one already
	// (file's end is at vEnd): the server's copy must be the same, byte
	// for byte, and is not written again. It proves that the archive and
	// the server share one history up to the archive's end.
	verify bool
	vEnd   int64
}

// plan works out where the next dump starts, from the archive's end and
// the server's binlog files.
func (a *archiver) plan(ctx context.Context, files []string) (plan, error) {
	last := a.d.m.last()
	switch {
	case a.cur != nil:
		o := a.cur
		if !slices.Contains(files, o.entry.Name) {
			return plan{}, a.purgedOpen(o.entry.Name, o.off, files)
		}
		if o.lastStart == 0 {
			return plan{file: o.entry.Name, from: 4}, nil
		}
		return plan{file: o.entry.Name, from: uint64(o.lastStart), verify: true, vEnd: o.off}, nil
	case last != nil:
		if slices.Contains(files, last.Name) {
			return plan{file: last.Name, from: uint64(last.LastEvent), verify: true, vEnd: int64(last.Size)}, nil
		}
		// The archive's newest file is complete and gone from the server:
		// go on with the server's oldest if it is the next one.
		if err := successor(last.Name, files[0], a.cfg.Source); err != nil {
			return plan{}, err
		}
		if err := a.startFile(files[0]); err != nil {
			return plan{}, err
		}
		return plan{file: files[0], from: 4}, nil
	}
	if sw := a.d.m.Switch; sw != nil {
		// A history after a failover starts with the file the new
		// server's dump named (history.go).
		if !slices.Contains(files, sw.FirstFile) {
			return plan{}, &Error{Msg: fmt.Sprintf("%s, where the archive goes on after GTID position %s, was purged on the server %s before it was archived (the server's oldest binlog is now %s)", sw.FirstFile, sw.After, a.cfg.Source, files[0]),
				Hint: "the transactions after that position are gone from the server; start a new archive in another directory"}
		}
		if err := a.startFile(sw.FirstFile); err != nil {
			return plan{}, err
		}
		return plan{file: sw.FirstFile, from: 4}, nil
	}
	name, err := a.startName(ctx, files)
	if err != nil {
		return plan{}, err
	}
	if err := a.startFile(name); err != nil {
		return plan{}, err
	}
	return plan{file: name, from: 4}, nil
}

// purgedOpen is the error for an open file that the server no longer has.
func (a *archiver) purgedOpen(name string, off int64, files []string) error {
	return &Error{Msg: fmt.Sprintf("%s was purged on the server %s before it was archived: the archive holds it up to offset %d, not to its end (the server's oldest binlog is now %s)", name, a.cfg.Source, off, files[0]),
		Hint: "the rest of that file is gone from the server; start a new archive in another directory (--from earliest), and keep the binlogs longer (binlog_expire_logs_seconds) than the archiver may be down"}
}

// startName is the file a new archive starts with (Config.Start).
func (a *archiver) startName(ctx context.Context, files []string) (string, error) {
	s := a.cfg.Start
	switch {
	case s.File != "":
		if !slices.Contains(files, s.File) {
			return "", &Error{Msg: fmt.Sprintf("the server %s has no binlog %s (it has %s … %s)", a.cfg.Source, s.File, files[0], files[len(files)-1]),
				Hint: "give a file SHOW BINARY LOGS lists, or --from earliest"}
		}
		return s.File, nil
	case s.Now:
		p, err := binlog.CurrentPosition(ctx, a.cfg.Live)
		return p.File, err
	case s.GTID != "":
		// The server announces the file that holds the first transaction
		// after the set with the dump's first event, an artificial ROTATE.
		src, err := binlog.DialLive(ctx, a.cfg.Live, change.Position{}, s.GTID)
		if err != nil {
			return "", err
		}
		defer src.Close()
		raw, err := src.NextRaw(ctx)
		if err != nil {
			return "", err
		}
		if h := parseHeader(raw); h.typ == replication.ROTATE_EVENT {
			if _, name, ok := rotateTarget(raw); ok {
				return name, nil
			}
		}
		return "", &Error{Msg: fmt.Sprintf("the server %s did not name the binlog file of --start-gtid %s", a.cfg.Source, s.GTID)}
	}
	return files[0], nil
}

// dumpState follows one dump session's events.
type dumpState struct {
	a    *archiver
	plan plan
	file string // the file the dump is in, from its last artificial ROTATE
}

// event handles one event as the server sent it.
func (st *dumpState) event(raw []byte) error {
	a := st.a
	if len(raw) < binlog.HeaderSize {
		return st.corrupt(fmt.Sprintf("an event of %d bytes", len(raw)))
	}
	h := parseHeader(raw)
	if int(h.size) != len(raw) {
		return st.corrupt(fmt.Sprintf("an event whose header says %d bytes came with %d", h.size, len(raw)))
	}
	switch {
	case h.heartbeat():
		if a.cfg.StopAtEnd && st.file != "" && !before(change.Position{File: st.file, Offset: uint64(h.logPos)}, a.end) && !st.plan.verify {
			return errStop
		}
		return nil
	case h.typ == replication.ROTATE_EVENT && (h.artificial() || h.logPos == 0):
		return st.rotate(raw)
	case h.typ == replication.FORMAT_DESCRIPTION_EVENT && h.logPos == 0, h.artificial():
		// The FDE resent at the start of a dump inside a file, MariaDB's
		// fake GTID_LIST: not in the file.
		return nil
	}
	if st.file == "" {
		return st.corrupt(fmt.Sprintf("a %v event before the artificial ROTATE naming its file", h.typ))
	}
	if st.plan.verify {
		return st.verify(h, raw)
	}
	o := a.cur
	if o == nil || o.entry.Name != st.file {
		return st.corrupt(fmt.Sprintf("a %v event of %s after the file was complete", h.typ, st.file))
	}
	if err := st.check(h, raw, o.off); err != nil {
		return err
	}
	if h.typ == replication.FORMAT_DESCRIPTION_EVENT {
		if o.off != 4 {
			return st.corrupt(fmt.Sprintf("a FORMAT_DESCRIPTION_EVENT at offset %d", o.off))
		}
	} else if !o.fde {
		return st.corrupt(fmt.Sprintf("a %v event before the file's FORMAT_DESCRIPTION_EVENT", h.typ))
	}
	if err := a.write(h, raw); err != nil {
		return err
	}
	switch h.typ {
	case replication.ROTATE_EVENT:
		if err := a.closeFile("rotate"); err != nil {
			return err
		}
	case replication.STOP_EVENT:
		if err := a.closeFile("stop"); err != nil {
			return err
		}
	}
	return st.atEnd(st.file, o.off)
}

// check checks a real event at off of the dump's file: its CRC32, and
// that its log_pos says it ends where its size says (MariaDB 11.4+
// writes log_pos 0 inside transactions: nothing to check then).
func (st *dumpState) check(h header, raw []byte, off int64) error {
	o := st.a.cur
	if h.typ == replication.FORMAT_DESCRIPTION_EVENT {
		crc, err := binlog.FDEChecksum(raw)
		if err != nil {
			return st.corruptAt(off, err.Error())
		}
		if o != nil && o.entry.Name == st.file {
			o.crc, o.fde = crc, true
		}
	}
	// A complete file's last event, compared byte for byte, needs no CRC.
	if o != nil && o.entry.Name == st.file && o.crc {
		if err := binlog.VerifyChecksum(raw); err != nil {
			return st.corruptAt(off, err.Error())
		}
	}
	if h.logPos != 0 && int64(h.logPos) != off+int64(h.size) {
		return st.corruptAt(off, fmt.Sprintf("a %v event of %d bytes whose log_pos is %d, not %d: the stream skipped or repeated bytes", h.typ, h.size, h.logPos, off+int64(h.size)))
	}
	return nil
}

// rotate handles an artificial ROTATE: the dump is in, or goes on to, the
// file it names.
func (st *dumpState) rotate(raw []byte) error {
	a := st.a
	pos, name, ok := rotateTarget(raw)
	if !ok {
		return st.corrupt("an artificial ROTATE event that names no file")
	}
	if st.file == "" {
		// The dump's first event: the file and offset asked for.
		if name != st.plan.file || pos != st.plan.from {
			return st.corrupt(fmt.Sprintf("the dump starts at %s:%d, not at %s:%d as asked", name, pos, st.plan.file, st.plan.from))
		}
		st.file = name
		return nil
	}
	if name == st.file {
		return nil
	}
	if st.plan.verify {
		return st.corrupt(fmt.Sprintf("the dump went on to %s before it sent %s:%d", name, st.plan.file, st.plan.from))
	}
	if pos != 4 {
		return st.corrupt(fmt.Sprintf("the dump goes on to %s at offset %d, not 4", name, pos))
	}
	if o := a.cur; o != nil {
		if o.lastStart == 0 {
			return st.corrupt(fmt.Sprintf("the dump went on to %s before any event of %s", name, o.entry.Name))
		}
		// The file ends without a ROTATE or STOP event: the server was
		// killed while it was open, and started a new one.
		a.cfg.Logf("%s ends at %d without a ROTATE or STOP event (the server stopped without closing it); the archive goes on with %s", o.entry.Name, o.off, name)
		if err := a.closeFile("crash"); err != nil {
			return err
		}
	}
	if a.cfg.StopAtEnd && name > a.end.File {
		return errStop
	}
	if err := a.startFile(name); err != nil {
		return err
	}
	st.file = name
	return nil
}

// verify compares the server's event at the plan's start with the
// archive's last event. On a match the dump goes on after it; a torn
// event after it in the open file is cut back now.
func (st *dumpState) verify(h header, raw []byte) error {
	a, p := st.a, st.plan
	if err := st.check(h, raw, int64(p.from)); err != nil {
		return err
	}
	// Opened under a.mu: the worker may compress the file meanwhile, and
	// removes the plain one only after the manifest names the copy.
	var f io.ReadCloser
	var err error
	a.locked(func() {
		path := filepath.Join(a.d.path, p.file)
		if e := a.d.m.last(); e != nil && e.Name == p.file {
			path = filepath.Join(a.d.path, e.stored())
		}
		f, err = openArchived(path) // events.go: plain or .zst
	})
	same := err == nil && sameOnDisk(f, int64(p.from), raw)
	if f != nil {
		f.Close()
	}
	if int64(p.from)+int64(len(raw)) != p.vEnd || !same {
		return &Error{Msg: fmt.Sprintf("the server %s has another event at %s:%d than the archive %s: the archive was written from another server history (or the server's binlog was reset)", a.cfg.Source, p.file, p.from, a.cfg.Dir),
			Hint: "archive each server history into its own directory"}
	}
	st.plan.verify = false
	if o := a.cur; o != nil && o.entry.Name == p.file && o.w == nil {
		if o.torn > 0 {
			a.cfg.Logf("cut back %d bytes of a torn event at the end of %s (offset %d), written again from the server", o.torn, o.path, o.off)
			if err := o.f.Truncate(o.off); err != nil {
				return o.writeErr(err)
			}
			o.torn = 0
		}
		if err := o.begin(); err != nil {
			return err
		}
		// Killed after the file's last event was written, before the
		// manifest said it is complete.
		switch h.typ {
		case replication.ROTATE_EVENT:
			err = a.closeFile("rotate")
		case replication.STOP_EVENT:
			err = a.closeFile("stop")
		}
		if err != nil {
			return err
		}
	}
	return st.atEnd(p.file, p.vEnd)
}

// atEnd returns errStop when a --stop-at-end archive reached the end.
func (st *dumpState) atEnd(file string, off int64) error {
	if st.a.cfg.StopAtEnd && !before(change.Position{File: file, Offset: uint64(off)}, st.a.end) {
		return errStop
	}
	return nil
}

// sameOnDisk reports whether the archived file f holds raw at off (the
// in-use flag of a FORMAT_DESCRIPTION_EVENT at 4 aside).
func sameOnDisk(f io.Reader, off int64, raw []byte) bool {
	if _, err := io.CopyN(io.Discard, f, off); err != nil {
		return false
	}
	r := io.LimitReader(f, int64(len(raw)))
	buf := make([]byte, 64<<10)
	for at := 0; at < len(raw); {
		n, err := io.ReadFull(r, buf[:min(len(buf), len(raw)-at)])
		if err != nil {
			return false
		}
		got, want := buf[:n], raw[at:at+n]
		if off == 4 && at == 0 && n > flagsOffset {
			got, want = bytes.Clone(got), bytes.Clone(want)
			got[flagsOffset] &^= byte(replication.LOG_EVENT_BINLOG_IN_USE_F)
			want[flagsOffset] &^= byte(replication.LOG_EVENT_BINLOG_IN_USE_F)
		}
		if !bytes.Equal(got, want) {
			return false
		}
		at += n
	}
	return true
}

func (st *dumpState) corrupt(what string) error {
	return &binlog.Error{Pos: change.Position{File: st.file}, Err: fmt.Errorf("the replication stream holds %s", what),
		Hint: "nothing of it was written; a proxy or the network garbled the stream, or the server is broken"}
}

func (st *dumpState) corruptAt(off int64, what string) error {
	return &binlog.Error{Pos: change.Position{File: st.file, Offset: uint64(off)}, Err: fmt.Errorf("the replication stream holds %s", what),
		Hint: "nothing of it was written; a proxy or the network garbled the stream, or the server is broken"}
}

// before reports whether a comes before b (file names of one server sort
// by their fixed-width numeric suffix).
func before(a, b change.Position) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Offset < b.Offset
}
