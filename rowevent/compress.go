package rowevent

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
)

// maxUncompressed bounds a MariaDB compressed event's declared size, so a
// corrupt header cannot make us allocate without bound.
const maxUncompressed = 1 << 30

// decompressMariaDB inflates the rows of a MariaDB *_COMPRESSED_EVENT_V1
// (log_bin_compress=ON), appending to dst.
//
//	# bytes   field
//	1         0x80 | algorithm<<4 | n (algorithm 0 = zlib; n = 1..4)
//	n         uncompressed length, big-endian
//	rest      zlib stream
func decompressMariaDB(dst, data []byte) ([]byte, error) {
	if len(data) < 1 {
		return nil, errors.New("rowevent: compressed rows cut short")
	}
	h := data[0]
	n := int(h & 0x07)
	if h&0x80 == 0 || (h>>4)&0x07 != 0 || n < 1 || n > 4 || len(data) < 1+n {
		return nil, fmt.Errorf("rowevent: compressed rows header %#x is not zlib with a 1-4 byte length", h)
	}
	var size uint64
	for _, b := range data[1 : 1+n] {
		size = size<<8 | uint64(b)
	}
	// zlib cannot inflate by more than about 1032:1.
	if size > maxUncompressed || size > uint64(len(data))*1100 {
		return nil, fmt.Errorf("rowevent: compressed rows claim %d bytes", size)
	}
	zr, err := zlib.NewReader(bytes.NewReader(data[1+n:]))
	if err != nil {
		return nil, fmt.Errorf("rowevent: compressed rows: %w", err)
	}
	defer zr.Close()
	if cap(dst) < int(size) {
		dst = make([]byte, 0, size)
	}
	dst = dst[:size]
	if _, err := io.ReadFull(zr, dst); err != nil {
		return nil, fmt.Errorf("rowevent: compressed rows: %w", err)
	}
	return dst, nil
}
