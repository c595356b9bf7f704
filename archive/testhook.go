package archive

import (
	"io"
	"os"
	"strconv"
	"syscall"
)

// diskFullAt makes tests' full disk deterministic: with
// BINLOGCDC_TEST_ARCHIVE_DISK_FULL=N, writing the open file past its N-th
// byte writes what fits and then fails with ENOSPC, as a full disk does
// (a torn event left at the end). Not for users: not in --help.
func diskFullAt() int64 {
	n, err := strconv.ParseInt(os.Getenv("BINLOGCDC_TEST_ARCHIVE_DISK_FULL"), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// fullDisk is an open file on a disk that fills at limit bytes.
type fullDisk struct {
	f     *os.File
	at    int64 // the file's offset (writes go on from here)
	limit int64
}

func (d *fullDisk) Write(p []byte) (int, error) {
	room := max(d.limit-d.at, 0)
	if int64(len(p)) <= room {
		n, err := d.f.Write(p)
		d.at += int64(n)
		return n, err
	}
	n, err := d.f.Write(p[:room])
	d.at += int64(n)
	if err == nil {
		err = &os.PathError{Op: "write", Path: d.f.Name(), Err: syscall.ENOSPC}
	}
	return n, err
}

// fileWriter is what the open file's buffer writes to.
func (o *openFile) fileWriter() io.Writer {
	if n := diskFullAt(); n > 0 {
		return &fullDisk{f: o.f, at: o.off, limit: n}
	}
	return o.f
}
