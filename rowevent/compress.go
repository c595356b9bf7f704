package rowevent

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/tablemap"
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

// decodeCompressedString reads a MariaDB COMPRESSED column's cell (see
// MariaDB's sql/field_comp.cc and Field_longstr::compress): the usual
// length prefix (for VARCHAR, 1 or 2 bytes by the field length, which
// counts the header byte; for BLOB, the pack length), then the stored
// bytes:
//
//	empty                  the empty string (no header)
//	0x00, bytes            stored raw (shorter than column_compression_threshold,
//	                       or compression did not make it smaller)
//	0x80|w<<3|n, len, data zlib: n (1..4) bytes of big-endian original length,
//	                       then a raw deflate stream (w=1, the default
//	                       column_compression_zlib_wrap=OFF) or a zlib one (w=0)
func decodeCompressedString(a *arena, data []byte, col *tablemap.Column) (change.Value, int, error) {
	prefix := col.Length
	limit := uint64(1)<<(8*uint(col.Length)) - 1 // BLOB: what the pack length can hold
	if col.Type == mysql.MYSQL_TYPE_VARCHAR {
		prefix, limit = stringPrefix(col.Length+1), uint64(col.Length)
	} else if col.Length < 1 || col.Length > 4 {
		return change.Value{}, 0, errBadMeta("BLOB pack length %d", col.Length)
	}
	stored, n, err := lenPrefixed(data, prefix)
	if err != nil {
		return change.Value{}, 0, err
	}
	raw, err := inflateField(a, stored, limit)
	if err != nil {
		return change.Value{}, 0, err
	}
	if col.IsBinary() {
		return change.TextValue(change.Bytes, raw), n, nil
	}
	if a.lazyUTF8 && charset.IsUTF8Compatible(col.Collation) {
		return change.UncheckedText(raw, col.Collation), n, nil // as decodeString
	}
	text, err := toUTF8(a, col.Collation, raw)
	if err != nil {
		return change.Value{}, 0, err
	}
	return change.TextValue(change.String, text), n, nil
}

// inflateField returns the value of a COMPRESSED column's stored bytes:
// a slice of stored, or the inflated bytes in the arena. limit is the
// most the column can hold.
func inflateField(a *arena, stored []byte, limit uint64) ([]byte, error) {
	if len(stored) == 0 {
		return stored, nil
	}
	h := stored[0]
	if h == 0 {
		return stored[1:], nil
	}
	n := int(h & 0x07)
	if h&0x80 == 0 || h&0x70 != 0 || n < 1 || n > 4 {
		return nil, errBadValue("COMPRESSED value header %#x is neither raw (0x00) nor zlib", h)
	}
	if len(stored) < 1+n {
		return nil, errTruncated(uint64(1+n), len(stored))
	}
	var size uint64
	for _, b := range stored[1 : 1+n] {
		size = size<<8 | uint64(b)
	}
	body := stored[1+n:]
	// deflate cannot inflate by more than about 1032:1.
	if size > limit || size > maxUncompressed || size > uint64(len(body))*1100+1100 {
		return nil, errBadValue("COMPRESSED value claims %d bytes from %d (the column holds at most %d)", size, len(body), limit)
	}
	var r io.ReadCloser
	if h&0x08 != 0 {
		r = flate.NewReader(bytes.NewReader(body))
	} else {
		zr, err := zlib.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, errBadValue("COMPRESSED value: %v", err)
		}
		r = zr
	}
	defer r.Close()
	s := a.start()
	a.buf = slices.Grow(a.buf, int(size))[:s+int(size)]
	if _, err := io.ReadFull(r, a.buf[s:]); err != nil {
		a.buf = a.buf[:s]
		return nil, errBadValue("COMPRESSED value of %d bytes: %v", size, err)
	}
	// The stream must end here (and its checksum, if any, match).
	var one [1]byte
	if k, err := r.Read(one[:]); k != 0 || err != io.EOF {
		a.buf = a.buf[:s]
		if err == nil || err == io.EOF {
			return nil, errBadValue("COMPRESSED value inflates to more than its %d bytes", size)
		}
		return nil, errBadValue("COMPRESSED value of %d bytes: %v", size, err)
	}
	return a.since(s), nil
}
