package archive

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
)

// header is the part of an event's 19-byte v4 header the archiver uses.
type header struct {
	when   uint32
	typ    replication.EventType
	server uint32
	size   uint32
	logPos uint32
	flags  uint16
}

// flagsOffset is where the flags sit in an event header; the in-use flag
// of a file's FORMAT_DESCRIPTION_EVENT is at 4 (the magic bytes) plus it.
const flagsOffset = 17

func parseHeader(raw []byte) header {
	return header{
		when:   binary.LittleEndian.Uint32(raw[0:]),
		typ:    replication.EventType(raw[4]),
		server: binary.LittleEndian.Uint32(raw[5:]),
		size:   binary.LittleEndian.Uint32(raw[9:]),
		logPos: binary.LittleEndian.Uint32(raw[13:]),
		flags:  binary.LittleEndian.Uint16(raw[flagsOffset:]),
	}
}

func (h header) artificial() bool { return h.flags&replication.LOG_EVENT_ARTIFICIAL_F != 0 }

func (h header) heartbeat() bool {
	return h.typ == replication.HEARTBEAT_EVENT || h.typ == replication.HEARTBEAT_LOG_EVENT_V2
}

// rotateTarget decodes a ROTATE event's body (after the header, without
// a checksum when crc is false): the position and the file it names.
func rotateTarget(raw []byte) (pos uint64, name string, ok bool) {
	if len(raw) < binlog.HeaderSize+8+1 {
		return 0, "", false
	}
	body := raw[binlog.HeaderSize:]
	pos = binary.LittleEndian.Uint64(body)
	name = string(body[8:])
	// A checksum may follow the name (servers add one to the artificial
	// ROTATE when binlog_checksum is on): a valid CRC32 trailer says so.
	if len(body) > 8+4 && binlog.VerifyChecksum(raw) == nil {
		name = string(body[8 : len(body)-4])
	}
	return pos, name, validName(name)
}

// validName reports whether name is a file name a server writes (no
// path, nothing that could escape DIR).
func validName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > 255 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// gtidOf returns the GTID an event starts, or "": MariaDB's GTID_EVENT
// (domain-server-seq), MySQL's GTID_LOG_EVENT (uuid:gno) and
// GTID_TAGGED_LOG_EVENT (uuid:tag:gno).
func gtidOf(h header, raw []byte) string {
	body := raw[binlog.HeaderSize:]
	switch h.typ {
	case replication.MARIADB_GTID_EVENT:
		if len(body) < 12 {
			return ""
		}
		seq := binary.LittleEndian.Uint64(body)
		domain := binary.LittleEndian.Uint32(body[8:])
		return fmt.Sprintf("%d-%d-%d", domain, h.server, seq)
	case replication.GTID_EVENT:
		if len(body) < 1+16+8 {
			return ""
		}
		u := hex.EncodeToString(body[1:17])
		gno := binary.LittleEndian.Uint64(body[17:])
		return fmt.Sprintf("%s-%s-%s-%s-%s:%d", u[:8], u[8:12], u[12:16], u[16:20], u[20:], gno)
	case replication.GTID_TAGGED_LOG_EVENT:
		return taggedGTID(body)
	}
	return ""
}

// taggedGTID decodes MySQL 9.x's GTID_TAGGED_LOG_EVENT body, in MySQL's
// serialization format (its own lengths: a CRC32 after it is not read),
// with go-mysql's decoder, which panics on some damaged bodies (found by
// FuzzTaggedGTID): "" then, as for any event that does not decode.
func taggedGTID(body []byte) (g string) {
	defer func() {
		if recover() != nil {
			g = ""
		}
	}()
	e := &replication.GtidTaggedLogEvent{}
	if err := e.Decode(body); err != nil || len(e.SID) != 16 || e.Tag.String() == "" {
		return ""
	}
	u := hex.EncodeToString(e.SID)
	return fmt.Sprintf("%s-%s-%s-%s-%s:%s:%d", u[:8], u[8:12], u[12:16], u[16:20], u[20:], e.Tag, e.GNO)
}

// eventTime is an event's timestamp as the manifest writes it.
func eventTime(sec uint32) string {
	return time.Unix(int64(sec), 0).UTC().Format(time.RFC3339)
}
