package archive

// --upload: each complete file (compressed, when --compress) is sent to
// Config.Upload and marked uploaded in the manifest once the store has
// it, checked. A failed upload is not fatal: the file stays (expiry
// keeps it, keep.go), a warning says so, and the upload is tried again
// when the next file is complete and at each start.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// fileSHA is the SHA-256 of the file at path, as stored.
func fileSHA(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// uploadPending uploads every complete file of every history not
// uploaded yet, oldest first; it stops at the first failure.
func (a *archiver) uploadPending(ctx context.Context) error {
	if a.cfg.Upload == nil {
		return nil
	}
	var chain []*dir
	for d := a.d; d != nil; d = d.prev {
		chain = append([]*dir{d}, chain...)
	}
	for _, d := range chain {
		for _, e := range d.m.Files {
			if !e.Complete || e.Expired || e.Uploaded {
				continue
			}
			if a.cfg.Compress != "" && e.Stored == "" {
				continue // compressed first (finishCompression)
			}
			key := e.stored()
			if d.depth > 1 {
				key = filepath.Base(d.path) + "/" + key
			}
			path := filepath.Join(d.path, e.stored())
			// A file damaged since it was closed is never uploaded as good.
			want := e.SHA256
			if e.Stored != "" {
				want = e.StoredSHA256
			}
			if got, err := fileSHA(path); err != nil {
				return &Error{Msg: fmt.Sprintf("cannot read %s to upload it: %v", path, err)}
			} else if got != want {
				return &Error{Msg: fmt.Sprintf("the archive's %s is damaged: its SHA-256 is %s, the manifest says %s; it is not uploaded", path, got, want),
					Hint: "restore the file from a copy; binlogcdc archive does not overwrite it"}
			}
			if err := a.cfg.Upload.Put(ctx, key, path); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				a.cfg.Logf("warning: %s is not uploaded (%v); it is kept, and the upload is tried again when the next file is complete and at the next start", path, err)
				return nil
			}
			e.Uploaded = true
			if err := d.m.save(d.path); err != nil {
				return err
			}
			a.cfg.Logf("uploaded %s", path)
		}
	}
	return nil
}
