package archive

// --upload: each complete file (compressed, when --compress) is sent to
// Config.Upload and marked uploaded in the manifest once the store has
// it, checked. The worker does it (worker.go): a failed upload is
// reported and tried again later; the file stays (expiry keeps it,
// keep.go). With --upload-open-every the open file goes up in parts
// (NAME.part-OFFSET); once the whole file is uploaded, its parts are
// removed from the store (FileEntry.Parts says there may be some left,
// so a restart removes them too).

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// uploadPending uploads every complete file of every history not
// uploaded yet, oldest first, and removes the parts of the files
// uploaded; it stops at the first failure.
func (a *archiver) uploadPending(ctx context.Context) error {
	if a.cfg.Upload == nil {
		return nil
	}
	type job struct {
		d              *dir
		e              *FileEntry
		stored, want   string
		uploaded, part bool
	}
	var jobs []job
	a.locked(func() {
		for _, d := range a.chain() {
			for _, e := range d.m.Files {
				if !e.Complete || e.Expired || (e.Uploaded && !e.Parts) {
					continue
				}
				if !e.Uploaded && a.cfg.Compress != "" && e.Stored == "" {
					continue // compressed first (compressPending)
				}
				jobs = append(jobs, job{d, e, e.stored(), e.asStored(), e.Uploaded, e.Parts})
			}
		}
	})
	for _, j := range jobs {
		if !j.uploaded {
			if err := a.upload(ctx, j.d, j.stored, j.want); err != nil {
				return err
			}
			a.locked(func() { j.e.Uploaded = true })
			if err := a.save(j.d); err != nil {
				return err
			}
			a.cfg.Logf("uploaded %s", filepath.Join(j.d.path, j.stored))
		}
		if j.part || j.e.Parts {
			if err := a.removeParts(ctx, j.d, j.e); err != nil {
				return err
			}
		}
	}
	return nil
}

// upload sends the file name of history d, whose checksum must be want.
func (a *archiver) upload(ctx context.Context, d *dir, name, want string) error {
	path := filepath.Join(d.path, name)
	// A file damaged since it was closed is never uploaded as good.
	if got, err := sumFile(path, want); err != nil {
		return &Error{Msg: fmt.Sprintf("cannot read %s to upload it: %v", path, err)}
	} else if !sameSum(got, want) {
		return &Error{Msg: fmt.Sprintf("the archive's %s is damaged: %s; it is not uploaded", path, sumMismatch(got, want)),
			Hint: "restore the file from a copy; binlogcdc archive does not overwrite it"}
	}
	if err := a.cfg.Upload.Put(ctx, uploadKey(d, name), path); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s is not uploaded (%w)", path, err)
	}
	return nil
}

// removeParts removes the parts of e from the store, now that the whole
// file is there, and then clears e.Parts.
func (a *archiver) removeParts(ctx context.Context, d *dir, e *FileEntry) error {
	prefix := uploadKey(d, e.Name+".part-")
	n, err := a.cfg.Upload.Remove(ctx, prefix)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("the parts %s* of the uploaded %s are not removed from the store (%w)", prefix, e.Name, err)
	}
	a.locked(func() { e.Parts, e.UploadedUpto = false, 0 })
	if err := a.save(d); err != nil {
		return err
	}
	a.cfg.Logf("removed %d parts of %s from the store: the whole file is uploaded", n, e.Name)
	return nil
}

// uploadKey is the key of a file of history d, under the prefix.
func uploadKey(d *dir, name string) string {
	if d.depth > 1 {
		return filepath.Base(d.path) + "/" + name
	}
	return name
}

// uploadOpen sends what the open file gained since its last part (as far
// as it is written out) as NAME.part-OFFSET (12 digits: the parts' names
// sort by offset, and they make up the file's first bytes once put end
// to end). The worker calls it every UploadOpenEvery.
func (a *archiver) uploadOpen(ctx context.Context) error {
	if a.cfg.Upload == nil || a.cfg.UploadOpenEvery <= 0 {
		return nil
	}
	var d *dir
	var e *FileEntry
	var path string
	var from, to int64
	var parts bool
	a.locked(func() {
		if o := a.cur; o != nil {
			d, e, path, from, to, parts = a.d, o.entry, o.path, o.entry.UploadedUpto, o.flushed, o.entry.Parts
		}
	})
	if e == nil || to <= from {
		return nil
	}
	if !parts {
		// Said before the first part is sent: a restart removes the
		// parts once the file is uploaded whole, even after a kill.
		a.locked(func() { e.Parts = true })
		if err := a.save(d); err != nil {
			return err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	key := uploadKey(d, fmt.Sprintf("%s.part-%012d", e.Name, from))
	if err := a.cfg.Upload.PutSection(ctx, key, f, from, to-from); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%s bytes %d to %d are not uploaded (%w)", path, from, to, err)
	}
	a.locked(func() { e.UploadedUpto = to })
	return a.save(d)
}
