package binlog

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

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
// It does not reconnect by itself: go-mysql's own retry resumes in the
// middle of a transaction, without its TABLE_MAP events. A broken
// connection ends Next with an error; the caller reconnects from its last
// transaction boundary (see pipeline.Stream).
type LiveSource struct {
	cfg      LiveConfig
	syncer   *replication.BinlogSyncer
	streamer *replication.BinlogStreamer
	f        framer
	err      error
	// queue holds events go-mysql had already received, taken from its
	// channel all at once (see get); next is the first not returned yet.
	queue []*replication.BinlogEvent
	next  int
	// byGTID: the dump started at a GTID set. The server then announces
	// the file with an artificial ROTATE to its offset 4 and skips the
	// transactions before the set without sending them: that offset is
	// not where the stream stands, so the ROTATE carries no position.
	byGTID bool
}

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
	sc := replication.BinlogSyncerConfig{
		ServerID:         cfg.ServerID,
		Flavor:           cfg.Flavor,
		Host:             cfg.Host,
		Port:             cfg.Port,
		User:             cfg.User,
		Password:         string(cfg.Password),
		TLSConfig:        cfg.TLS,
		RawModeEnabled:   true, // we decode events ourselves
		HeartbeatPeriod:  cfg.Heartbeat,
		DisableRetrySync: true,
		Logger:           slog.New(slog.DiscardHandler),
		EventCacheCount:  1024,
		// go-mysql does not pass ctx on to the handshake or the dump
		// request: without this, a server that accepts but never answers
		// holds DialLive for ReadTimeout whatever ctx says. The
		// connections enforce ReadTimeout, at a fraction of go-mysql's
		// cost (deadline.go).
		Dialer: readTimeoutDialer(ctxDialer(ctx), cfg.ReadTimeout),
	}
	if cfg.AnnotateRows && cfg.Flavor == "mariadb" {
		sc.DumpCommandFlag |= replication.BINLOG_SEND_ANNOTATE_ROWS_EVENT
	}
	syncer := replication.NewBinlogSyncer(sc)
	var streamer *replication.BinlogStreamer
	var err error
	if start.File == "" && gtidSet != "" {
		var set mysql.GTIDSet
		if set, err = mysql.ParseGTIDSet(cfg.Flavor, gtidSet); err != nil {
			syncer.Close()
			return nil, fmt.Errorf("binlog: GTID set %q: %w", gtidSet, err)
		}
		streamer, err = syncer.StartSyncGTID(set)
	} else {
		streamer, err = syncer.StartSync(mysql.Position{Name: start.File, Pos: uint32(start.Offset)})
	}
	if err != nil {
		syncer.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, classifyDial(ctx, err, cfg)
	}
	return &LiveSource{cfg: cfg, syncer: syncer, streamer: streamer, byGTID: start.File == "" && gtidSet != ""}, nil
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
		be, err := s.get(ctx)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			s.err = classify(err, s.cfg)
			return nil, s.err
		}
		ev, err := s.f.frame(be.RawData)
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

// get returns the next event go-mysql received: from the queue, refilled
// with every event waiting in go-mysql's channel, else waiting for one.
func (s *LiveSource) get(ctx context.Context) (*replication.BinlogEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.next == len(s.queue) {
		s.queue, s.next = s.streamer.DumpEvents(), 0
	}
	if s.next < len(s.queue) {
		be := s.queue[s.next]
		s.queue[s.next] = nil
		s.next++
		return be, nil
	}
	return s.streamer.GetEvent(ctx)
}

// Buffered reports whether Next has an event at hand: false when it would
// wait for the server (the moment to flush what was written).
func (s *LiveSource) Buffered() bool {
	if s.err != nil || s.f.payload != nil {
		return true
	}
	if s.next == len(s.queue) {
		s.queue, s.next = s.streamer.DumpEvents(), 0
	}
	return s.next < len(s.queue)
}

// Close ends the replication connection.
func (s *LiveSource) Close() error {
	s.syncer.Close()
	if s.err == nil {
		s.err = errors.New("binlog: source closed")
	}
	return nil
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
