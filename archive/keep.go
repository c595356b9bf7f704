package archive

// Expiry (--keep-days, --keep-size): the oldest complete files go once
// they are older than the age kept, or while the archive is larger than
// the size kept. Never the file being written, never the newest file of
// the current history (a restart compares the server's copy of its last
// event with it), never a file not yet uploaded when an upload is set,
// nor one not yet compressed with --compress. The worker runs it
// (worker.go).
// A file is marked expired in the manifest (durably) before it is
// removed; a restart removes one it finds still there.

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Keep says what the archive keeps; zero values keep everything.
type Keep struct {
	Age  time.Duration // files whose last event is older go
	Size uint64        // the oldest files go while the archive is larger
}

// ParseSize parses a size: bytes, or a number with K, M, G, T (KB, …:
// powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024).
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	if i < 0 {
		i = len(t)
	}
	mult, ok := map[string]float64{"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
		"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}[strings.ToLower(strings.TrimSpace(t[i:]))]
	n, err := strconv.ParseFloat(t[:i], 64)
	if !ok || err != nil || n*mult < 1 || n*mult >= 1<<63 {
		return 0, fmt.Errorf("%q: want a size such as 500MB, 10GB or 1TiB", s)
	}
	return uint64(n * mult), nil
}

// Uploader sends complete files to other storage (--upload, upload.go).
type Uploader interface {
	// Put stores the file at path under key, durably and checked.
	Put(ctx context.Context, key, path string) error
	// PutSection stores n bytes of f from off under key, likewise.
	PutSection(ctx context.Context, key string, f io.ReaderAt, off, n int64) error
	// Remove removes every object whose key starts with prefix and
	// returns how many there were.
	Remove(ctx context.Context, prefix string) (int, error)
}

// kept is one file of the archive as expiry sees it.
type kept struct {
	d *dir
	e *FileEntry
}

// expire removes what Keep lets go, oldest first, across the histories.
func (a *archiver) expire(now time.Time) error {
	k := a.cfg.Keep
	if k.Age == 0 && k.Size == 0 {
		return nil
	}
	var all []kept
	var total uint64
	var newest *FileEntry
	a.locked(func() {
		for _, d := range a.chain() {
			for _, e := range d.m.Files {
				if e.Expired {
					continue
				}
				all = append(all, kept{d, e})
				if e.Stored != "" {
					total += e.StoredSize
				} else if a.cur != nil && a.cur.entry == e {
					total += uint64(a.cur.flushed)
				} else {
					total += e.Size
				}
			}
		}
		newest = a.d.m.last()
	})
	for _, f := range all {
		var lastTime, stored string
		var complete, uploaded, parts bool
		var size uint64
		a.locked(func() {
			lastTime, stored, complete, uploaded, parts, size = f.e.LastTime, f.e.Stored, f.e.Complete, f.e.Uploaded, f.e.Parts, f.e.Size
			if stored != "" {
				size = f.e.StoredSize
			}
		})
		if !complete || f.e == newest {
			break
		}
		old := k.Age > 0 && lastTime != "" && olderThan(lastTime, now.Add(-k.Age))
		big := k.Size > 0 && total > k.Size
		if !old && !big {
			break
		}
		if a.cfg.Upload != nil && !uploaded {
			a.cfg.Logf("%s is not uploaded yet: kept although --keep-* would let it go", filepath.Join(f.d.path, f.e.stored()))
			break
		}
		if a.cfg.Upload != nil && parts {
			break // its parts removed from the store first (upload.go)
		}
		if a.cfg.Compress != "" && stored == "" {
			break // compressed first (compressPending), then expired
		}
		a.locked(func() { f.e.Expired = true })
		if err := a.save(f.d); err != nil {
			return err
		}
		why := "older than --keep-days"
		if !old {
			why = "the archive is larger than --keep-size"
		}
		a.cfg.Logf("expired %s (%s)", filepath.Join(f.d.path, f.e.stored()), why)
		if err := removeExpired(f.d, f.e); err != nil {
			return err
		}
		total -= size
	}
	return nil
}

func olderThan(rfc3339 string, limit time.Time) bool {
	t, err := time.Parse(time.RFC3339, rfc3339)
	return err == nil && t.Before(limit)
}

// removeExpired removes an expired file (plain and compressed forms) if
// it is still there.
func removeExpired(d *dir, e *FileEntry) error {
	removed := false
	for _, n := range []string{e.Name, e.Name + zstSuffix} {
		err := os.Remove(filepath.Join(d.path, n))
		if err != nil && !os.IsNotExist(err) {
			return &Error{Msg: fmt.Sprintf("cannot remove the expired %s: %v", filepath.Join(d.path, n), err), Write: true}
		}
		removed = removed || err == nil
	}
	if removed {
		if err := syncDir(d.path); err != nil {
			return &Error{Msg: fmt.Sprintf("cannot sync %s: %v", d.path, err), Write: true}
		}
	}
	return nil
}

// finishExpiry removes expired files a killed archiver left.
func (a *archiver) finishExpiry() error {
	for d := a.d; d != nil; d = d.prev {
		for _, e := range d.m.Files {
			if e.Expired {
				if err := removeExpired(d, e); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
