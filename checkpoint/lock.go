package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// errLocked: another process holds the lock.
var errLocked = errors.New("locked by another process")

// Lock makes sure that only one process at a time uses the checkpoint at
// path: it takes an exclusive lock on path+".lock" (created if needed) and
// writes its PID there. The lock is held until unlock is called or the
// process ends, however it ends (the kernel lets go of it). A second
// process gets an error naming the holder's PID at once.
func Lock(path string) (unlock func(), err error) {
	return LockPath(path+".lock", "the checkpoint's lock file", func(holder, lp string) error {
		return fmt.Errorf("checkpoint %s is in use by another binlogcdc (%s holds %s): stop that one first, or give this stream its own --checkpoint", path, holder, lp)
	})
}

// LockPath takes the exclusive lock file lp (created if needed) and
// writes this process's PID there, as Lock does; what names it in write
// errors, and busy makes the error when another process holds it (holder
// is "PID n").
func LockPath(lp, what string, busy func(holder, lp string) error) (unlock func(), err error) {
	f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, &WriteError{What: what + " " + lp, Err: err}
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			holder := "a process whose PID it did not write yet"
			if b, rerr := os.ReadFile(lp); rerr == nil {
				if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil {
					holder = "PID " + strconv.Itoa(pid)
				}
			}
			return nil, busy(holder, lp)
		}
		return nil, fmt.Errorf("%s %s: %w", what, lp, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, &WriteError{What: what + " " + lp, Err: err}
	}
	return func() { f.Close() }, nil
}
