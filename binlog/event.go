// Package binlog reads binlog events from their sources: binlog files on
// disk and (later) a live server. It frames events, verifies checksums,
// follows ROTATE events across files and flattens MySQL's compressed
// TRANSACTION_PAYLOAD_EVENTs, so that downstream code sees one plain
// sequence of events, each with its position.
package binlog

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/change"
)

// HeaderSize is the size of the v4 event header.
const HeaderSize = replication.EventHeaderSize

// Event is one binlog event.
//
// Raw and Body point into a buffer owned by the Source: they are valid
// until the next call to Next, and so is the Event itself (a FileSource
// reuses it). Copy what you keep.
type Event struct {
	// Pos is where the event starts. Events flattened out of a
	// TRANSACTION_PAYLOAD_EVENT carry the payload event's position.
	Pos change.Position
	// NextPos is where the next event starts (the resume point after
	// this event), in the same file.
	NextPos change.Position

	Header replication.EventHeader

	// Raw is the whole event: header, body and checksum (if any).
	Raw []byte
	// Body is the event after the 19-byte header, without the checksum.
	Body []byte

	// InPayload is set for events that came out of a
	// TRANSACTION_PAYLOAD_EVENT.
	InPayload bool
}

// Type is the event's type code.
func (e *Event) Type() replication.EventType { return e.Header.EventType }

// Source yields binlog events in order.
//
// Next returns io.EOF at a clean end. Any other error is final: later calls
// return it again.
type Source interface {
	Next(ctx context.Context) (*Event, error)
	Close() error
}

// parseHeader decodes the 19-byte v4 header.
//
//	# bytes  field
//	4        timestamp (seconds since the epoch)
//	1        event type
//	4        server id
//	4        event size (header + body + checksum)
//	4        log pos: the position of the next event
//	2        flags
func parseHeader(b []byte) replication.EventHeader {
	return replication.EventHeader{
		Timestamp: binary.LittleEndian.Uint32(b[0:]),
		EventType: replication.EventType(b[4]),
		ServerID:  binary.LittleEndian.Uint32(b[5:]),
		EventSize: binary.LittleEndian.Uint32(b[9:]),
		LogPos:    binary.LittleEndian.Uint32(b[13:]),
		Flags:     binary.LittleEndian.Uint16(b[17:]),
	}
}

// Error is an error at a place in a binlog, with a hint for the user.
type Error struct {
	Pos change.Position
	// Path, when set, is the path of the file as given, which messages
	// name instead of Pos.File (an error about the whole file).
	Path string
	Err  error
	Hint string
}

// Where is "FILE:OFFSET" for a message: the path given when the error is
// about the whole file, else the position.
func (e *Error) Where() string {
	if e.Path != "" {
		return fmt.Sprintf("%s:%d", e.Path, e.Pos.Offset)
	}
	return fmt.Sprintf("%s:%d", e.Pos.File, e.Pos.Offset)
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %v", e.Where(), e.Err)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }
