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
// sequence. Usage marks a mistake in the arguments themselves (which
// files were named: a missing path, a gap, '-' with other files), as
// opposed to one in a file's content (a damaged archive).
type FileError struct {
	Path  string
	Msg   string
	Hint  string
	Usage bool
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
// A gzip- or zstd-compressed file (binlog.000042.gz) is decompressed into
// a temporary directory first and read from there (Origin names the file
// it came from); cleanup removes those copies. Stdin ('-') is left as
// "-", for OpenFiles to read as it arrives, unless copyStdin: then it is
// copied too (for a caller that reads the binlogs more than once).
func ResolveFiles(files []string, copyStdin bool) (resolved []string, cleanup func(), err error) {
	u := &unpacker{}
	resolved, err = resolveFiles(files, true, copyStdin, u)
	if err != nil {
		u.cleanup()
		return nil, func() {}, err
	}
	return resolved, u.cleanup, nil
}

// resolveFiles is ResolveFiles; without content, a file's first bytes are
// not looked at (OpenFiles leaves that to reading, which reports it at
// offset 0 of the file).
func resolveFiles(files []string, content, copyStdin bool, u *unpacker) ([]string, error) {
	if len(files) == 0 {
		return nil, &FileError{Msg: "no binlog files given", Hint: "binlogcdc read /var/lib/mysql/binlog.000001 (or the binlog.index file)", Usage: true}
	}
	for _, f := range files {
		if f == "-" && len(files) > 1 {
			return nil, &FileError{Msg: "stdin ('-') must be the only file", Hint: "read the files by name, or one binlog from stdin", Usage: true}
		}
		if strings.HasSuffix(f, ".index") && len(files) > 1 {
			return nil, &FileError{Path: f, Msg: "is the server's binlog index, given with other files", Hint: "give the index alone (it lists the binlogs), or only the binlog files (binlog.0*)", Usage: true}
		}
	}
	if len(files) == 1 && files[0] == "-" && !copyStdin {
		return files, nil // read as it arrives (file.go openStdin)
	}
	fromIndex := false
	if len(files) == 1 && strings.HasSuffix(files[0], ".index") {
		listed, err := ReadIndex(files[0])
		if err != nil {
			return nil, &FileError{Path: files[0], Msg: strings.TrimPrefix(err.Error(), "binlog: "), Hint: "give the server's binlog index file (binlog.index in its datadir) or the binlog files"}
		}
		for i, f := range listed {
			// An archived file listed by its plain name: read it compressed.
			if _, err := os.Stat(f); os.IsNotExist(err) {
				if found, _ := seriesForms(filepath.Dir(f), filepath.Base(f)); len(found) == 1 {
					listed[i] = found[0]
				}
			}
		}
		files, fromIndex = listed, true
	}
	var out, given []string
	seen := map[string]string{}
	for _, g := range files {
		if err := checkFile(g, false); err != nil { // before unpacking: name the path as given
			var fe *FileError
			if errors.As(err, &fe) {
				fe.Usage = !fromIndex && g != "-"
				if fromIndex {
					fe.Msg += " (listed in the index)"
				}
			}
			return nil, err
		}
		f, err := u.unpack(g) // compressed.go: .gz, .zst, stdin
		if err != nil {
			return nil, err
		}
		if err := checkFile(f, content); err != nil {
			return nil, err
		}
		if prev, ok := seen[filepath.Base(f)]; ok {
			if prev != g && !sameFile(prev, g) {
				return nil, &FileError{Path: g, Msg: fmt.Sprintf("and %s are both %s", prev, filepath.Base(f)), Hint: "give each binlog once, in one form (plain, .gz or .zst)", Usage: true}
			}
			continue // given twice: read once
		}
		seen[filepath.Base(f)] = g
		out, given = append(out, f), append(given, g)
	}
	if len(out) < 2 {
		return out, nil
	}
	seqs := make([]uint64, len(out))
	stem := ""
	for i, f := range out {
		st, n, ok := Sequence(f)
		if !ok {
			return nil, &FileError{Msg: fmt.Sprintf("%s has no sequence number (like binlog.000042), so binlogcdc cannot tell in which order to read it with the other files", given[i]),
				Hint: "read it on its own, or give the server's binlog files by their own names", Usage: !fromIndex}
		}
		if i == 0 {
			stem = st
		} else if st != stem {
			return nil, &FileError{Msg: fmt.Sprintf("%s and %s belong to different binlog series (%s.* and %s.*)", given[0], given[i], stem, st),
				Hint: "read one server's binlog files (or one relay log) at a time", Usage: !fromIndex}
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
			return nil, &FileError{Msg: fmt.Sprintf("the files skip %s, between %s and %s: its changes would be lost", missing, given[idx[i-1]], given[idx[i]]),
				Hint: "give every file of the sequence (or the server's .index file), or read the parts before and after the gap in separate runs", Usage: !fromIndex}
		}
	}
	return sorted, nil
}

// sameFile reports whether a and b are the same file.
func sameFile(a, b string) bool {
	ai, aerr := os.Stat(a)
	bi, berr := os.Stat(b)
	return aerr == nil && berr == nil && os.SameFile(ai, bi)
}

// seriesForms returns the paths in dir under which the binlog named name
// (binlog.000042) sits: plain, or compressed (binlog.000042.gz, .zst, …).
func seriesForms(dir, name string) ([]string, error) {
	var found []string
	for _, ext := range append([]string{""}, CompressedSuffixes...) {
		p := filepath.Join(dir, name+ext)
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.Mode().IsRegular():
			found = append(found, p)
		case err != nil && !os.IsNotExist(err):
			return found, err
		}
	}
	return found, nil
}

// laterInSeries returns a file in dir of the series stem (in any form)
// whose sequence number is above n, or "".
func laterInSeries(dir, stem string, n uint64) string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	best, bestN := "", uint64(0)
	for _, e := range ents {
		st, m, ok := Sequence(PlainName(e.Name()))
		if ok && st == stem && m > n && (best == "" || m < bestN) {
			best, bestN = e.Name(), m
		}
	}
	return best
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
	if path == "-" {
		return nil // stdin: read as it arrives
	}
	fi, err := os.Stat(path)
	switch {
	case os.IsNotExist(err) && path != "-":
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
	return &Error{Pos: change.Position{File: filepath.Base(path)}, Path: shownPath(path), Err: errors.New(msg), Hint: hint}
}

// shownPath is the path to name in a message about the file read from
// path: the path given (a compressed file, not its copy), or "stdin".
func shownPath(path string) string {
	o := Origin(path)
	if o == "-" {
		return StdinName
	}
	return o
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
			return &FileError{Path: s.shown(),
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
