package archive

import (
	"errors"
	"fmt"
	"path/filepath"
)

// Segment is what a reader of an archive reads of one file.
type Segment struct {
	// Path is the file (under the archive's directory; a .zst one is
	// zstd-compressed), Name the binlog file name positions use.
	Path string
	Name string
	// From: deliver the transactions that start at or after this offset
	// (4: the whole file; the file's FORMAT_DESCRIPTION_EVENT at 4 is
	// read first either way). To: only those that start before it (0: to
	// the end of the file).
	From int64
	To   int64
	// History is 1 for the archive's first server history, 2 for the
	// one after the first failover, …
	History int
}

// ReadList lists what to read of the archive in dir, in order, so that
// every archived transaction is delivered once, across failovers: each
// history up to its last whole transaction before the switch, the next
// from its first transaction after the switch's GTID position. It takes
// no lock: the archiver may be writing the newest file, which a reader
// reads up to its last whole event.
func ReadList(dir string) ([]Segment, error) {
	m, ok, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &Error{Msg: fmt.Sprintf("%s is not an archive of binlogcdc: it has no %s", dir, manifestName),
			Hint: "give the --dir of binlogcdc archive"}
	}
	var out []Segment
	gone := map[string]bool{} // expired files (keep.go)
	add := func(segs []Segment) {
		for _, s := range segs {
			if !gone[s.Path] {
				out = append(out, s)
			}
		}
	}
	path, n := dir, 1
	for {
		segs := make([]Segment, 0, len(m.Files))
		for _, e := range m.Files {
			segs = append(segs, Segment{Path: filepath.Join(path, e.stored()), Name: e.Name, From: 4, History: n})
			gone[segs[len(segs)-1].Path] = e.Expired
		}
		if m.Switch != nil {
			if segs, err = afterSwitch(segs, m.Switch, gone); err != nil {
				return nil, err
			}
		}
		if m.Next == "" {
			add(segs)
			return out, nil
		}
		next, ok, err := readManifest(filepath.Join(dir, m.Next))
		if err != nil {
			return nil, err
		}
		if !ok || next.Switch == nil {
			// The archiver was stopped while it switched: this history
			// is whole, the next one not begun.
			add(segs)
			return out, nil
		}
		sw := next.Switch
		i := 0
		for i < len(segs) && segs[i].Name != sw.PrevFile {
			i++
		}
		if i == len(segs) {
			return nil, &Error{Msg: fmt.Sprintf("the archive %s says history %d ends in %s, which history %d does not hold", dir, n+1, sw.PrevFile, n),
				Hint: "restore its manifests from a copy"}
		}
		segs[i].To = sw.PrevEnd
		add(segs[:i+1])
		m, path, n = next, filepath.Join(dir, m.Next), n+1
	}
}

// afterSwitch drops what a history repeats of the one before: the
// transactions its first files hold up to the switch's GTID position.
func afterSwitch(segs []Segment, sw *Switch, gone map[string]bool) ([]Segment, error) {
	after, err := parseAfter(sw.After)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("the archive's switch position %q: %v", sw.After, err), Hint: "restore its manifests from a copy"}
	}
	for i := range segs {
		if gone[segs[i].Path] {
			continue
		}
		var from int64
		_, err := trackFile(segs[i].Path, 0, func(tx *txInfo) error {
			if after.covers(tx) {
				return nil
			}
			from = tx.start
			return errFound
		})
		switch {
		case errors.Is(err, errFound):
			segs[i].From = from
			return segs[i:], nil
		case err != nil:
			return nil, err
		}
	}
	return nil, nil // no transaction after the switch yet
}
