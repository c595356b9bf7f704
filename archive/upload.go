package archive

// --upload: each complete file (compressed, when --compress) is sent to
// Config.Upload and marked uploaded in the manifest once the store has
// it, checked. A failed upload is not fatal: the file stays (expiry
// keeps it, keep.go), a warning says so, and the upload is tried again
// when the next file is complete and at each start.

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
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
			key := uploadKey(d, e.stored())
			path := filepath.Join(d.path, e.stored())
			// A file damaged since it was closed is never uploaded as good.
			want := e.asStored()
			if got, err := sumFile(path, want); err != nil {
				return &Error{Msg: fmt.Sprintf("cannot read %s to upload it: %v", path, err)}
			} else if !sameSum(got, want) {
				return &Error{Msg: fmt.Sprintf("the archive's %s is damaged: %s; it is not uploaded", path, sumMismatch(got, want)),
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

// uploadKey is the key of a file of history d, under the prefix.
func uploadKey(d *dir, name string) string {
	if d.depth > 1 {
		return filepath.Base(d.path) + "/" + name
	}
	return name
}

// uploadOpen sends what the open file gained since its last part as
// NAME.part-OFFSET (12 digits: the parts' names sort by offset, and they
// make up the file's first bytes once put end to end), every
// UploadOpenEvery. A failure warns; the next part covers the bytes.
func (a *archiver) uploadOpen(ctx context.Context) error {
	o := a.cur
	if a.cfg.Upload == nil || a.cfg.UploadOpenEvery <= 0 || o == nil || o.w == nil || time.Since(a.lastPart) < a.cfg.UploadOpenEvery {
		return nil
	}
	from := o.entry.UploadedUpto
	if o.off <= from {
		return nil
	}
	a.lastPart = time.Now()
	key := uploadKey(a.d, fmt.Sprintf("%s.part-%012d", o.entry.Name, from))
	if err := a.cfg.Upload.PutSection(ctx, key, o.f, from, o.off-from); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		a.cfg.Logf("warning: %s bytes %d to %d are not uploaded (%v); tried again in %v", o.path, from, o.off, err, a.cfg.UploadOpenEvery)
		return nil
	}
	o.entry.UploadedUpto = o.off
	return a.d.m.save(a.d.path)
}
