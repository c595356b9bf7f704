package archive

// Where a read finds an archive: a directory (DIR) or a bucket
// (s3://bucket/prefix, archive/s3up). PlanRead plans from either through
// the same code; only how a manifest is read, the files listed and one
// opened differ.

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Store is an archive to read: its manifests and files, by names
// relative to the archive, slash-separated ("binlogcdc-archive.json",
// "history-2/binlog.000003.zst").
type Store interface {
	// String names the archive in messages: DIR, or s3://bucket/prefix/.
	String() string
	// ReadFile reads the file name; an error that wraps fs.ErrNotExist
	// when there is none.
	ReadFile(ctx context.Context, name string) ([]byte, error)
	// List returns the names of the files in sub ("": the archive's
	// own directory; "history-2"), without sub.
	List(ctx context.Context, sub string) (map[string]bool, error)
	// Open opens the file name to read it from its start.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	// Path is how messages name the file name: a local path, or
	// s3://bucket/key.
	Path(name string) string
	// Local: Path is a file os.Open reads (a directory's), so that a read
	// seeks in it and the file being written is read to its last whole
	// event; else every file is a stream, and a file not complete is
	// refused.
	Local() bool
}

// DirStore is the archive in a directory.
type DirStore string

var _ Store = DirStore("")

func (d DirStore) String() string { return string(d) }

func (d DirStore) Path(name string) string {
	return filepath.Join(string(d), filepath.FromSlash(name))
}

func (d DirStore) Local() bool { return true }

func (d DirStore) ReadFile(_ context.Context, name string) ([]byte, error) {
	return os.ReadFile(d.Path(name))
}

func (d DirStore) List(_ context.Context, sub string) (map[string]bool, error) {
	ents, err := os.ReadDir(d.Path(sub))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	names := map[string]bool{}
	for _, e := range ents {
		if e.Type().IsRegular() {
			names[e.Name()] = true
		} else if e.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(d.Path(path.Join(sub, e.Name()))); err == nil && fi.Mode().IsRegular() {
				names[e.Name()] = true
			}
		}
	}
	return names, nil
}

func (d DirStore) Open(_ context.Context, name string) (io.ReadCloser, error) {
	return os.Open(d.Path(name))
}

// readManifestFrom reads the manifest of the history sub ("": the
// first) of the archive st; ok is false when there is none.
func readManifestFrom(ctx context.Context, st Store, sub string) (m *Manifest, ok bool, err error) {
	name := path.Join(sub, manifestName)
	b, err := st.ReadFile(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	m, err = parseManifest(b, st.Path(name))
	return m, err == nil, err
}
