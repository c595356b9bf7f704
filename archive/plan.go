package archive

// An archive's files as a read sees them, across its server histories
// (history.go): each history up to its switch point, each later one from
// its first transaction after the switch's GTID position, its files named
// "history-N/NAME" in positions (change.History).

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
)

// planFile is one file of the chain.
type planFile struct {
	e    *FileEntry
	path string // "" when expired
	name string // in positions
	hist int
	// from: the first transaction to read starts here (4: all); to: the
	// read stops here (0: the end; a history's switch point).
	from, to int64
	// cutStart: the file's first transactions repeat the history before
	// (from > 4): its first_time says nothing of what is read of it.
	cutStart bool
	checked  bool // its SHA-256 was checked already (skipRepeated)
}

// chain is the archive in dir as a read sees it.
type chain struct {
	files []planFile
	// after[n] is the GTID position history n (≥ 2) takes over after.
	after map[int]afterPos
	hists int
}

// readChain lists the archive's files across its histories (top is the
// first history's manifest). Every file a manifest lists must be there
// (archivedPaths), unless expired.
func readChain(dir string, top *Manifest) (*chain, error) {
	c := &chain{after: map[int]afterPos{}}
	m, path, n := top, dir, 1
	for {
		paths, err := archivedPaths(path, m)
		if err != nil {
			return nil, err
		}
		var fs []planFile
		for i, e := range m.Files {
			name := binlog.PlainName(e.Name)
			if n > 1 {
				name = historyDir(n) + "/" + name
			}
			fs = append(fs, planFile{e: e, path: paths[i], name: name, hist: n, from: 4})
		}
		if m.Switch != nil && n > 1 {
			after, err := parseAfter(m.Switch.After)
			if err != nil {
				return nil, &Error{Msg: fmt.Sprintf("the archive's switch position %q in %s: %v", m.Switch.After, path, err), Hint: "restore its manifests from a copy"}
			}
			c.after[n] = after
			if fs, err = skipRepeated(fs, after); err != nil {
				return nil, err
			}
		}
		c.hists = n
		if m.Next == "" {
			c.files = append(c.files, fs...)
			return c, nil
		}
		sub := filepath.Join(dir, m.Next)
		next, ok, err := readManifest(sub)
		if err != nil {
			return nil, err
		}
		if !ok || next.Switch == nil {
			// The archiver was stopped while it switched: this history
			// is whole, the next one not begun.
			c.files = append(c.files, fs...)
			return c, nil
		}
		if m.Next != historyDir(n+1) {
			return nil, &Error{Msg: fmt.Sprintf("the archive %s names its history %d %q, not %s", dir, n+1, m.Next, historyDir(n+1)), Hint: "restore its manifests from a copy"}
		}
		i := 0
		for i < len(fs) && fs[i].e.Name != next.Switch.PrevFile {
			i++
		}
		if i == len(fs) {
			if len(fs) > 0 || n == 1 {
				return nil, &Error{Msg: fmt.Sprintf("the archive %s says history %d ends in %s, which history %d does not hold", dir, n+1, next.Switch.PrevFile, n),
					Hint: "restore its manifests from a copy"}
			}
		} else {
			fs[i].to = next.Switch.PrevEnd
			fs = fs[:i+1]
		}
		c.files = append(c.files, fs...)
		m, path, n = next, sub, n+1
	}
}

// skipRepeated drops what a history's first files repeat of the one
// before: the transactions up to the switch's GTID position. It reads
// those files (their complete ones are checked against the manifest's
// SHA-256 first), usually just the first.
func skipRepeated(fs []planFile, after afterPos) ([]planFile, error) {
	for i := range fs {
		f := &fs[i]
		if f.e.Expired {
			continue
		}
		limit := int64(0)
		if f.e.Complete {
			if err := checkSum(f.path, f.e); err != nil {
				return nil, err
			}
			f.checked = true
		} else {
			s, err := scanOpen(f.path, f.e)
			if err != nil {
				return nil, err
			}
			if limit = s.end; limit < 4 {
				return nil, nil
			}
		}
		var from int64
		_, err := trackFile(f.path, limit, func(tx *txInfo) error {
			if after.covers(tx) {
				return nil
			}
			from = tx.start
			return errFound
		})
		switch {
		case errors.Is(err, errFound):
			f.from, f.cutStart = from, from > 4
			return fs[i:], nil
		case err != nil:
			return nil, err
		}
	}
	return nil, nil // no transaction after the switch yet
}

// index is the position of the file named name (in positions) in the
// chain, or -1.
func (c *chain) index(name string) int {
	for i, f := range c.files {
		if f.name == name {
			return i
		}
	}
	return -1
}

// repeated reports whether the transaction gtid starting at pos is one
// a later history repeats of the one before (its switch position covers
// it): it was read from the history before.
func (c *chain) repeated(pos change.Position, g string) bool {
	n, _ := change.History(pos.File)
	after, ok := c.after[n]
	return ok && after.coversID(g)
}
