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
		got = crc32.Update(crc32.ChecksumIEEE(hdr[:]), crc32.IEEETable, body[HeaderSize:])
	} else {
		got = crc32.ChecksumIEEE(body)
	}
	if got != want {
		return fmt.Errorf("%w: stored %08x, computed %08x", ErrChecksum, want, got)
	}
	return nil
}
