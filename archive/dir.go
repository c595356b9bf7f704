package archive

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/checkpoint"
)

// dir is one server history of an archive directory (history.go),
// locked for this process.
type dir struct {
	path   string
	m      *Manifest
	fresh  bool // no manifest yet
	unlock func()
	top    string // the archive's directory (path, for the first history)
	prev   *dir   // the history before (nil: the first)
	depth  int    // 1 for the first history
	// pending: m.Next names a history whose manifest was not written yet.
	pending bool
}

// openDir creates path if needed, locks it (one archiver per DIR), reads
// its manifest and checks that it holds nothing else than the archive:
// files the archiver did not write are never overwritten or removed, and
// a complete file must still have the size it was archived with.
func openDir(path string) (*dir, error) {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, &Error{Msg: fmt.Sprintf("--dir %s: %v", path, err), Write: true}
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return nil, &Error{Msg: fmt.Sprintf("--dir %s is not a directory", path), Hint: "give a directory for the archive (it is created if missing)"}
	}
	unlock, err := checkpoint.LockPath(filepath.Join(path, lockName), "the archive's lock file", func(holder, lp string) error {
		return &Error{Msg: fmt.Sprintf("the archive %s is in use by another binlogcdc archive (%s holds %s)", path, holder, lp),
			Hint: "stop that one first: one archiver per directory"}
	})
	if err != nil {
		return nil, err
	}
	d := &dir{path: path, top: path, depth: 1, unlock: unlock}
	hist, err := chainNames(path)
	if err == nil {
		err = d.load(hist)
	}
	var last *dir
	if err == nil {
		last, err = d.follow() // history.go
	}
	if err != nil {
		unlock()
		return nil, err
	}
	return last, nil
}

func (d *dir) close() { d.unlock() }

// load reads the manifest and checks the files; histories are the
// subdirectories of later histories (in the first one's directory).
func (d *dir) load(histories map[string]bool) error {
	m, ok, err := readManifest(d.path)
	if err != nil {
		return err
	}
	if !ok {
		m, d.fresh = &Manifest{Format: 1}, true
	}
	d.m = m
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return err
	}
	known := map[string]bool{manifestName: true, lockName: true, manifestName + tmpSuffix: true}
	if n := indexName(m); n != "" {
		known[n], known[n+tmpSuffix] = true, true
	}
	for _, e := range m.Files {
		known[e.Name], known[e.stored()] = true, true
		if e.Complete {
			// compress.go's names, a kill may leave them before the
			// manifest names them.
			known[e.Name+zstSuffix], known[e.Name+zstSuffix+tmpSuffix] = true, true
		}
	}
	var foreign []string
	for _, e := range ents {
		if !known[e.Name()] && !(histories[e.Name()] && e.IsDir()) {
			foreign = append(foreign, e.Name())
		}
	}
	if len(foreign) > 0 {
		sort.Strings(foreign)
		list := strings.Join(foreign[:min(len(foreign), 5)], ", ")
		if len(foreign) > 5 {
			list += fmt.Sprintf(" and %d more", len(foreign)-5)
		}
		what := "it has no archive manifest (" + manifestName + ") and holds"
		if !d.fresh {
			what = "it holds files its manifest does not list:"
		}
		return &Error{Msg: fmt.Sprintf("--dir %s is not an archive of binlogcdc: %s %s", d.path, what, list),
			Hint: "give an empty or new directory (binlogcdc archive never overwrites or removes files it did not write)"}
	}
	for _, e := range m.Files {
		if !e.Complete || e.Expired {
			continue
		}
		size := e.Size
		if e.Stored != "" {
			size = e.StoredSize
		}
		fi, err := os.Stat(filepath.Join(d.path, e.stored()))
		switch {
		case err != nil:
			return &Error{Msg: fmt.Sprintf("the archive %s lacks %s, which its manifest lists as complete: %v", d.path, e.Name, err),
				Hint: "restore the file from a copy; the archive is not continued over a hole"}
		case uint64(fi.Size()) != size:
			return &Error{Msg: fmt.Sprintf("the archive's %s has %d bytes, but its manifest says it was closed at %d: it was changed or damaged since", filepath.Join(d.path, e.stored()), fi.Size(), size),
				Hint: "restore the file from a copy (its SHA-256 is in " + manifestName + "); binlogcdc archive does not overwrite it"}
		}
	}
	return nil
}

// verifySums checks the checksum of the complete files against the
// manifest (whichever algorithm each records): all of them, or only the
// newest (the one a restart compares with the server).
func (d *dir) verifySums(all bool) error {
	for i := len(d.m.Files) - 1; i >= 0; i-- {
		e := d.m.Files[i]
		if !e.Complete || e.Expired {
			continue
		}
		path := filepath.Join(d.path, e.stored())
		want := e.asStored()
		got, err := sumFile(path, want)
		if err != nil {
			return err
		}
		if !sameSum(got, want) {
			return &Error{Msg: fmt.Sprintf("the archive's %s is damaged: %s", path, sumMismatch(got, want)),
				Hint: "restore the file from a copy; binlogcdc archive does not overwrite it"}
		}
		if !all {
			return nil
		}
	}
	return nil
}

// scan is what a restart finds in the open file: where its last whole
// event ends, and what it holds.
type scan struct {
	end       int64 // the last whole event ends here (0: not even the magic bytes)
	torn      int64 // bytes after end: a torn event, cut back when the dump resumes
	lastStart int64 // where the last whole event starts (0: none)
	crc       bool
	fde       bool
	sum       digest // over [0, end), the FDE's in-use flag cleared (nil Hash: not hashed)
	stats     FileEntry
}

// scanOpen reads the open file e from its start: the magic bytes, then
// event after event, each with its CRC32 when the file has checksums. The
// first damaged event is a torn tail (a crash while it was written) when
// it runs to the end of the file, or everything from it to the end is
// zeros (a power loss); anything else is damage in the middle of the
// file, an error: nothing is cut.
func scanOpen(path string, e *FileEntry) (*scan, error) { return scanHashed(path, e, "") }

// scanHashed is scanOpen, also hashing the file's whole events with algo
// ("": not hashed).
func scanHashed(path string, e *FileEntry, algo string) (*scan, error) {
	s := &scan{sum: newDigest(algo), stats: FileEntry{Name: e.Name}}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return s, nil // listed, then killed before it was created
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	r := bufio.NewReaderSize(f, 1<<20)
	var magic [4]byte
	n, _ := io.ReadFull(r, magic[:])
	if !bytes.Equal(magic[:n], binlog.Magic[:n]) {
		return nil, damaged(path, 0, "it does not start with the binlog magic bytes")
	}
	if n < 4 {
		s.torn = int64(n)
		return s, nil
	}
	if s.sum.Hash != nil {
		s.sum.Write(magic[:])
	}
	s.end = 4
	buf := make([]byte, 64<<10)
	for s.end < size {
		bad, last := "", false
		var raw []byte
		hdr, err := r.Peek(binlog.HeaderSize)
		if err != nil {
			bad, last = "a cut event header", true
		} else if h := parseHeader(hdr); h.size < binlog.HeaderSize || int64(h.size) > binlog.MaxEventSize {
			bad = fmt.Sprintf("an impossible event size %d", h.size)
		} else if s.end+int64(h.size) > size {
			bad, last = fmt.Sprintf("a %v event of %d bytes cut short", h.typ, h.size), true
		} else {
			if cap(buf) < int(h.size) {
				buf = make([]byte, h.size)
			}
			raw = buf[:h.size]
			if _, err := io.ReadFull(r, raw); err != nil {
				return nil, err
			}
			bad, last = s.check(h, raw), s.end+int64(h.size) == size
		}
		if bad != "" {
			tail, err := last, error(nil)
			if !tail {
				tail, err = zeroTail(f, s.end, size)
			}
			if err != nil {
				return nil, err
			}
			if !tail {
				return nil, damaged(path, s.end, bad+", with more data after it: the file is damaged, not cut short by a crash")
			}
			s.torn = size - s.end
			return s, nil
		}
		s.lastStart = s.end
		s.end += int64(len(raw))
	}
	return s, nil
}

// check checks one whole event of the scan and takes it in.
func (s *scan) check(h header, raw []byte) string {
	if !s.fde {
		if h.typ != replication.FORMAT_DESCRIPTION_EVENT {
			return fmt.Sprintf("a %v event where the FORMAT_DESCRIPTION_EVENT belongs", h.typ)
		}
		crc, err := binlog.FDEChecksum(raw)
		if err != nil {
			return err.Error()
		}
		s.fde, s.crc = true, crc
		s.stats.FirstTime = eventTime(h.when)
	}
	if s.crc {
		if err := binlog.VerifyChecksum(raw); err != nil {
			return err.Error()
		}
	}
	if h.logPos != 0 && int64(h.logPos) != s.end+int64(h.size) {
		return fmt.Sprintf("a %v event whose log_pos %d is not its end %d", h.typ, h.logPos, s.end+int64(h.size))
	}
	hashEvent(s.sum, s.end, raw)
	noteEvent(&s.stats, h, raw)
	if h.typ == replication.PREVIOUS_GTIDS_EVENT && s.stats.PreviousGTIDs == nil {
		if set, err := previousGTIDs(raw, s.crc); err == nil {
			s.stats.PreviousGTIDs = &set
		}
	}
	return ""
}

// hashEvent adds the event at off to a file's checksum, with the in-use
// flag of the FORMAT_DESCRIPTION_EVENT (at 4) cleared: the hash of the
// file as it is once closed.
func hashEvent(sha digest, off int64, raw []byte) {
	if sha.Hash == nil {
		return
	}
	if off != 4 {
		sha.Write(raw)
		return
	}
	var hdr [binlog.HeaderSize]byte
	copy(hdr[:], raw)
	hdr[flagsOffset] &^= byte(replication.LOG_EVENT_BINLOG_IN_USE_F)
	sha.Write(hdr[:])
	sha.Write(raw[binlog.HeaderSize:])
}

// noteEvent updates a file's manifest entry with one of its events.
func noteEvent(e *FileEntry, h header, raw []byte) {
	if g := gtidOf(h, raw); g != "" {
		if e.FirstGTID == "" {
			e.FirstGTID = g
		}
		e.LastGTID = g
	}
	if e.FirstTime == "" {
		e.FirstTime = eventTime(h.when)
	}
	e.LastTime = eventTime(h.when)
}

// zeroTail reports whether only zeros follow off (a power loss can leave
// a file's new size with blocks never written).
func zeroTail(f *os.File, off, size int64) (bool, error) {
	buf := make([]byte, 64<<10)
	for at := off; at < size; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-at)], at)
		if n == 0 && err != nil {
			return false, err
		}
		if slices.ContainsFunc(buf[:n], func(b byte) bool { return b != 0 }) {
			return false, nil
		}
		at += int64(n)
	}
	return true, nil
}

func damaged(path string, off int64, what string) error {
	return &Error{Msg: fmt.Sprintf("%s:%d: %s", path, off, what),
		Hint: "the archive is not continued over damage: restore the file from a copy, or move the archive away and start a new one"}
}

var errStop = errors.New("archive: stop")
