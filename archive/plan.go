package archive

// An archive's files as a read sees them, across its server histories
// (history.go): each history up to its switch point, each later one from
// its first transaction after the switch's GTID position, its files named
// "history-N/NAME" in positions (change.History).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
)

// planFile is one file of the chain.
type planFile struct {
	e    *FileEntry
	key  string // in the store (Store); "" when expired
	path string // as messages name it (Store.Path); "" when expired
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

// chain is the archive in st as a read sees it.
type chain struct {
	ctx   context.Context
	st    Store
	files []planFile
	// after[n] is the GTID position history n (≥ 2) takes over after.
	after map[int]afterPos
	hists int
}

// readChain lists the archive's files across its histories (top is the
// first history's manifest). Every file a manifest lists must be there
// (archivedPaths), unless expired.
func readChain(ctx context.Context, st Store, top *Manifest) (*chain, error) {
	c := &chain{ctx: ctx, st: st, after: map[int]afterPos{}}
	m, sub, n := top, "", 1
	dir := st.String()
	for {
		keys, err := archivedPaths(ctx, st, sub, m)
		if err != nil {
			return nil, err
		}
		var fs []planFile
		for i, e := range m.Files {
			name := binlog.PlainName(e.Name)
			if n > 1 {
				name = historyDir(n) + "/" + name
			}
			f := planFile{e: e, key: keys[i], name: name, hist: n, from: 4}
			if f.key != "" {
				f.path = st.Path(f.key)
			}
			fs = append(fs, f)
		}
		path := st.Path(sub)
		if m.Switch != nil && n > 1 {
			after, err := parseAfter(m.Switch.After)
			if err != nil {
				return nil, &Error{Msg: fmt.Sprintf("the archive's switch position %q in %s: %v", m.Switch.After, path, err), Hint: "restore its manifests from a copy"}
			}
			c.after[n] = after
			if fs, err = c.skipRepeated(fs, after); err != nil {
				return nil, err
			}
		}
		c.hists = n
		if m.Next == "" {
			c.files = append(c.files, fs...)
			return c, nil
		}
		next, ok, err := readManifestFrom(ctx, st, m.Next)
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
		m, sub, n = next, m.Next, n+1
	}
}

// skipRepeated drops what a history's first files repeat of the one
// before: the transactions up to the switch's GTID position. It reads
// those files (their complete ones are checked against the manifest's
// SHA-256 first), usually just the first.
func (c *chain) skipRepeated(fs []planFile, after afterPos) ([]planFile, error) {
	for i := range fs {
		f := &fs[i]
		if f.e.Expired {
			continue
		}
		limit := int64(0)
		if f.e.Complete {
			if err := c.checkSum(f); err != nil {
				return nil, err
			}
			f.checked = true
		} else {
			s, err := c.scanOpen(f)
			if err != nil {
				return nil, err
			}
			if limit = s.end; limit < 4 {
				return nil, nil
			}
		}
		var from int64
		_, err := c.track(f, limit, func(tx *txInfo) error {
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

// checkSum checks the complete file f against its manifest's checksum
// (checkSum).
func (c *chain) checkSum(f *planFile) error {
	rc, err := c.st.Open(c.ctx, f.key)
	if err != nil {
		return missingFile(c.st, f, err)
	}
	defer rc.Close()
	r := &readErr{r: rc}
	err = checkSum(r, f.path, f.e)
	if err != nil && r.err != nil {
		// The store failed, not the file: no damage to report.
		if c.ctx.Err() != nil {
			return c.ctx.Err()
		}
		return &Error{Msg: fmt.Sprintf("cannot read %s to check it: %v; nothing was read", f.path, r.err),
			Hint: "check the store and the network, then read again"}
	}
	return err
}

// readErr remembers the error of its reader other than io.EOF.
type readErr struct {
	r   io.Reader
	err error
}

func (x *readErr) Read(p []byte) (int, error) {
	n, err := x.r.Read(p)
	if err != nil && err != io.EOF {
		x.err = err
	}
	return n, err
}

// scanOpen measures the file f being written (scanOpen): only in a
// directory, where the archiver writes it; a store holds complete files.
func (c *chain) scanOpen(f *planFile) (*scan, error) {
	if !c.st.Local() {
		return nil, &Error{Msg: fmt.Sprintf("the archive %s lists %s as not complete: a bucket's manifest lists only files uploaded whole", c.st, f.name),
			Hint: "restore the manifest from a copy, or read the archive's directory"}
	}
	return scanOpen(f.path, f.e)
}

// track runs a txTracker over the first limit bytes (0: all) of f.
func (c *chain) track(f *planFile, limit int64, onTx func(*txInfo) error) (*txTracker, error) {
	if c.st.Local() {
		return trackFile(f.path, limit, onTx)
	}
	rc, err := c.st.Open(c.ctx, f.key)
	if err != nil {
		return nil, missingFile(c.st, f, err)
	}
	defer rc.Close()
	return trackReader(f.path, rc, limit, onTx)
}

// missingFile is the error of a file listed that cannot be opened.
func missingFile(st Store, f *planFile, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &Error{Msg: fmt.Sprintf("the archive %s lacks %s, which its manifest lists: %v", st, f.path, err),
			Hint: "restore the file into the archive from a copy; binlogcdc does not read an archive with a hole"}
	}
	return fmt.Errorf("cannot read %s: %w", f.path, err)
}
