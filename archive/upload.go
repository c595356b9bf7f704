package archive

// --upload: each complete file (compressed, when --compress) is sent to
// Config.Upload and marked uploaded in the manifest once the store has
// it, checked. A failed upload is not fatal: the file stays (expiry
// keeps it, keep.go), a warning says so, and the upload is tried again
// when the next file is complete and at each start.

import (
	"context"
	"path/filepath"
)

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
