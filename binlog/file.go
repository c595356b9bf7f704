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
// same directory.
type FileSource struct {
	queue []string // files still to read, absolute or as given
	done  map[string]bool

	start     change.Position // where to begin in the first file (0: at its start)
	f         *os.File
	r         *bufio.Reader
	name      string // path of the open file
	base      string // its base name, as positions use it
	size      int64
	off       int64  // offset of the next event
	rotatedTo string // the file named by the last ROTATE in this file

	fde      *replication.FormatDescriptionEvent
	checksum bool
	inUse    bool                  // the FDE has LOG_EVENT_BINLOG_IN_USE_F: the server had not closed the file
	posCheck bool                  // check each event's log_pos against its end (read.go checkLogPos)
	lastType replication.EventType // type of the last event read from this file
	buf      []byte
	ev       Event // the event readEvent returns, reused like buf

	unpacked *unpacker // decompressed copies, removed by Close
	payload  *payloadReader
	pending  *Event // an event to return before reading on
	startAt  int64  // the offset seeked to for the start position, until its event is read

	err error
}

// OpenFiles returns a Source over the given files, checked and put in
// sequence order as ResolveFiles does (a file that is not a binlog is
// reported by Next, at offset 0). A single file ending in ".index" is read
// as the server's binlog index: the files it lists, in its directory. start, if non-zero, names a file among them (by base
// name) and an offset to start at.
func OpenFiles(files []string, start change.Position) (*FileSource, error) {
	u := &unpacker{}
	files, err := resolveFiles(files, false, u) // files.go: checked and in sequence order
	if err != nil {
		u.cleanup()
		return nil, err
	}
	s := &FileSource{done: map[string]bool{}, start: start, unpacked: u}
	s.queue = append(s.queue, files...)
	if start.File != "" {
		i := 0
		for i < len(s.queue) && filepath.Base(s.queue[i]) != filepath.Base(start.File) {
			i++
		}
		if i == len(s.queue) {
			u.cleanup()
			return nil, fmt.Errorf("binlog: start file %q is not among the files given", start.File)
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
		if s.f == nil {
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
	// Follow a ROTATE to a file that was not given but sits beside the last one.
	if s.rotatedTo != "" {
		next := s.rotatedTo
		s.rotatedTo = ""
		idx := -1
		for i, q := range s.queue {
			if filepath.Base(q) == next {
				idx = i
				break
			}
		}
		switch {
		case idx >= 0:
			s.queue = s.queue[idx:]
		case filepath.Base(next) != next || next == "." || next == "..":
			// Servers name the next file without a path; a name with one
			// comes from a damaged event: don't leave the directory.
		default:
			p := filepath.Join(filepath.Dir(s.name), next)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				s.queue = append([]string{p}, s.queue...)
			}
		}
	}
	for len(s.queue) > 0 {
		name := s.queue[0]
		s.queue = s.queue[1:]
		if s.done[filepath.Base(name)] {
			continue
		}
		s.done[filepath.Base(name)] = true
		s.err = s.open(name)
		return true
	}
	return false
}

func (s *FileSource) open(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("binlog: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("binlog: %w", err)
	}
	s.f, s.name, s.base, s.size = f, name, filepath.Base(name), st.Size()
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
	var magic [4]byte
	if _, err := io.ReadFull(s.r, magic[:]); err != nil || !bytes.Equal(magic[:], Magic) {
		return &Error{Pos: change.Position{File: s.base}, Err: errors.New("not a binlog file: it does not start with the binlog magic bytes fe 62 69 6e"),
			Hint: "pass binlog files written by the server (binlog.000001…), or its .index file"}
	}
	s.off = 4
	s.fde, s.checksum, s.inUse, s.lastType, s.posCheck = nil, false, false, 0, false
	if s.start.File != "" && filepath.Base(s.start.File) == s.base && s.start.Offset > 0 && s.start.Offset < 4 {
		return &FileError{Path: s.name, Msg: fmt.Sprintf("the start position %s:%d is inside the file's magic bytes, not the start of an event; the first event starts at 4", s.base, s.start.Offset),
			Hint: fmt.Sprintf("--start-position %s:4 reads the whole file", s.base)}
	}
	if s.start.File != "" && filepath.Base(s.start.File) == s.base && s.start.Offset > 4 {
		// Read the FORMAT_DESCRIPTION_EVENT first: it says how to read the rest.
		ev, err := s.readEvent()
		if err != nil {
			return err
		}
		if ev.Type() != replication.FORMAT_DESCRIPTION_EVENT {
			return &Error{Pos: ev.Pos, Err: fmt.Errorf("first event is %v, not FORMAT_DESCRIPTION_EVENT", ev.Type())}
		}
		if int64(s.start.Offset) > s.size {
			return &Error{Pos: s.start, Err: fmt.Errorf("start position is past the end of the file (%d bytes)", s.size)}
		}
		// Downstream still needs the FORMAT_DESCRIPTION_EVENT: a copy, as
		// ev lives in the reader's buffer.
		fde := *ev
		fde.Raw = append([]byte(nil), ev.Raw...)
		fde.Body = fde.Raw[HeaderSize : HeaderSize+len(ev.Body)]
		s.r.Reset(io.NewSectionReader(s.f, int64(s.start.Offset), s.size-int64(s.start.Offset)))
		s.off = int64(s.start.Offset)
		s.startAt = s.off
		s.start = change.Position{}
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
	if !s.inUse && s.lastType != 0 && s.lastType != replication.ROTATE_EVENT && s.lastType != replication.STOP_EVENT {
		return &Error{Pos: pos, Err: fmt.Errorf("%w: the file ends after a %v event, but the server closed it (its FORMAT_DESCRIPTION_EVENT lacks the in-use flag), so it should end with a ROTATE or STOP event", io.ErrUnexpectedEOF, s.lastType),
			Hint: "the file is truncated (cut short at an event boundary); every complete transaction before this offset was written. " +
				"(A replica's raw copy of a binlog the server was still writing, e.g. from mysqlbinlog --read-from-remote-server --raw, " +
				"also ends like this: then nothing is missing.)"}
	}
	return nil
}

func (s *FileSource) closeFile() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
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
