package testserver

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"time"
)

// processGone reports whether process pid no longer runs. A zombie ('Z') or
// dead ('X') process counts as gone: it holds no files, locks or sockets any
// more, and the reaper (PID 1 on this kind of machine is slow at it) may take
// a long time to remove it. kill(pid, 0) would succeed on a zombie, so it is
// not used.
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		// A missing entry means gone, and so does ESRCH: the entry was
		// opened as the process was being reaped (our cmd.Wait), and the
		// read found no process (TestKillRestart failed so once in CI).
		// Any other error (no /proc) cannot tell, so report "running"
		// and let the caller's deadline decide.
		return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
	}
	return procStatGone(b)
}

// procStatGone parses the contents of /proc/PID/stat: "pid (comm) S ...".
// comm may itself contain spaces and parentheses, so the state is the first
// field after the last ')'.
func procStatGone(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) == 0 {
		return false
	}
	switch f[0][0] {
	case 'Z', 'X', 'x':
		return true
	}
	return false
}

// waitGone waits until done is closed (our cmd.Wait returned) or
// processGone(pid), whichever comes first, for at most timeout.
func waitGone(pid int, done <-chan struct{}, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-done:
			return true
		default:
		}
		if processGone(pid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-done:
			return true
		case <-time.After(10 * time.Millisecond):
		}
	}
}
