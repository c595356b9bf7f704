package binlog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/change"
)

// Magic is the 4 bytes every binlog file starts with.
var Magic = []byte{0xfe, 'b', 'i', 'n'}

// MaxEventSize bounds the size of one event (MySQL's and MariaDB's
// max_allowed_packet cannot exceed 1 GiB), so a corrupt size field cannot
// make us allocate without bound.
const MaxEventSize = 1<<30 + 1<<20

// FileSource reads binlog files in order. It follows a ROTATE event at the
// end of a file to the next file when that file was given or sits in the
// same directory as the file given (plain or compressed: binlog.000043,
// binlog.000043.gz, .zst). A ROTATE it cannot follow is never passed over
// in silence: a next file that is missing while a later one of its series
// is there (a gap) is an error; one missing at the end of the series (a
// file copied alone, stdin) is a warning to Warnf.
type FileSource struct {
	// Warnf, if set, is told when reading stops at a ROTATE whose file is
	// not there.
	Warnf func(format string, args ...any)
	// Ends, if set, bounds files by base name: such a file is read only
	// up to that offset, the end of its last whole event (an archive's
	// file still being written).
	Ends map[string]int64
	// NoFollow: read the files given only, in order, without following
	// a ROTATE to a file beside them (an archive's files, chosen and
	// checked by archive.PlanRead).
	NoFollow bool

	queue []string // files still to read, absolute or as given
	done  map[string]bool

	start     change.Position // where to begin in the first file (0: at its start)
	f         *os.File
	r         *bufio.Reader
	reading   bool   // a file (or stdin) is open
	stream    bool   // it is stdin, read as it arrives: no size, no seeking
	name      string // path of the open file ("-": stdin)
	given     string // the path it was given as (Origin: the compressed file, not its copy)
	base      string // its base name, as positions use it
	size      int64  // -1: stdin
	off       int64  // offset of the next event
	rotatedTo string // the file named by the last ROTATE in this file

	fde      *replication.FormatDescriptionEvent
	checksum bool
	inUse    bool                  // the FDE has LOG_EVENT_BINLOG_IN_USE_F: the server had not closed the file
	posCheck bool                  // check each event's log_pos against its end (read.go checkLogPos)
	lastType replication.EventType // type of the last event read from this file
	buf      []byte
	ev       Event // the event readEvent returns, reused like buf

	unpacked *unpacker       // decompressed copies, removed by Close
	followed map[string]bool // copies made to follow a ROTATE, each removed once read
	payload  *payloadReader
	pending  *Event // an event to return before reading on
	startAt  int64  // the offset seeked to for the start position, until its event is read

	// Set by OpenParts (parts.go): the names positions give the files
	// (by path), where each begins (by name); cut: the open file is read
	// up to a bound short of its end; closer: its decompressor.
	names  map[string]string
	froms  map[string]int64
	cut    bool
	closer io.Closer
	// opens: the parts read through their Open (by path); body: the
	// open one's stream.
	opens map[string]func() (io.ReadCloser, error)
	body  io.Closer

	err error
}

// OpenFiles returns a Source over the given files, checked and put in
// sequence order as ResolveFiles does (a file that is not a binlog is
// reported by Next, at offset 0). A single file ending in ".index" is read
// as the server's binlog index: the files it lists, in its directory. start, if non-zero, names a file among them (by base
// name) and an offset to start at.
func OpenFiles(files []string, start change.Position) (*FileSource, error) {
	u := &unpacker{}
	files, err := resolveFiles(files, false, false, u) // files.go: checked and in sequence order
	if err != nil {
		u.cleanup()
		return nil, err
	}
	s := &FileSource{done: map[string]bool{}, start: start, unpacked: u, followed: map[string]bool{}}
	s.queue = append(s.queue, files...)
	if start.File != "" {
		i := 0
		for i < len(s.queue) && baseName(s.queue[i]) != filepath.Base(start.File) {
			i++
		}
		if i == len(s.queue) {
			u.cleanup()
			return nil, &FileError{Msg: fmt.Sprintf("the start file %s is not among the files given", start.File),
				Hint: fmt.Sprintf("give %s (and the files after it), or a start position in one of the files given", start.File), Usage: true}
		}
		s.queue = s.queue[i:]
	}
	return s, nil
}

// ReadIndex reads a server's binlog .index file and returns the paths of
// the binlogs it lists, resolved against the index file's directory.
func ReadIndex(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("binlog: read index: %w", err)
	}
	dir := filepath.Dir(path)
	var files []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		// The server writes paths relative to its datadir ("./binlog.000001")
		// or absolute; the files sit beside the index either way.
		files = append(files, filepath.Join(dir, filepath.Base(line)))
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("binlog: index %s lists no files", path)
	}
	return files, nil
}

// Next returns the next event.
func (s *FileSource) Next(ctx context.Context) (*Event, error) {
	if s.err != nil {
		return nil, s.err
	}
	ev, err := s.next(ctx)
	if err != nil {
		s.err = err
		s.closeFile()
	}
	return ev, err
}

func (s *FileSource) next(ctx context.Context) (*Event, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.pending != nil {
			ev := s.pending
			s.pending = nil
			return ev, nil
		}
		if s.payload != nil {
			ev, err := s.payload.next()
			if err != nil {
				return nil, err
			}
			if ev != nil {
				return ev, nil
			}
			s.payload = nil
		}
		if !s.reading {
			if !s.openNext() {
				return nil, io.EOF
			}
			if s.err != nil {
				return nil, s.err
			}
			// open may have left the FORMAT_DESCRIPTION_EVENT pending
			// (starting at an offset): return it before reading on.
			continue
		}
		ev, err := s.readEvent()
		if s.startAt != 0 {
			// The first event after seeking to the start position: if it
			// cannot be read, say whether the position is an event start.
			if err != nil && err != io.EOF {
				err = s.checkStart(err)
			}
			s.startAt = 0
		}
		if err == io.EOF {
			if err := s.checkEnd(); err != nil {
				return nil, err
			}
			s.closeFile()
			continue
		}
		if err != nil {
			return nil, err
		}
		if ev.Type() == replication.TRANSACTION_PAYLOAD_EVENT {
			p, err := newPayloadReader(ev, s.checksum)
			if err != nil {
				return nil, err
			}
			s.payload = p
			continue
		}
		return ev, nil
	}
}

// openNext opens the next file to read. It returns false at the end.
func (s *FileSource) openNext() bool {
	// Follow a ROTATE at the end of the last file to the next file.
	next := s.rotatedTo
	s.rotatedTo = ""
	if next != "" && s.lastType == replication.ROTATE_EVENT && !s.NoFollow {
		if err := s.follow(next); err != nil {
			s.err = err
			return true
		}
	}
	for len(s.queue) > 0 {
		name := s.queue[0]
		s.queue = s.queue[1:]
		if s.done[s.nameOf(name)] {
			continue
		}
		s.done[s.nameOf(name)] = true
		s.err = s.open(name)
		return true
	}
	return false
}

// shown is the open file's path for messages: as given (the compressed
// file, not its copy), or "stdin".
func (s *FileSource) shown() string {
	if s.given == "-" {
		return StdinName
	}
	return s.given
}

// baseName is the file name positions give the file at path.
func baseName(path string) string {
	if path == "-" {
		return StdinName
	}
	return filepath.Base(path)
}

// follow puts the file named next, which the ROTATE at the end of the
// file just read leads to, first in the queue: a file given, or one
// beside the file given (the compressed file, not its copy), in any form
// (plain, .gz, .zst, …). When it is not there, reading ends with a
// warning, or with an error when a later file of the series is there:
// the changes in the missing files would be lost.
func (s *FileSource) follow(next string) error {
	for i, q := range s.queue {
		if baseName(q) == next {
			s.queue = s.queue[i:]
			return nil
		}
	}
	shown := s.shown()
	warn := func(format string, args ...any) {
		if s.Warnf != nil {
			s.Warnf(format, args...)
		}
	}
	if filepath.Base(next) != next || next == "." || next == ".." {
		// Servers name the next file without a path; a name with one
		// comes from a damaged event: don't leave the directory.
		warn("%s ends with a ROTATE to %q, which is not a file name: reading stops there", shown, next)
		return nil
	}
	if s.stream {
		warn("stdin ends with a ROTATE to %s, which was not read (stdin holds one file): to read on, give the files by name (… %s %s)", next, s.base, next)
		return nil
	}
	dir := filepath.Dir(s.given)
	found, err := seriesForms(dir, next) // files.go
	if err != nil {
		return &FileError{Path: filepath.Join(dir, next), Msg: fmt.Sprintf("the ROTATE at the end of %s leads here, but: %v", shown, err)}
	}
	switch len(found) {
	case 1:
		p, err := s.unpacked.unpack(found[0]) // compressed.go
		if err != nil {
			return err
		}
		if p != found[0] {
			s.followed[p] = true
		}
		s.queue = append([]string{p}, s.queue...)
		return nil
	case 0:
		if stem, n, ok := Sequence(next); ok {
			if later := laterInSeries(dir, stem, n); later != "" { // files.go
				return &Error{Pos: change.Position{File: s.base, Offset: uint64(s.off)},
					Err:  fmt.Errorf("the file ends with a ROTATE to %s, which is not in %s (plain, .gz or .zst), but %s is: the changes in %s are missing", next, dir, later, next),
					Hint: fmt.Sprintf("every transaction of %s was read; put %s in %s and read again from it, or, to accept the gap, read %s and the files after it in another run", shown, next, dir, filepath.Join(dir, later))}
			}
		}
		warn("%s ends with a ROTATE to %s, which is not in %s (plain, .gz or .zst): reading stops at the end of %s; give %s too to read on", shown, next, dir, shown, next)
		return nil
	}
	return &FileError{Path: filepath.Join(dir, next),
		Msg:  fmt.Sprintf("the ROTATE at the end of %s leads to %s, which is there %d times (%s): binlogcdc cannot tell which to read", shown, next, len(found), strings.Join(found, ", ")),
		Hint: fmt.Sprintf("give the one to read with the others (… %s %s), or move the other away", shown, found[0])}
}

func (s *FileSource) open(name string) error {
	if name == "-" {
		return s.openStdin()
	}
	if open := s.opens[name]; open != nil {
		return s.openStream(name, open) // parts.go
	}
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("binlog: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("binlog: %w", err)
	}
	s.f, s.name, s.base, s.size, s.reading, s.stream = f, name, s.nameOf(name), st.Size(), true, false
	s.given, s.cut = Origin(name), false
	if s.names != nil {
		// A part (parts.go): a compressed file is read as it decompresses.
		br := bufio.NewReaderSize(f, 64<<10)
		if compressed(br) {
			if err := s.openCompressed(br); err != nil {
				return err
			}
			return s.begin()
		}
	}
	if end, ok := s.Ends[s.base]; ok && end < s.size {
		s.size, s.cut = end, true
	}
	// The file is read as it was when opened, up to s.size, which
	// readEvent checks each event against: a server still writing it
	// (the last file of a live server, where MariaDB appends its
	// BINLOG_CHECKPOINT from a background thread after a rotation) must
	// not show the reader an event header past that end.
	if s.r == nil {
		s.r = bufio.NewReaderSize(io.NewSectionReader(f, 0, s.size), 256<<10)
	} else {
		s.r.Reset(io.NewSectionReader(f, 0, s.size))
	}
	return s.begin()
}

// openStdin opens stdin ('-'), plain or gzip- or zstd-compressed, to be
// read as it arrives.
func (s *FileSource) openStdin() error {
	br := bufio.NewReaderSize(os.Stdin, 256<<10)
	src, kind, err := decompressor(br) // compressed.go
	if err != nil {
		return &FileError{Path: StdinName, Msg: fmt.Sprintf("is %s-compressed, but cannot be decompressed: %v", kind, err), Hint: "is the archive complete?"}
	}
	s.name, s.given, s.base, s.size, s.reading, s.stream = "-", "-", StdinName, -1, true, true
	s.r = br
	if kind != "" {
		s.r = bufio.NewReaderSize(src, 256<<10)
	}
	return s.begin()
}

// begin reads the open file's magic bytes and, to start at an offset in
// it, its FORMAT_DESCRIPTION_EVENT, and goes to the start offset.
func (s *FileSource) begin() error {
	var magic [4]byte
	if n, err := io.ReadFull(s.r, magic[:]); err != nil || !bytes.Equal(magic[:], Magic) {
		msg := "not a binlog file: it does not start with the binlog magic bytes fe 62 69 6e"
		if n == 0 && (err == io.EOF || err == nil) {
			msg = "not a binlog file: it is empty (0 bytes)"
		} else if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			msg = "cannot be read: " + err.Error()
		}
		return &Error{Pos: change.Position{File: s.base}, Path: s.shown(), Err: errors.New(msg),
			Hint: "pass binlog files written by the server (binlog.000001…), or its .index file"}
	}
	s.off = 4
	s.fde, s.checksum, s.inUse, s.lastType, s.posCheck = nil, false, false, 0, false
	if s.isStart() && s.start.Offset > 0 && s.start.Offset < 4 {
		return &FileError{Path: s.shown(), Msg: fmt.Sprintf("the start position %s:%d is inside the file's magic bytes, not the start of an event; the first event starts at 4", s.base, s.start.Offset),
			Hint: fmt.Sprintf("--start-position %s:4 reads the whole file", s.base)}
	}
	if at := s.startOffset(); at > 4 {
		// Read the FORMAT_DESCRIPTION_EVENT first: it says how to read the rest.
		ev, err := s.readEvent()
		if err != nil {
			return err
		}
		if ev.Type() != replication.FORMAT_DESCRIPTION_EVENT {
			return &Error{Pos: ev.Pos, Err: fmt.Errorf("first event is %v, not FORMAT_DESCRIPTION_EVENT", ev.Type())}
		}
		if !s.stream && int64(at) > s.size {
			return &Error{Pos: change.Position{File: s.base, Offset: at}, Err: fmt.Errorf("start position is past the end of the file (%d bytes)", s.size)}
		}
		// Downstream still needs the FORMAT_DESCRIPTION_EVENT: a copy, as
		// ev lives in the reader's buffer.
		fde := *ev
		fde.Raw = append([]byte(nil), ev.Raw...)
		fde.Body = fde.Raw[HeaderSize : HeaderSize+len(ev.Body)]
		if s.stream {
			if err := s.skipTo(int64(at)); err != nil { // stdin.go
				return err
			}
		} else {
			s.r.Reset(io.NewSectionReader(s.f, int64(at), s.size-int64(at)))
			s.off = int64(at)
			s.startAt = s.off
		}
		if s.isStart() {
			s.start = change.Position{}
		}
		s.lastType = 0 // unknown: checkEnd cannot tell what came before the start
		s.pending = &fde
	}
	return nil
}

// checkEnd is called at the end of a file's data. MySQL and MariaDB write
// the FORMAT_DESCRIPTION_EVENT first, with LOG_EVENT_BINLOG_IN_USE_F set,
// and clear that flag only when they close the file, after its last event:
// a ROTATE (the server moved on to the next file) or a STOP (shutdown).
// So a file whose flag is clear but whose last event is neither was cut
// short at an event boundary (a partial copy); so was a file without a
// FORMAT_DESCRIPTION_EVENT. A file still in use (the flag set: being
// written, or the server crashed) may end anywhere.
func (s *FileSource) checkEnd() error {
	pos := change.Position{File: s.base, Offset: uint64(s.off)}
	if s.fde == nil {
		return s.truncated(pos, errors.New("the file ends before its FORMAT_DESCRIPTION_EVENT"))
	}
	if !s.inUse && !s.cut && s.lastType != 0 && s.lastType != replication.ROTATE_EVENT && s.lastType != replication.STOP_EVENT {
		return &Error{Pos: pos, Err: fmt.Errorf("%w: the file ends after a %v event, but the server closed it (its FORMAT_DESCRIPTION_EVENT lacks the in-use flag), so it should end with a ROTATE or STOP event", io.ErrUnexpectedEOF, s.lastType),
			Hint: "the file is truncated (cut short at an event boundary); every complete transaction before this offset was written. " +
				"(A replica's raw copy of a binlog the server was still writing, e.g. from mysqlbinlog --read-from-remote-server --raw, " +
				"also ends like this: then nothing is missing.)"}
	}
	return nil
}

func (s *FileSource) closeFile() {
	if s.closer != nil {
		s.closer.Close()
		s.closer = nil
	}
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
	if s.body != nil {
		s.body.Close()
		s.body = nil
	}
	if s.reading && s.followed[s.name] {
		// A copy made to follow a ROTATE: read; its space is freed now.
		os.Remove(s.name)
		origins.Delete(s.name)
		delete(s.followed, s.name)
	}
	s.reading = false
}

// Close releases the open file.
func (s *FileSource) Close() error {
	s.closeFile()
	s.unpacked.cleanup()
	if s.err == nil {
		s.err = errors.New("binlog: source closed")
	}
	return nil
}
