package binlog

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/change"
)

// Secret is a password. It never prints itself.
type Secret string

func (Secret) String() string                 { return "****" }
func (Secret) GoString() string               { return "****" }
func (Secret) LogValue() slog.Value           { return slog.StringValue("****") }
func (s Secret) MarshalText() ([]byte, error) { return []byte("****"), nil }

// LiveConfig says how to connect to a server as a replica.
type LiveConfig struct {
	Host     string
	Port     uint16
	User     string
	Password Secret
	TLS      *tls.Config
	// ServerID is our replica id; it must differ from every other
	// replica's and the server's own.
	ServerID uint32
	// Flavor is "mysql" or "mariadb".
	Flavor string
	// Heartbeat asks the server for a heartbeat this often while idle;
	// ReadTimeout ends a connection that has sent nothing for that long
	// (a network stall). Zero: 10 s and 3× Heartbeat.
	Heartbeat, ReadTimeout time.Duration
	// AnnotateRows asks MariaDB for its ANNOTATE_ROWS events (the
	// statement of each rows event, binlog_annotate_row_events), which it
	// leaves out of what it sends a replica otherwise: with them the
	// stream holds every event of the file.
	AnnotateRows bool
}

// Validate rejects unusable settings.
func (c *LiveConfig) Validate() error {
	switch {
	case c.Host == "":
		return errors.New("binlog: no server host")
	case c.ServerID == 0:
		return errors.New("binlog: replica server id 0 is not allowed (the server refuses it)")
	case c.Flavor != "mysql" && c.Flavor != "mariadb":
		return fmt.Errorf("binlog: flavor %q is not mysql or mariadb", c.Flavor)
	}
	return nil
}

// LiveSource streams events from a server over the replication protocol.
//
// go-mysql logs in (handshake, authentication, TLS); the dump itself is
// ours (dump.go): the packets are read in the caller's goroutine through
// one buffer, and each event goes to the framer as it sits there, without
// a copy, a parse into go-mysql's event types or a hand-off between
// goroutines (packet.go).
//
// It does not reconnect by itself: a broken connection ends Next with an
// error; the caller reconnects from its last transaction boundary (see
// pipeline.Follower).
type LiveSource struct {
	cfg  LiveConfig
	conn *client.Conn
	d    *dumpReader
	f    framer
	err  error
	// byGTID: the dump started at a GTID set. The server then announces
	// the file with an artificial ROTATE to its offset 4 and skips the
	// transactions before the set without sending them: that offset is
	// not where the stream stands, so the ROTATE carries no position.
	byGTID bool
	// dialCtx closes the connection when it ends (ctxDialer), which ends
	// a blocked read. A Next with another context arms the same for it:
	// nextCtx, stopNext.
	dialCtx  context.Context
	nextCtx  context.Context
	stopNext func() bool
	calls    uint32
}

// liveBufferSize is the read buffer of a dump: events up to this size
// are framed where they were read.
const liveBufferSize = 256 << 10

// DialLive connects and starts streaming at start (a transaction
// boundary), or, when start.File is empty, after the GTID set gtidSet.
func DialLive(ctx context.Context, cfg LiveConfig, start change.Position, gtidSet string) (*LiveSource, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = 10 * time.Second
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 3 * cfg.Heartbeat
	}
	var set mysql.GTIDSet
	byGTID := start.File == "" && gtidSet != ""
	if byGTID {
		var err error
		if set, err = mysql.ParseGTIDSet(cfg.Flavor, gtidSet); err != nil {
			return nil, fmt.Errorf("binlog: GTID set %q: %w", gtidSet, err)
		}
	}
	conn, err := dialReplica(ctx, cfg) // dump.go
	if err == nil {
		if err = startDump(conn, cfg, start, set); err != nil {
			conn.Close()
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, classifyDial(ctx, err, cfg)
	}
	// The server answers the dump command with packets 1, 2, ...; it has
	// sent nothing else since its last answer, so go-mysql's reader holds
	// nothing: the dump is read from the connection itself.
	return &LiveSource{cfg: cfg, conn: conn, d: newDumpReader(conn.Conn.Conn, liveBufferSize, 1), byGTID: byGTID, dialCtx: ctx}, nil
}

// Next returns the next event, waiting for the server to write one.
func (s *LiveSource) Next(ctx context.Context) (*Event, error) {
	if s.err != nil {
		return nil, s.err
	}
	for {
		if ev, err := s.f.pending(); ev != nil || err != nil {
			if err != nil {
				s.err = err
			}
			return ev, err
		}
		if err := s.watch(ctx); err != nil {
			s.err = err
			return nil, err
		}
		raw, err := s.d.event()
		if err != nil {
			s.err = s.readError(ctx, err)
			return nil, s.err
		}
		ev, err := s.f.frame(raw)
		if err != nil {
			s.err = err
			return nil, err
		}
		if ev != nil {
			if s.byGTID && ev.Header.EventType == replication.ROTATE_EVENT && ev.Header.Flags&replication.LOG_EVENT_ARTIFICIAL_F != 0 {
				s.byGTID = false
				ev.NextPos = change.Position{}
			}
			return ev, nil
		}
	}
}

// watch makes sure that ctx ending ends a read that waits for the server.
func (s *LiveSource) watch(ctx context.Context) error {
	if ctx == s.dialCtx || ctx == s.nextCtx {
		// Armed already; a stream catching up reads from the buffer
		// without waiting, so look at ctx now and then too.
		if s.calls++; s.calls%256 == 0 {
			return ctx.Err()
		}
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.stopNext != nil {
		s.stopNext()
	}
	s.nextCtx = ctx
	nc := s.conn.Conn.Conn
	s.stopNext = context.AfterFunc(ctx, func() { nc.SetReadDeadline(time.Now()) })
	return nil
}

// readError turns an error of the dump into Next's.
func (s *LiveSource) readError(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if cerr := s.dialCtx.Err(); cerr != nil {
		return cerr
	}
	at := change.Position{File: s.f.file, Offset: s.f.next}
	var pe *protocolError
	switch {
	case errors.As(err, &pe):
		return &Error{Pos: at, Err: err, Hint: "the replication stream is corrupt here: a proxy or the network garbled it, or the server is broken"}
	case err == io.EOF:
		return fmt.Errorf("binlog: the server closed the connection: %w", io.ErrUnexpectedEOF)
	case err == io.ErrUnexpectedEOF:
		return fmt.Errorf("binlog: the connection closed inside the event at %s:%d: %w", at.File, at.Offset, err)
	}
	return classify(err, s.cfg)
}

// Buffered reports whether Next has an event at hand: false when it would
// wait for the server (the moment to flush what was written).
func (s *LiveSource) Buffered() bool {
	return s.err != nil || s.f.payload != nil || s.d.buffered()
}

// Close ends the replication connection. Unless the connection broke, it
// also ends the server's dump thread (KILL over a new connection, as
// go-mysql did): otherwise the thread stays until it next writes to the
// closed socket, up to a heartbeat period later.
func (s *LiveSource) Close() error {
	if s.stopNext != nil {
		s.stopNext()
	}
	if s.conn == nil {
		return nil
	}
	if !brokenConn(s.err) {
		killThread(s.cfg, s.conn.GetConnectionID())
	}
	s.conn.Close()
	s.conn = nil
	if s.err == nil {
		s.err = errors.New("binlog: source closed")
	}
	return nil
}

// brokenConn reports whether err says the connection itself failed (so
// the server's end of it is gone or going).
func brokenConn(err error) bool {
	var ne net.Error
	return err != nil && (errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE))
}

// killThread ends connection id on the server, trying for a few seconds
// at most: a server that cannot be reached ends it by itself.
func killThread(cfg LiveConfig, id uint32) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := Connect(ctx, cfg)
	if err != nil {
		return
	}
	defer c.Close()
	c.Execute(fmt.Sprintf("KILL %d", id))
}

// classifyDial is classify for an error from starting the dump. MariaDB
// refuses COM_REGISTER_SLAVE from a user without REPLICATION SLAVE with
// ER_ACCESS_DENIED_ERROR ("Access denied for user ... (using password:
// YES)": check_access on any database), the error of a wrong password. If
// the same credentials can log in, the privilege is what is missing.
func classifyDial(ctx context.Context, err error, cfg LiveConfig) error {
	var me *mysql.MyError
	if errors.As(err, &me) && me.Code == mysql.ER_ACCESS_DENIED_ERROR {
		if c, cerr := Connect(ctx, cfg); cerr == nil {
			defer c.Close()
			return missingPrivilege(me, account(c, cfg))
		}
	}
	return classify(err, cfg)
}
