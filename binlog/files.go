package binlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
)

// FileError is a problem with a file named on the command line, found
// before anything is read from it: it does not exist, is a directory, is
// empty, compressed or not a binlog, or the files do not form one
// sequence.
type FileError struct {
	Path string
	Msg  string
	Hint string
}

func (e *FileError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// ResolveFiles checks the binlog files given and returns them in the
// order to read them. A single file ending in ".index" is read as the
// server's binlog index. Every file must exist and start with the binlog
// magic bytes. Files of one series (binlog.000001, binlog.000002, …) are
// put in sequence order, whatever order they were given in, and a gap in
// the sequence (binlog.000001 binlog.000003) is refused: the changes in
// the missing file would be lost without a word. Files of different
// series, or with no sequence number, must be given one at a time.
//
// A gzip- or zstd-compressed file (binlog.000042.gz), and stdin ('-', which
// may be compressed too), are decompressed into a temporary directory
// first and read from there; cleanup removes those copies.
func ResolveFiles(files []string) (resolved []string, cleanup func(), err error) {
	u := &unpacker{}
	resolved, err = resolveFiles(files, true, u)
	if err != nil {
		u.cleanup()
		return nil, func() {}, err
	}
	return resolved, u.cleanup, nil
}

// resolveFiles is ResolveFiles; without content, a file's first bytes are
// not looked at (OpenFiles leaves that to reading, which reports it at
// offset 0 of the file).
func resolveFiles(files []string, content bool, u *unpacker) ([]string, error) {
	if len(files) == 0 {
		return nil, &FileError{Msg: "no binlog files given", Hint: "binlogcdc read /var/lib/mysql/binlog.000001 (or the binlog.index file)"}
	}
	for _, f := range files {
		if f == "-" && len(files) > 1 {
			return nil, &FileError{Msg: "stdin ('-') must be the only file", Hint: "read the files by name, or one binlog from stdin"}
		}
		if strings.HasSuffix(f, ".index") && len(files) > 1 {
			return nil, &FileError{Path: f, Msg: "is the server's binlog index, given with other files", Hint: "give the index alone (it lists the binlogs), or only the binlog files (binlog.0*)"}
		}
	}
	fromIndex := false
	if len(files) == 1 && strings.HasSuffix(files[0], ".index") {
		listed, err := ReadIndex(files[0])
		if err != nil {
			return nil, &FileError{Path: files[0], Msg: strings.TrimPrefix(err.Error(), "binlog: "), Hint: "give the server's binlog index file (binlog.index in its datadir) or the binlog files"}
		}
		files, fromIndex = listed, true
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range files {
		f, err := u.unpack(f) // compressed.go: .gz, .zst, stdin
		if err != nil {
			return nil, err
		}
		if err := checkFile(f, content); err != nil {
			var fe *FileError
			if fromIndex && errors.As(err, &fe) {
				fe.Msg += " (listed in the index)"
			}
			return nil, err
		}
		if seen[filepath.Base(f)] {
			continue // given twice: read once
		}
		seen[filepath.Base(f)] = true
		out = append(out, f)
	}
	if len(out) < 2 {
		return out, nil
	}
	seqs := make([]uint64, len(out))
	stem := ""
	for i, f := range out {
		st, n, ok := Sequence(f)
		if !ok {
			return nil, &FileError{Msg: fmt.Sprintf("%s has no sequence number (like binlog.000042), so binlogcdc cannot tell in which order to read it with the other files", f),
				Hint: "read it on its own, or give the server's binlog files by their own names"}
		}
		if i == 0 {
			stem = st
		} else if st != stem {
			return nil, &FileError{Msg: fmt.Sprintf("%s and %s belong to different binlog series (%s.* and %s.*)", out[0], f, stem, st),
				Hint: "read one server's binlog files (or one relay log) at a time"}
		}
		seqs[i] = n
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return seqs[idx[a]] < seqs[idx[b]] })
	sorted := make([]string, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
	}
	for i := 1; i < len(idx); i++ {
		prev, cur := seqs[idx[i-1]], seqs[idx[i]]
		if cur != prev+1 {
			missing := fmt.Sprintf("%s.%0*d", stem, len(suffix(sorted[i])), prev+1)
			if cur > prev+2 {
				missing += fmt.Sprintf(" … %s.%0*d", stem, len(suffix(sorted[i])), cur-1)
			}
			return nil, &FileError{Msg: fmt.Sprintf("the files skip %s, between %s and %s: its changes would be lost", missing, filepath.Base(sorted[i-1]), filepath.Base(sorted[i])),
				Hint: "give every file of the sequence (or the server's .index file), or read the parts before and after the gap in separate runs"}
		}
	}
	return sorted, nil
}

// Sequence splits a binlog file name into its series and sequence number:
// "binlog.000042" is ("binlog", 42).
func Sequence(path string) (stem string, n uint64, ok bool) {
	base := filepath.Base(path)
	i := strings.LastIndexByte(base, '.')
	if i <= 0 || i == len(base)-1 {
		return "", 0, false
	}
	n, err := strconv.ParseUint(base[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return base[:i], n, true
}

func suffix(path string) string {
	base := filepath.Base(path)
	return base[strings.LastIndexByte(base, '.')+1:]
}

// checkFile says what is wrong with a path given as a binlog file.
func checkFile(path string, content bool) error {
	fi, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return &FileError{Path: path, Msg: "no such file", Hint: "give the path of a binlog file (binlog.000001) or of the server's binlog.index"}
	case err != nil:
		return &FileError{Path: path, Msg: err.Error()}
	case fi.IsDir():
		return &FileError{Path: path, Msg: "is a directory, not a binlog file",
			Hint: fmt.Sprintf("give the binlog files in it (%s) or its .index file (%s)", filepath.Join(path, "binlog.000001"), filepath.Join(path, "binlog.index"))}
	case !fi.Mode().IsRegular():
		return &FileError{Path: path, Msg: "is not a regular file", Hint: "save the binlog to a file and give its path"}
	case !content:
		return nil
	case fi.Size() == 0:
		return notBinlog(path, "not a binlog file: it is empty (0 bytes)", "a binlog starts with the 4 magic bytes fe 62 69 6e and a FORMAT_DESCRIPTION_EVENT; was the copy interrupted?")
	}
	f, err := os.Open(path)
	if err != nil {
		return &FileError{Path: path, Msg: err.Error()}
	}
	defer f.Close()
	var head [4]byte
	n, _ := io.ReadFull(f, head[:])
	switch {
	case n < 4 || !bytes.Equal(head[:], Magic):
		return notBinlog(path, "not a binlog file: it does not start with the binlog magic bytes fe 62 69 6e", "pass binlog files written by the server (binlog.000001…), or its .index file")
	}
	return nil
}

// notBinlog is the error for a file that is not a binlog (or one cut
// short before its first event): exit code 4 like any other damage at a
// position, here offset 0.
func notBinlog(path, msg, hint string) error {
	return &Error{Pos: change.Position{File: filepath.Base(path)}, Err: errors.New(msg), Hint: hint}
}

// checkStart is called when the event at the start position (s.startAt)
// cannot be read. It walks the event headers from the file's start: when
// the position falls inside an event, the error says so and names the
// event starts around it; when it is an event start, the file is damaged
// there and readErr stands.
func (s *FileSource) checkStart(readErr error) error {
	f, err := os.Open(s.name)
	if err != nil {
		return readErr
	}
	defer f.Close()
	var hdr [HeaderSize]byte
	prev := int64(-1)
	for off := int64(4); ; {
		if off == s.startAt {
			return readErr
		}
		if off > s.startAt && prev >= 0 {
			return &FileError{Path: s.name,
				Msg:  fmt.Sprintf("the start position %s:%d is not the start of an event: it falls inside the event at %d; the nearest event starts are %d and %d", s.base, s.startAt, prev, prev, off),
				Hint: fmt.Sprintf("start at a transaction's first event (its GTID or BEGIN event): the Pos of a Gtid row of SHOW BINLOG EVENTS IN '%s', or the '# at N' before a GTID line of mariadb-binlog/mysqlbinlog (a JSON line's pos.offset is a rows event inside its transaction, not a start)", s.base)}
		}
		if off >= s.size {
			return readErr
		}
		if _, err := f.ReadAt(hdr[:], off); err != nil {
			return readErr
		}
		size := int64(parseHeader(hdr[:]).EventSize)
		if size < HeaderSize {
			return readErr // damaged before the start: cannot tell
		}
		prev, off = off, off+size
	}
}
