package jsonl

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// sendSpill writes the first n bytes of the spill file to dst with
// sendfile(2): the kernel moves them from the page cache to the output
// (a file, a pipe, /dev/null) with no read into this process and no
// copy through it. handled is false when the kernel refuses dst before
// a byte went (an O_APPEND file, an old kernel): the caller copies then.
func sendSpill(dst, spill *os.File, n int64) (handled bool, err error) {
	dc, err := dst.SyscallConn()
	if err != nil {
		return false, nil
	}
	sc, err := spill.SyscallConn()
	if err != nil {
		return false, nil
	}
	var off int64
	var sendErr error
	rerr := sc.Read(func(sfd uintptr) bool {
		werr := dc.Write(func(dfd uintptr) bool {
			for off < n {
				m, err := syscall.Sendfile(int(dfd), int(sfd), &off, int(min(n-off, 1<<30)))
				switch {
				case err == syscall.EAGAIN:
					return false // a non-blocking pipe that is full: wait
				case err == syscall.EINTR:
					continue
				case err != nil:
					sendErr = err
					return true
				case m == 0:
					sendErr = io.ErrUnexpectedEOF
					return true
				}
			}
			return true
		})
		if werr != nil && sendErr == nil {
			sendErr = werr
		}
		return true
	})
	if rerr != nil && sendErr == nil {
		sendErr = rerr
	}
	if sendErr != nil && off == 0 && (errors.Is(sendErr, syscall.EINVAL) || errors.Is(sendErr, syscall.ENOSYS) || errors.Is(sendErr, syscall.EOPNOTSUPP)) {
		return false, nil
	}
	return true, sendErr
}
