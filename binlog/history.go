package binlog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// History answers questions about a server's binlogs and GTIDs on one
// client connection: what a resume point is checked against
// (checkpoint.Resume).
type History struct {
	cfg  LiveConfig
	conn *client.Conn
}

// OpenHistory connects with cfg's credentials; cfg.Flavor must be set.
func OpenHistory(ctx context.Context, cfg LiveConfig) (*History, error) {
	c, err := Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &History{cfg: cfg, conn: c}, nil
}

// Close ends the connection; closing again does nothing.
func (h *History) Close() error {
	if h.conn == nil {
		return nil
	}
	err := h.conn.Close()
	h.conn = nil
	return err
}

// Conn is the connection, for other questions to the same server (nil
// once closed).
func (h *History) Conn() *client.Conn { return h.conn }

// Flavor is "mysql" or "mariadb".
func (h *History) Flavor() string { return h.cfg.Flavor }

// Binlogs lists the server's binlog files, oldest first (SHOW BINARY LOGS).
func (h *History) Binlogs(context.Context) ([]string, error) {
	r, err := h.conn.Execute("SHOW BINARY LOGS")
	if err != nil {
		return nil, classify(err, h.cfg)
	}
	names := make([]string, 0, r.RowNumber())
	for i := 0; i < r.RowNumber(); i++ {
		n, _ := r.GetString(i, 0)
		names = append(names, strings.Clone(n))
	}
	return names, nil
}

// GTIDPosAt returns MariaDB's BINLOG_GTID_POS(file, pos): the GTID
// position after the transactions before file:pos ("" when none came
// before). ok is false when the server cannot tell: no such file, a
// position that is not an event boundary inside it, or MySQL.
func (h *History) GTIDPosAt(_ context.Context, file string, pos uint64) (state string, ok bool, err error) {
	if h.cfg.Flavor != "mariadb" {
		return "", false, nil
	}
	return h.nullableString("SELECT BINLOG_GTID_POS(?, ?)", file, pos)
}

// GTIDState returns the GTIDs the server logged: MariaDB's
// @@gtid_binlog_state (the last of each domain and server id), MySQL's
// @@gtid_executed.
func (h *History) GTIDState(context.Context) (string, error) {
	q := "SELECT @@GLOBAL.gtid_binlog_state"
	if h.cfg.Flavor != "mariadb" {
		q = "SELECT @@GLOBAL.gtid_executed"
	}
	s, _, err := h.nullableString(q)
	return s, err
}

// ServerUUID returns MySQL's @@server_uuid ("" on MariaDB, which has none).
func (h *History) ServerUUID(context.Context) (string, error) {
	if h.cfg.Flavor == "mariadb" {
		return "", nil
	}
	s, _, err := h.nullableString("SELECT @@server_uuid")
	return s, err
}

// ServerID returns the server's @@server_id.
func (h *History) ServerID(context.Context) (uint32, error) {
	s, _, err := h.nullableString("SELECT @@server_id")
	if err != nil {
		return 0, err
	}
	id, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("@@server_id %q: %w", s, err)
	}
	return uint32(id), nil
}

// GTIDSubset reports whether the MySQL GTID set sub is contained in set
// (GTID_SUBSET).
func (h *History) GTIDSubset(_ context.Context, sub, set string) (bool, error) {
	r, err := h.conn.Execute("SELECT GTID_SUBSET(?, ?)", sub, set)
	if err != nil {
		return false, classify(err, h.cfg)
	}
	n, _ := r.GetInt(0, 0)
	return n == 1, nil
}

// nullableString runs a query of one value; ok is false for NULL.
func (h *History) nullableString(q string, args ...any) (string, bool, error) {
	r, err := h.conn.Execute(q, args...)
	if err != nil {
		return "", false, classify(err, h.cfg)
	}
	if r.RowNumber() != 1 {
		return "", false, nil
	}
	if null, _ := r.IsNull(0, 0); null {
		return "", false, nil
	}
	s, _ := r.GetString(0, 0)
	return strings.Clone(s), true, nil
}

// XidAt returns the XID of the XID event that ends at file:end (SHOW
// BINLOG EVENTS; an XID event is 27 bytes, 31 with a CRC32). ok is false
// when none does.
func (h *History) XidAt(_ context.Context, file string, end uint64) (xid uint64, ok bool, err error) {
	for _, c := range file {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return 0, false, nil // no name a server writes
		}
	}
	for _, size := range []uint64{31, 27} {
		if end < 4+size {
			continue
		}
		r, err := h.conn.Execute(fmt.Sprintf("SHOW BINLOG EVENTS IN '%s' FROM %d LIMIT 1", file, end-size))
		if err != nil {
			var me *mysql.MyError
			if errors.As(err, &me) {
				continue // not an event start
			}
			return 0, false, classify(err, h.cfg)
		}
		if r.RowNumber() != 1 {
			continue
		}
		// Log_name, Pos, Event_type, Server_id, End_log_pos, Info
		typ, _ := r.GetString(0, 2)
		endPos, _ := r.GetUint(0, 4)
		info, _ := r.GetString(0, 5)
		if typ != "Xid" || endPos != end {
			continue
		}
		_, after, found := strings.Cut(info, "xid=")
		n, perr := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(after), "*/")), 10, 64)
		if !found || perr != nil {
			continue
		}
		return n, true, nil
	}
	return 0, false, nil
}
