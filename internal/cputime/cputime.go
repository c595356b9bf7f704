// Package cputime reports a benchmark's CPU time per operation beside
// its wall time: on a machine shared with other work, ns/op counts the
// time the benchmark waited for a CPU too, and cpu-ns/op does not.
package cputime

import (
	"runtime"
	"testing"
)

// Start locks the benchmark to its thread and returns the function that,
// called after the benchmark's loop, reports the thread's user+system CPU
// time per operation as "cpu-ns/op". Work done by other goroutines is not
// counted, so it fits benchmarks that run on one goroutine.
func Start(b *testing.B) (stop func()) {
	b.Helper()
	runtime.LockOSThread()
	t0 := threadCPU()
	return func() {
		d := threadCPU() - t0
		runtime.UnlockOSThread()
		if b.N > 0 {
			b.ReportMetric(float64(d)/float64(b.N), "cpu-ns/op")
		}
	}
}
