package archive

// Compression, upload and expiry run in a goroutine of their own (the
// worker), so that a slow or failing store, or a large file to compress,
// never delays archiving the live binlog. The dump loop only tells the
// worker that there is work (kick): a file is complete, or the open file
// was written out. Each step is as crash-safe as before (compress.go,
// upload.go, keep.go): the manifest says what is done, and a restart's
// first pass does what is pending. A failed pass is reported on stderr
// and tried again after 1 s, then 2 s, … up to 5 min.
//
// The loop and the worker share the manifests: a.mu guards them in
// memory (the loop holds it to change them, the worker to read or change
// them, never during I/O), and a.saveMu keeps their writes in the order
// of their contents (save).

import (
	"context"
	"errors"
	"time"
)

// maxBackoff bounds the wait between two tries of a failed pass.
const maxBackoff = 5 * time.Minute

// worker runs background passes until its context ends.
type worker struct {
	kick chan struct{} // buffered: one pending kick is enough
	stop context.CancelFunc
	done chan struct{}
}

// background reports whether Config asks for work in the background.
func (c *Config) background() bool {
	return c.Compress != "" || c.Upload != nil || c.Keep.Age > 0 || c.Keep.Size > 0
}

// startWorker starts the worker (when there is work for one); its first
// pass does what a restart finds pending.
func (a *archiver) startWorker(ctx context.Context) {
	if !a.cfg.background() {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &worker{kick: make(chan struct{}, 1), stop: cancel, done: make(chan struct{})}
	w.kick <- struct{}{}
	a.bg = w
	go func() {
		defer close(w.done)
		a.runWorker(ctx, w)
	}()
}

// stopWorker ends the worker (an upload under way is cancelled: it is
// done again by the next pass, or the next start) and waits for it.
func (a *archiver) stopWorker() {
	if w := a.bg; w != nil {
		w.stop()
		<-w.done
		a.bg = nil
	}
}

// kickWorker tells the worker there may be work; it never blocks.
func (a *archiver) kickWorker() {
	if w := a.bg; w != nil {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

func (a *archiver) runWorker(ctx context.Context, w *worker) {
	backoff := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-a.partTimer():
		}
		err := a.pass(ctx, false)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			backoff = time.Second
			continue
		}
		a.failures.Add(1)
		a.cfg.Logf("warning: %v; tried again in %v", err, backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C: // kicks wait: a failing store is not hammered
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// partTimer fires when the open file's next part is due
// (--upload-open-every); nil (never) without parts.
func (a *archiver) partTimer() <-chan time.Time {
	if a.cfg.Upload == nil || a.cfg.UploadOpenEvery <= 0 {
		return nil
	}
	return time.After(a.cfg.UploadOpenEvery)
}

// pass does the pending work once: compression, uploads (the open file's
// part too), expiry. Each step is tried even when one before failed
// (expiry only removes what is done with); the first error is returned.
// final: the last pass of a --stop-at-end run, in the caller's goroutine:
// a failed upload is a warning then (the file is kept, and sent by the
// next run), only damage is an error.
func (a *archiver) pass(ctx context.Context, final bool) error {
	var first error
	note := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	note(a.compressPending())
	if err := a.uploadPending(ctx); err != nil {
		var ae *Error
		if final && !errors.As(err, &ae) {
			a.cfg.Logf("warning: %v; it is kept, and sent by the next run", err)
		} else {
			note(err)
		}
	}
	if !final {
		note(a.uploadOpen(ctx))
	}
	note(a.expire(time.Now()))
	return first
}

// save writes d's manifest (and index) as it is now in memory.
func (a *archiver) save(d *dir) error {
	a.saveMu.Lock()
	defer a.saveMu.Unlock()
	a.mu.Lock()
	enc, err := d.m.encode()
	a.mu.Unlock()
	if err != nil {
		return err
	}
	return enc.write(d.path)
}

// locked runs fn with a.mu held.
func (a *archiver) locked(fn func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fn()
}

// chain is the archive's histories, oldest first (under a.mu).
func (a *archiver) chain() []*dir {
	var chain []*dir
	for d := a.d; d != nil; d = d.prev {
		chain = append([]*dir{d}, chain...)
	}
	return chain
}
