package snapshot

import "syscall"

// catchUpPause waits 200 µs in this thread (a nanosleep, not a Go timer:
// the goroutine does not park, so the runtime's other threads stay
// asleep), for the server to send more than one packet's worth.
func catchUpPause() {
	ts := syscall.NsecToTimespec(200_000)
	syscall.Nanosleep(&ts, nil)
}
