package binlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/go-mysql-org/go-mysql/replication"
)

// ErrChecksum is returned (wrapped in *Error) when an event's CRC32 does not match.
var ErrChecksum = errors.New("binlog: checksum mismatch")

// checksumLen is the size of the CRC32 trailer.
const checksumLen = replication.BinlogChecksumLength

// verifyCRC32 checks the CRC32 trailer of a whole event. MySQL and MariaDB
// compute the FORMAT_DESCRIPTION_EVENT's checksum with
// LOG_EVENT_BINLOG_IN_USE_F cleared and set that flag afterwards, while
// the file is open; so the flag is cleared before checking.
func verifyCRC32(raw []byte) error {
	if len(raw) < HeaderSize+checksumLen {
		return fmt.Errorf("%w: event of %d bytes is too short to carry one", ErrChecksum, len(raw))
	}
	body := raw[:len(raw)-checksumLen]
	want := binary.LittleEndian.Uint32(raw[len(raw)-checksumLen:])
	var got uint32
	flags := binary.LittleEndian.Uint16(raw[17:])
	if replication.EventType(raw[4]) == replication.FORMAT_DESCRIPTION_EVENT && flags&replication.LOG_EVENT_BINLOG_IN_USE_F != 0 {
		var hdr [HeaderSize]byte
		copy(hdr[:], raw)
		binary.LittleEndian.PutUint16(hdr[17:], flags&^replication.LOG_EVENT_BINLOG_IN_USE_F)
		got = crcIEEE(crcIEEE(0, hdr[:]), body[HeaderSize:])
	} else {
		got = crcIEEE(0, body)
	}
	if got != want {
		return fmt.Errorf("%w: stored %08x, computed %08x", ErrChecksum, want, got)
	}
	return nil
}

// crcIEEE is crc32.Update(crc, crc32.IEEETable, p), faster on the short
// ends of events. hash/crc32 folds whole 16-byte blocks with CLMUL from 64
// bytes on, and does the rest (up to 15 bytes, and all of an event under
// 64 bytes such as GTID and XID) 8 bytes at a time down to 8 and then a
// byte at a time: five of every event of a row in a one-row transaction.
// Here the blocks go to hash/crc32 alone, and the rest goes 8, then 4
// bytes at a time (slicing-by-8 tables), so at most 3 bytes go one by one.
func crcIEEE(crc uint32, p []byte) uint32 {
	if n := len(p) &^ 15; n >= 64 {
		crc = crc32.Update(crc, crc32.IEEETable, p[:n])
		p = p[n:]
	}
	t := &crcTables
	crc = ^crc
	for len(p) >= 8 {
		crc ^= binary.LittleEndian.Uint32(p)
		crc = t[0][p[7]] ^ t[1][p[6]] ^ t[2][p[5]] ^ t[3][p[4]] ^
			t[4][crc>>24] ^ t[5][crc>>16&0xff] ^ t[6][crc>>8&0xff] ^ t[7][crc&0xff]
		p = p[8:]
	}
	if len(p) >= 4 {
		crc ^= binary.LittleEndian.Uint32(p)
		crc = t[0][crc>>24] ^ t[1][crc>>16&0xff] ^ t[2][crc>>8&0xff] ^ t[3][crc&0xff]
		p = p[4:]
	}
	for _, v := range p {
		crc = t[0][byte(crc)^v] ^ crc>>8
	}
	return ^crc
}

// crcTables are the slicing-by-8 tables of the IEEE polynomial: t[0] is
// crc32.IEEETable, and t[k][b] the CRC of byte b followed by k zero bytes.
var crcTables = func() (t [8][256]uint32) {
	t[0] = *crc32.IEEETable
	for b := range 256 {
		c := t[0][b]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][b] = c
		}
	}
	return t
}()
