package binlog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
)

// ServerInfo is what the preflight learned about a server.
type ServerInfo struct {
	Version     string
	Flavor      string // "mysql" or "mariadb"
	ServerID    uint32
	RowImage    string
	RowMetadata string
}

// PreflightError is a server setting or privilege that stops streaming.
type PreflightError struct {
	Problem string
	Hint    string
	Err     error
}

func (e *PreflightError) Error() string {
	s := e.Problem
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}
func (e *PreflightError) Unwrap() error { return e.Err }

// Connect opens a plain client connection with cfg's credentials.
func Connect(ctx context.Context, cfg LiveConfig) (*client.Conn, error) {
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	var opts []client.Option
	if cfg.TLS != nil {
		opts = append(opts, func(c *client.Conn) error { c.SetTLSConfig(cfg.TLS); return nil })
	}
	// MariaDB does not know MySQL 8's default collation (id 255).
	opts = append(opts, func(c *client.Conn) error { return c.SetCollation("utf8mb4_general_ci") })
	// go-mysql uses ctx only to dial: the handshake and queries wait
	// forever for a server that accepted the connection but never answers
	// (a hung server, a proxy whose backend is gone), deaf to SIGTERM.
	// Closing the connection when ctx ends and a read timeout end both.
	// The read timeout is set once per read from the socket
	// (readTimeoutDialer), not by go-mysql's ReadTimeout, which reads the
	// clock and sets a deadline for every packet: a snapshot's rows spent
	// about 15% of its CPU there.
	opts = append(opts, func(c *client.Conn) error {
		c.WriteTimeout = queryTimeout
		return nil
	})
	conn, err := client.ConnectWithDialer(ctx, "", addr, cfg.User, string(cfg.Password), "", readTimeoutDialer(ctxDialer(ctx), queryTimeout), opts...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, classify(err, cfg)
	}
	return conn, nil
}

// queryTimeout bounds each read and write of a client connection.
const queryTimeout = 30 * time.Second

// ctxDialer dials connections that are closed when ctx ends.
func ctxDialer(ctx context.Context) client.Dialer {
	return func(dctx context.Context, network, addr string) (net.Conn, error) {
		d := net.Dialer{Timeout: 10 * time.Second}
		c, err := d.DialContext(dctx, network, addr)
		if err != nil {
			return nil, err
		}
		cc := &ctxConn{Conn: c}
		cc.stop = context.AfterFunc(ctx, func() { c.Close() })
		return cc, nil
	}
}

// ctxConn is a connection closed when a context ends; closing it first
// lets go of the context (a long stream reconnects many times).
type ctxConn struct {
	net.Conn
	stop func() bool
}

func (c *ctxConn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// classify turns server errors into ones that say what to do.
func classify(err error, cfg LiveConfig) error {
	var me *mysql.MyError
	if !errors.As(err, &me) {
		return err
	}
	switch me.Code {
	case mysql.ER_ACCESS_DENIED_ERROR, mysql.ER_DBACCESS_DENIED_ERROR:
		return &PreflightError{Problem: "the server refused the login", Err: err,
			Hint: "check the user in the DSN and the password (--password-file, MYSQL_PWD or the DSN)"}
	case mysql.ER_SPECIFIC_ACCESS_DENIED_ERROR:
		return missingPrivilege(err, account(nil, cfg))
	case 1236: // ER_MASTER_FATAL_ERROR_READING_BINLOG
		return readFailure(err, me) // readfail.go
	}
	return err
}

// missingPrivilege is the error for a user without a replication
// privilege; acct is the account to grant it to (see account).
func missingPrivilege(err error, acct string) *PreflightError {
	return &PreflightError{Problem: "the user lacks a replication privilege", Err: err,
		Hint: fmt.Sprintf("run on the server: GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO %s (MariaDB 10.5+: GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO %s)", acct, acct)}
}

// account returns the account the server matched the login to, as GRANT
// names it ('repl'@'10.0.%'): SELECT CURRENT_USER() on c. Without c, or
// when that fails, the user with a host to fill in.
func account(c *client.Conn, cfg LiveConfig) string {
	if c != nil {
		if r, err := c.Execute("SELECT CURRENT_USER()"); err == nil && r.RowNumber() == 1 {
			if cu, _ := r.GetString(0, 0); strings.Contains(cu, "@") {
				i := strings.LastIndexByte(cu, '@')
				return quoteAccountPart(cu[:i]) + "@" + quoteAccountPart(cu[i+1:])
			}
		}
	}
	return quoteAccountPart(cfg.User) + "@'<host>' (the host part of SELECT CURRENT_USER() for this login)"
}

func quoteAccountPart(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// Preflight checks that the server writes what binlogcdc can read.
func Preflight(ctx context.Context, cfg LiveConfig) (*ServerInfo, error) {
	return preflight(ctx, cfg, true)
}

// PreflightRaw checks what copying the server's binlog files as they are
// needs (binlogcdc archive): the binary log on and the privilege to list
// the binlogs; any binlog_format and binlog_row_metadata do.
func PreflightRaw(ctx context.Context, cfg LiveConfig) (*ServerInfo, error) {
	return preflight(ctx, cfg, false)
}

func preflight(ctx context.Context, cfg LiveConfig, rows bool) (*ServerInfo, error) {
	conn, err := Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	info := &ServerInfo{}
	r, err := conn.Execute("SELECT VERSION(), @@server_id, @@log_bin, @@binlog_format, @@binlog_row_image")
	if err != nil {
		return nil, classify(err, cfg)
	}
	info.Version, _ = r.GetString(0, 0)
	sid, _ := r.GetUint(0, 1)
	info.ServerID = uint32(sid)
	logBin, _ := r.GetInt(0, 2)
	format, _ := r.GetString(0, 3)
	info.RowImage, _ = r.GetString(0, 4)
	info.Flavor = "mysql"
	if strings.Contains(strings.ToLower(info.Version), "mariadb") {
		info.Flavor = "mariadb"
	}
	if logBin != 1 {
		return info, &PreflightError{Problem: "the server's binary log is off",
			Hint: "start the server with log_bin (and server_id); see the README's server settings"}
	}
	if rows && !strings.EqualFold(format, "ROW") {
		return info, &PreflightError{Problem: fmt.Sprintf("binlog_format is %s, not ROW", format), Hint: hintRowFormat}
	}
	if r, err := conn.Execute("SELECT @@binlog_row_metadata"); err == nil {
		info.RowMetadata, _ = r.GetString(0, 0)
	}
	if rows && !strings.EqualFold(info.RowMetadata, "FULL") {
		what := info.RowMetadata
		if what == "" {
			what = "not supported by this server version"
		}
		return info, &PreflightError{Problem: fmt.Sprintf("binlog_row_metadata is %s, not FULL (server %s)", what, info.Version),
			Hint: "run SET GLOBAL binlog_row_metadata = FULL and set it in the server's config (MariaDB's default is NO_LOG; it needs MySQL 8.0.1+ or MariaDB 10.5+). It only affects binlogs written afterwards"}
	}
	// REPLICATION CLIENT (MySQL) / BINLOG MONITOR (MariaDB) lets us list binlogs.
	if _, err := conn.Execute("SHOW BINARY LOGS"); err != nil {
		var me *mysql.MyError
		if errors.As(err, &me) && me.Code == mysql.ER_SPECIFIC_ACCESS_DENIED_ERROR {
			return info, missingPrivilege(err, account(conn, cfg))
		}
		return info, classify(err, cfg)
	}
	return info, nil
}

const hintRowFormat = "run SET GLOBAL binlog_format = 'ROW' and set it in the server's config; it applies to new sessions"

// CurrentPosition returns the end of the server's binlog (--from now).
func CurrentPosition(ctx context.Context, cfg LiveConfig) (change.Position, error) {
	conn, err := Connect(ctx, cfg)
	if err != nil {
		return change.Position{}, err
	}
	defer conn.Close()
	r, err := conn.Execute("SHOW BINARY LOG STATUS") // MySQL 8.2+
	if err != nil {
		r, err = conn.Execute("SHOW MASTER STATUS")
	}
	if err != nil {
		return change.Position{}, classify(err, cfg)
	}
	if r.RowNumber() == 0 {
		return change.Position{}, &PreflightError{Problem: "the server reports no binlog position", Hint: "is log_bin on?"}
	}
	file, _ := r.GetString(0, 0)
	pos, _ := r.GetUint(0, 1)
	return change.Position{File: file, Offset: pos}, nil
}

// EarliestPosition returns the start of the oldest binlog the server still
// has (--from earliest).
func EarliestPosition(ctx context.Context, cfg LiveConfig) (change.Position, error) {
	conn, err := Connect(ctx, cfg)
	if err != nil {
		return change.Position{}, err
	}
	defer conn.Close()
	r, err := conn.Execute("SHOW BINARY LOGS")
	if err != nil {
		return change.Position{}, classify(err, cfg)
	}
	if r.RowNumber() == 0 {
		return change.Position{}, &PreflightError{Problem: "the server lists no binlogs", Hint: "is log_bin on?"}
	}
	file, _ := r.GetString(0, 0)
	return change.Position{File: file, Offset: 4}, nil
}

// BinlogExists reports whether the server still has the named binlog.
func BinlogExists(ctx context.Context, cfg LiveConfig, file string) (bool, error) {
	conn, err := Connect(ctx, cfg)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	r, err := conn.Execute("SHOW BINARY LOGS")
	if err != nil {
		return false, classify(err, cfg)
	}
	for i := 0; i < r.RowNumber(); i++ {
		if name, _ := r.GetString(i, 0); name == file {
			return true, nil
		}
	}
	return false, nil
}

// Classify is classify for errors from a live source.
func Classify(err error, cfg LiveConfig) error { return classify(err, cfg) }
