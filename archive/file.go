package archive

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
)

// openFile is the archive's newest file while it is written.
type openFile struct {
	entry     *FileEntry
	path      string
	f         *os.File
	w         *bufio.Writer // nil until the dump has confirmed the file's end (resume)
	off       int64         // bytes in the file, buffered ones included
	lastStart int64         // where the last whole event starts (0: none)
	torn      int64         // bytes after off on disk: cut back once the dump confirmed off
	crc, fde  bool
	sum       digest // over [0, off), the FDE's in-use flag cleared
	stats     stats  // of the events written, put into entry by publish
	// flushed: the bytes written out, for the worker (under a.mu).
	flushed int64
}

// stats are the open file's manifest fields as its events come. The loop
// keeps them here and puts them into the entry (publish, under a.mu) when
// it writes the file out or saves the manifest: the worker never sees an
// entry change under it, and no event costs a formatted GTID or time.
type stats struct {
	firstGTID           string
	gtidEv              [160]byte // the last GTID event's first bytes (a tagged one: its tag too)
	gtidLen             int
	gtidH               header
	firstWhen, lastWhen uint32
	timed, dirty        bool
	prevGTIDs           *string // MySQL's PREVIOUS_GTIDS (mysqlgtid.go)
}

func (s *stats) note(h header, raw []byte) {
	if h.typ == replication.MARIADB_GTID_EVENT || h.typ == replication.GTID_EVENT || h.typ == replication.GTID_TAGGED_LOG_EVENT {
		s.gtidLen, s.gtidH = copy(s.gtidEv[:], raw), h
		if s.firstGTID == "" {
			s.firstGTID = gtidOf(h, raw)
		}
	}
	if !s.timed {
		s.firstWhen, s.timed = h.when, true
	}
	s.lastWhen, s.dirty = h.when, true
}

// publish puts the open file's stats and what was written out into its
// manifest entry; the loop calls it.
func (a *archiver) publish() {
	o := a.cur
	if o == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if o.w != nil && o.w.Buffered() == 0 {
		o.flushed = o.off
	}
	s := &o.stats
	if !s.dirty {
		return
	}
	s.dirty = false
	e := o.entry
	if e.FirstGTID == "" {
		e.FirstGTID = s.firstGTID
	}
	if e.PreviousGTIDs == nil {
		e.PreviousGTIDs = s.prevGTIDs
	}
	if s.gtidLen > 0 {
		if g := gtidOf(s.gtidH, s.gtidEv[:s.gtidLen]); g != "" {
			e.LastGTID = g
		}
	}
	if e.FirstTime == "" {
		e.FirstTime = eventTime(s.firstWhen)
	}
	e.LastTime = eventTime(s.lastWhen)
}

// resumeOpen takes up the newest file of an existing archive when it is
// not complete: its end is measured again (scanOpen), since the manifest
// is not rewritten for each event.
func (a *archiver) resumeOpen() error {
	e := a.d.m.last()
	if e == nil || e.Complete {
		return nil
	}
	path := filepath.Join(a.d.path, e.Name)
	s, err := scanHashed(path, e, a.cfg.hashAlgo())
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return &Error{Msg: fmt.Sprintf("cannot open %s: %v", path, err), Write: true}
	}
	stats := s.stats
	a.mu.Lock()
	e.UploadedUpto = min(e.UploadedUpto, s.end)
	e.FirstGTID, e.LastGTID, e.FirstTime, e.LastTime = stats.FirstGTID, stats.LastGTID, stats.FirstTime, stats.LastTime
	e.PreviousGTIDs = stats.PreviousGTIDs
	a.cur = &openFile{entry: e, path: path, f: f, off: s.end, lastStart: s.lastStart, torn: s.torn, crc: s.crc, fde: s.fde, sum: s.sum, flushed: s.end}
	a.mu.Unlock()
	if s.lastStart == 0 {
		// Not even the FORMAT_DESCRIPTION_EVENT is whole: start the file
		// again (the server sends that event first).
		if s.end+s.torn > 0 {
			a.cfg.Logf("%s holds only %d bytes, less than its first event: written again from its start", path, s.end+s.torn)
		}
		a.cur.off, a.cur.torn, a.cur.sum, a.cur.flushed = 0, 0, newDigest(a.cfg.hashAlgo()), 0
		if err := f.Truncate(0); err != nil {
			return &Error{Msg: fmt.Sprintf("cannot truncate %s: %v", path, err), Write: true}
		}
		return a.cur.begin()
	}
	return nil
}

// begin sets up writing at off (after a resumed file's end was
// confirmed), writing the magic bytes into an empty file.
func (o *openFile) begin() error {
	if _, err := o.f.Seek(o.off, io.SeekStart); err != nil {
		return o.writeErr(err)
	}
	o.w = bufio.NewWriterSize(o.fileWriter(), 1<<20) // testhook.go
	if o.off == 0 {
		o.w.Write(binlog.Magic)
		o.sum.Write(binlog.Magic)
		o.off = 4
	}
	return nil
}

func (o *openFile) writeErr(err error) error {
	return &Error{Msg: fmt.Sprintf("cannot write %s: %v", o.path, err), Write: true,
		Hint: "make room or fix the disk, then start binlogcdc archive again: it cuts the file back to its last whole event and goes on"}
}

// startFile begins the archive's copy of the server's next file, name.
// The manifest lists it before it is created, so a file in DIR that the
// manifest does not list was never written by the archiver.
func (a *archiver) startFile(name string) error {
	if !validName(name) {
		return &Error{Msg: fmt.Sprintf("the server sent the binlog file name %q, which binlogcdc archive does not write into a directory", name)}
	}
	if prev := a.d.m.last(); prev != nil {
		if err := successor(prev.Name, name, a.cfg.Source); err != nil {
			return err
		}
	}
	e := &FileEntry{Name: name}
	a.locked(func() { a.d.m.Files = append(a.d.m.Files, e) })
	if err := a.save(a.d); err != nil {
		return err
	}
	path := filepath.Join(a.d.path, name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return &Error{Msg: fmt.Sprintf("cannot create %s: %v", path, err), Write: true,
			Hint: "binlogcdc archive never overwrites a file it did not write"}
	}
	a.locked(func() { a.cur = &openFile{entry: e, path: path, f: f, sum: newDigest(a.cfg.hashAlgo())} })
	return a.cur.begin()
}

// successor checks that the server's next file, next, follows the
// archive's newest, prev, in its series: a gap means files purged before
// they were archived; anything else another server history.
func successor(prev, next, source string) error {
	ps, pn, ok1 := binlog.Sequence(prev)
	ns, nn, ok2 := binlog.Sequence(next)
	switch {
	case !ok1 || !ok2 || ps != ns || nn <= pn:
		return &Error{Msg: fmt.Sprintf("the server %s goes on with %s, which does not follow %s, the archive's newest file: the archive was written from another server history (or the server's binlog was reset)", source, next, prev),
			Hint: "archive each server history into its own directory"}
	case nn > pn+1:
		return purged(ps, pn+1, nn-1, len(prev)-len(ps)-1, source)
	}
	return nil
}

// purged is the error for files the server no longer has that the
// archive does not hold: stem.from … stem.to (width digits).
func purged(stem string, from, to uint64, width int, source string) error {
	names := fmt.Sprintf("%s.%0*d", stem, width, from)
	if to > from {
		names += fmt.Sprintf(" … %s.%0*d", stem, width, to)
	}
	return &Error{Msg: fmt.Sprintf("%s %s purged on the server %s before it was archived: the archive would have a gap", names, plural(to > from, "were", "was"), source),
		Hint: "the changes in those files are gone from the server; start a new archive in another directory (--from earliest), and keep the binlogs longer (binlog_expire_logs_seconds) than the archiver may be down"}
}

func plural(many bool, a, b string) string {
	if many {
		return a
	}
	return b
}

// write appends one real event of the open file.
func (a *archiver) write(h header, raw []byte) error {
	o := a.cur
	if o.off == 4 && h.typ == replication.FORMAT_DESCRIPTION_EVENT {
		// The server's copy says "in use" while the server writes it.
		var hdr [binlog.HeaderSize]byte
		copy(hdr[:], raw)
		hdr[flagsOffset] |= byte(replication.LOG_EVENT_BINLOG_IN_USE_F)
		o.w.Write(hdr[:])
		o.w.Write(raw[binlog.HeaderSize:])
	} else if _, err := o.w.Write(raw); err != nil {
		return o.writeErr(err)
	}
	hashEvent(o.sum, o.off, raw)
	o.stats.note(h, raw)
	if h.typ == replication.PREVIOUS_GTIDS_EVENT && o.stats.prevGTIDs == nil {
		// A set that does not decode is not recorded: a read with
		// --start-gtid then reads the file and says what is wrong.
		if set, err := previousGTIDs(raw, o.crc); err == nil {
			o.stats.prevGTIDs = &set
		}
	}
	o.lastStart = o.off
	o.off += int64(len(raw))
	return nil
}

// flush writes the buffered events; with sync (or --sync) it also makes
// them durable.
func (a *archiver) flush(sync bool) error {
	o := a.cur
	if o == nil || o.w == nil {
		return nil
	}
	if err := o.w.Flush(); err != nil {
		return o.writeErr(err)
	}
	defer a.publish()
	if sync || a.cfg.Sync {
		if err := o.f.Sync(); err != nil {
			return o.writeErr(err)
		}
	}
	return nil
}

// closeFile ends the open file: end is "rotate", "stop" or "crash" (see
// FileEntry.End). A file the server closed gets its in-use flag cleared,
// as the server clears its own; the file is fsynced before the manifest
// says it is complete, with its checksum (sum.go).
func (a *archiver) closeFile(end string) error {
	o := a.cur
	if err := a.flush(false); err != nil {
		return err
	}
	kept := end == "crash" || end == "failover"
	if !kept {
		var flags [1]byte
		if _, err := o.f.ReadAt(flags[:], 4+flagsOffset); err != nil {
			return o.writeErr(err)
		}
		flags[0] &^= byte(replication.LOG_EVENT_BINLOG_IN_USE_F)
		if _, err := o.f.WriteAt(flags[:], 4+flagsOffset); err != nil {
			return o.writeErr(err)
		}
	}
	if err := o.f.Sync(); err != nil {
		return o.writeErr(err)
	}
	sum := o.sum.sum()
	if kept {
		// The in-use flag stays: hash the file as it is.
		var err error
		if sum, _, err = sumReader(io.NewSectionReader(o.f, 0, o.off), sum); err != nil {
			return o.writeErr(err)
		}
	}
	a.publish()
	e := o.entry
	a.locked(func() {
		e.Complete, e.End, e.Size, e.LastEvent = true, end, uint64(o.off), o.lastStart
		e.setSums(sum, "")
		a.cur = nil
	})
	if err := o.f.Close(); err != nil {
		return o.writeErr(err)
	}
	if err := a.save(a.d); err != nil {
		return err
	}
	a.kickWorker() // compression, upload, expiry: worker.go
	return nil
}
