package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// signals turns SIGINT and SIGTERM into a graceful stop: commands that
// can stop at a transaction boundary register with onStop; others are
// cancelled at once. A second signal always cancels.
type signals struct {
	cancel context.CancelFunc

	mu        sync.Mutex
	stop      func()
	inTx      func() bool
	requested bool
}

// graceWait is how long a graceful stop may wait for the open transaction.
const graceWait = 30 * time.Second

func watchSignals(ctx context.Context) (context.Context, *signals, func()) {
	ctx, cancel := context.WithCancel(ctx)
	s := &signals{cancel: cancel}
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-ch:
				s.handle()
			}
		}
	}()
	return ctx, s, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}

func (s *signals) handle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop == nil || s.requested {
		s.cancel()
		return
	}
	s.requested = true
	s.stop()
	if !s.inTx() {
		// Idle, waiting for events: nothing to finish.
		s.cancel()
		return
	}
	time.AfterFunc(graceWait, s.cancel)
}

// onStop registers a graceful stop. The returned function reports whether
// a stop was requested.
func (s *signals) onStop(stop func(), inTx func() bool) func() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stop, s.inTx = stop, inTx
	return func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.requested
	}
}
