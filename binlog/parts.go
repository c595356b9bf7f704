package binlog

// Reading parts of files (an archive's, chosen by archive.PlanRead):
// each with the name positions give it, a first offset and an end, and
// compressed ones decompressed as they are read, without a copy.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/binlogcdc/binlogcdc/change"
)

// Part is what to read of one file.
type Part struct {
	// Path is the file: plain, or gzip- or zstd-compressed (read as it
	// decompresses, never copied). With Open, it only names the file in
	// messages (s3://bucket/key).
	Path string
	// Open, when set, opens the file as a stream (an object in a store),
	// read once from its start like stdin: no seeking, no size.
	Open func() (io.ReadCloser, error)
	// Name is the file name positions give it ("binlog.000042"; an
	// archive's later server history: "history-2/binlog.000042").
	Name string
	// From: the events from this offset on (a transaction's start) are
	// read, after the FORMAT_DESCRIPTION_EVENT at 4; 0 or 4: all.
	From int64
	// To: only the bytes before this offset (the end of a whole event);
	// 0: to the end of the file. A file cut there is not checked for
	// its last event (a ROTATE or STOP).
	To int64
}

// OpenParts returns a Source over the parts, in the order given (no
// ROTATE is followed to a file beside them). start, if non-zero, names
// one of them (by Name) and an offset to start at; one before a part's
// From starts at From.
func OpenParts(parts []Part, start change.Position) (*FileSource, error) {
	if len(parts) == 0 {
		return nil, &FileError{Msg: "no binlog files to read", Usage: true}
	}
	s := &FileSource{done: map[string]bool{}, start: start, unpacked: &unpacker{}, followed: map[string]bool{},
		NoFollow: true, Ends: map[string]int64{}, names: map[string]string{}, froms: map[string]int64{}}
	i := 0
	if start.File != "" {
		for i < len(parts) && parts[i].Name != start.File {
			i++
		}
		if i == len(parts) {
			return nil, &FileError{Msg: fmt.Sprintf("the start file %s is not among the files to read (%s … %s)", start.File, parts[0].Name, parts[len(parts)-1].Name),
				Hint: "start in one of them", Usage: true}
		}
	}
	for _, p := range parts[i:] {
		s.queue = append(s.queue, p.Path)
		s.names[p.Path] = p.Name
		if p.Open != nil {
			if s.opens == nil {
				s.opens = map[string]func() (io.ReadCloser, error){}
			}
			s.opens[p.Path] = p.Open
		}
		if p.To > 0 {
			s.Ends[p.Name] = p.To
		}
		if p.From > 4 {
			s.froms[p.Name] = p.From
		}
	}
	return s, nil
}

// nameOf is the name positions give the file at path.
func (s *FileSource) nameOf(path string) string {
	if n, ok := s.names[path]; ok {
		return n
	}
	return baseName(path)
}

// isStart reports whether the start position is in the open file.
func (s *FileSource) isStart() bool {
	if s.start.File == "" {
		return false
	}
	if s.names != nil {
		return s.start.File == s.base
	}
	return baseName(s.start.File) == s.base
}

// startOffset is where to begin in the open file: the start position's
// offset, or the part's From when later.
func (s *FileSource) startOffset() uint64 {
	off := uint64(0)
	if s.isStart() {
		off = s.start.Offset
	}
	if from := uint64(s.froms[s.base]); from > off && (off == 0 || off >= 4) {
		off = from
	}
	return off
}

// openCompressed reads the open file from br (gzip or zstd data, or
// plain from a store: openStream), as it decompresses (a stream: no size, no seeking), up to its
// part's end if it has one.
func (s *FileSource) openCompressed(br *bufio.Reader) error {
	src, kind, err := decompressor(br)
	if err != nil {
		return &FileError{Path: s.given, Msg: fmt.Sprintf("is %s-compressed, but cannot be decompressed: %v", kind, err), Hint: "is the archive complete?"}
	}
	if c, ok := src.(io.Closer); ok {
		s.closer = c
	}
	if end, ok := s.Ends[s.base]; ok {
		src = io.LimitReader(src, end)
		s.cut = true
	}
	s.size, s.stream = -1, true
	s.r = bufio.NewReaderSize(src, 256<<10)
	return nil
}

// compressed reports whether br starts like gzip or zstd data.
func compressed(br *bufio.Reader) bool {
	head, _ := br.Peek(4)
	return bytes.HasPrefix(head, gzipMagic) || bytes.HasPrefix(head, zstdMagic)
}

// openStream opens the part at path through its Open (an object in a
// store): read as it arrives, decompressed when compressed, up to its
// part's end if it has one.
func (s *FileSource) openStream(path string, open func() (io.ReadCloser, error)) error {
	body, err := open()
	if err != nil {
		return fmt.Errorf("binlog: %s: %w", path, err)
	}
	s.body = body
	s.name, s.given, s.base, s.reading, s.cut = path, path, s.nameOf(path), true, false
	br := bufio.NewReaderSize(body, 64<<10)
	if err := s.openCompressed(br); err != nil {
		return err
	}
	return s.begin()
}
