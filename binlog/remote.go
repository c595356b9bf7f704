package binlog

import (
	"context"
	"io"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/change"
)

// RemoteSource reads a server's binlogs over the replication protocol up
// to an end fixed beforehand (like mysqlbinlog --read-from-remote-server
// without --stop-never), then returns io.EOF. The end is a position where
// the server's binlog ended (SHOW MASTER STATUS): a transaction boundary.
//
// It yields the events a FileSource over the same files yields: the
// stream's artificial events (the ROTATE naming the file at the start of a
// dump or after a rotation, MariaDB's fake GTID_LIST) and heartbeats are
// dropped, and the FORMAT_DESCRIPTION_EVENT that the server resends when a
// dump starts inside a file carries its position in the file (4), as a
// FileSource's does.
//
// The end is reached when an event ends there, when an event starts at or
// past it (other clients kept writing), or when the server says it has
// sent everything up to it: a heartbeat, which an idle server sends every
// LiveConfig.Heartbeat, carries the dump's position. So a run never waits
// for events that are not coming.
type RemoteSource struct {
	live *LiveSource
	end  change.Position
	done bool
}

// DialRemote connects as a replica and reads from start (a transaction
// boundary; when start.File is empty, after the GTID set gtidSet) to end.
func DialRemote(ctx context.Context, cfg LiveConfig, start change.Position, gtidSet string, end change.Position) (*RemoteSource, error) {
	if cfg.Heartbeat == 0 {
		// A short period: the heartbeat is how an idle server says the
		// dump has caught up with the end (see RemoteSource).
		cfg.Heartbeat = time.Second
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 30 * time.Second
	}
	cfg.AnnotateRows = true // the file's events, all of them
	s := &RemoteSource{end: end}
	if start.File != "" && !before(start, end) {
		s.done = true // nothing between start and end; the start is not checked
		return s, nil
	}
	live, err := DialLive(ctx, cfg, start, gtidSet)
	if err != nil {
		return nil, err
	}
	s.live = live
	return s, nil
}

// End is where the source stops.
func (s *RemoteSource) End() change.Position { return s.end }

// Next returns the next event before the end, or io.EOF there.
func (s *RemoteSource) Next(ctx context.Context) (*Event, error) {
	for {
		if s.done {
			return nil, io.EOF
		}
		ev, err := s.live.Next(ctx)
		if err != nil {
			return nil, err
		}
		t := ev.Header.EventType
		switch {
		case t == replication.HEARTBEAT_EVENT || t == replication.HEARTBEAT_LOG_EVENT_V2:
			// log_pos: how far the dump has read in the current file.
			if ev.Header.LogPos > 0 && !before(change.Position{File: ev.Pos.File, Offset: uint64(ev.Header.LogPos)}, s.end) {
				s.done = true
			}
			continue
		case t == replication.ROTATE_EVENT && ev.Header.Flags&replication.LOG_EVENT_ARTIFICIAL_F != 0:
			if ev.NextPos.File != "" && ev.NextPos.Offset >= 4 && !before(ev.NextPos, s.end) {
				s.done = true
			}
			continue
		case t == replication.FORMAT_DESCRIPTION_EVENT:
			if ev.Pos.Offset != 4 {
				// Resent at the start of a dump inside the file.
				ev.Pos.Offset = 4
				ev.NextPos = change.Position{File: ev.Pos.File, Offset: 4 + uint64(ev.Header.EventSize)}
			}
			return ev, nil
		case ev.Header.Flags&replication.LOG_EVENT_ARTIFICIAL_F != 0:
			continue
		}
		if !before(ev.Pos, s.end) {
			s.done = true
			return nil, io.EOF
		}
		if !ev.InPayload && !before(ev.NextPos, s.end) {
			s.done = true // the last event: return it, then io.EOF
		}
		return ev, nil
	}
}

// Close ends the replication connection.
func (s *RemoteSource) Close() error {
	s.done = true
	if s.live != nil {
		return s.live.Close()
	}
	return nil
}

// before reports whether a comes before b. Binlog file names of one
// server sort by their numeric suffix, which has a fixed width.
func before(a, b change.Position) bool {
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Offset < b.Offset
}
