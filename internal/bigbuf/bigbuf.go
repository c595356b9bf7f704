// Package bigbuf allocates the buffers of very large values (a row of
// hundreds of megabytes) so that two of them are never in the heap at once.
//
// Go's collector lets the heap grow to twice what was live at its last
// cycle. A cycle that ran while one huge buffer was live (the event that
// carried a 200 MB row) therefore lets the next huge buffer (the same row
// read back from a spill file) be allocated while the first, now garbage,
// is still there: the peak doubles. Collecting first, only for
// allocations this large, costs one cycle over a small live heap per
// huge value, which is little beside copying it. The freed memory is
// returned to the system at once too (debug.FreeOSMemory): a collection
// alone left the old buffer's pages resident about half the time, and
// the new buffer in fresh ones.
package bigbuf

import "runtime/debug"

// Threshold is the size from which Make collects garbage first.
const Threshold = 64 << 20

// Make returns make([]byte, n, c) (c < n means c = n); from Threshold
// bytes on, after a garbage collection, so that huge buffers that are no
// longer used are freed before this one is allocated.
func Make(n, c int) []byte {
	if c < n {
		c = n
	}
	if c >= Threshold {
		debug.FreeOSMemory()
	}
	return make([]byte, n, c)
}
