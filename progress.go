package binlogcdc

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/binlogcdc/binlogcdc/pipeline"
)

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// startProgress prints a status line every second until the returned
// function is called.
func startProgress(ctx context.Context, w io.Writer, p *pipeline.Pipeline) func() {
	done := make(chan struct{})
	var stopped atomic.Bool
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		start := time.Now()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				s := p.Progress()
				secs := time.Since(start).Seconds()
				fmt.Fprintf(w, "\rbinlogcdc: %s:%d  %d rows  %d transactions  %.0f rows/s   ",
					s.Last.File, s.Last.Offset, s.Rows, s.Transactions, float64(s.Rows)/secs)
			}
		}
	}()
	return func() {
		if stopped.CompareAndSwap(false, true) {
			close(done)
			fmt.Fprintln(w)
		}
	}
}
