package jsonl

import (
	"errors"
	"syscall"
)

// isNotSupported reports an fsync on something that cannot be synced
// (a pipe or a terminal), which is not an error for us.
func isNotSupported(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EBADF)
}
