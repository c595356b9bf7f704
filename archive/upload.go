package archive

// --upload: each complete file (compressed, when --compress) is sent to
// Config.Upload and marked uploaded in the manifest once the store has
// it, checked. The worker does it (worker.go): a failed upload is
// reported and tried again later; the file stays (expiry keeps it,
// keep.go). With --upload-open-every the open file goes up in parts
// (NAME.part-OFFSET); once the whole file is uploaded, its parts are
// removed from the store (FileEntry.Parts says there may be some left,
// so a restart removes them too).
//
// The store also gets each history's manifest (bucketManifest), after
// the files it lists, so that the bucket alone is an archive 'binlogcdc
// read s3://…' reads: it lists the files uploaded, and those expired
// here after their upload (they stay in the store).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// uploadPending uploads every complete file of every history not
// uploaded yet, oldest first, and removes the parts of the files
// uploaded; it stops at the first failure. Then the manifests go up
// (uploadManifests), naming what is in the store.
func (a *archiver) uploadPending(ctx context.Context) error {
	if a.cfg.Upload == nil {
		return nil
	}
	err := a.uploadFiles(ctx)
	if merr := a.uploadManifests(ctx); err == nil {
		err = merr
	}
	return err
}

// uploadFiles: see uploadPending.
func (a *archiver) uploadFiles(ctx context.Context) error {
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

// uploadManifests uploads each history's bucketManifest that changed
// since it was last sent (once after a start). One PUT replaces an
// object whole: a reader sees the manifest before or after, never a
// part, and never one that lists a file not there yet.
func (a *archiver) uploadManifests(ctx context.Context) error {
	type up struct {
		d   *dir
		enc []byte
	}
	var ups []up
	var err error
	a.locked(func() {
		for _, d := range a.chain() {
			bm := bucketManifest(d.m)
			if !slices.ContainsFunc(bm.Files, func(e *FileEntry) bool { return !e.Expired }) {
				continue // no file in the store yet
			}
			var b []byte
			if b, err = json.MarshalIndent(bm, "", "  "); err != nil {
				return
			}
			b = append(b, '\n')
			if !bytes.Equal(b, a.sentManifest[d.path]) {
				ups = append(ups, up{d, b})
			}
		}
	})
	if err != nil {
		return err
	}
	for _, u := range ups {
		key := uploadKey(u.d, manifestName)
		if err := a.cfg.Upload.PutSection(ctx, key, bytes.NewReader(u.enc), 0, int64(len(u.enc))); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("the manifest of %s is not uploaded (%w)", u.d.path, err)
		}
		if a.sentManifest == nil {
			a.sentManifest = map[string][]byte{}
		}
		a.sentManifest[u.d.path] = u.enc
	}
	return nil
}

// bucketManifest is the manifest m as the store holds it: its files up
// to the first one not uploaded yet (the file being written, or one
// waiting for its upload), each uploaded one as there (even when
// expired here: it stays in the store), one expired here before it was
// uploaded (an archive that got --upload later) as expired. The upload
// bookkeeping is left out. Next, the history after a failover, only
// once every file of m is listed: the reader then finds the switch's
// file.
func bucketManifest(m *Manifest) *Manifest {
	bm := *m
	bm.Files = nil
	for _, e := range m.Files {
		if !e.Complete || (!e.Uploaded && !e.Expired) {
			break
		}
		c := *e
		c.Expired = !e.Uploaded
		c.Uploaded, c.UploadedUpto, c.Parts = false, 0, false
		bm.Files = append(bm.Files, &c)
	}
	if len(bm.Files) < len(m.Files) {
		bm.Next = ""
	}
	return &bm
}
