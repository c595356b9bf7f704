package mysqlsink

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
)

// Config says how to reach the target server.
type Config struct {
	Addr     string // host:port
	User     string
	Password string
	// TLS, when set, encrypts the connection. With TLSPreferred, a server
	// without TLS is used in plain text.
	TLS          *tls.Config
	TLSPreferred bool
}

// Checkpoint is the target's row in binlogcdc.checkpoint.
type Checkpoint struct {
	// Next is where the first transaction not yet applied starts; File is
	// "" when nothing was applied yet.
	Next change.Position
	GTID string // the last applied transaction's GTID, if it had one
	// DDL is the position of a DDL statement that was started but may not
	// have finished when binlogcdc stopped ("" File: none).
	DDL change.Position
	// XAFrom is where reading must start to collect again the prepared XA
	// transactions held when the checkpoint was saved (the earliest one's
	// XA PREPARE group); nothing before Next is applied again ("" File:
	// none held, read from Next).
	XAFrom  change.Position
	Updated time.Time
}

// ReadFrom is where reading resumes: XAFrom while XA transactions were
// held, Next otherwise.
func (cp Checkpoint) ReadFrom() change.Position {
	if cp.XAFrom.File != "" {
		return cp.XAFrom
	}
	return cp.Next
}

const checkpointTable = "`binlogcdc`.`checkpoint`"

var setupCheckpoint = []string{
	"CREATE DATABASE IF NOT EXISTS `binlogcdc`",
	"CREATE TABLE IF NOT EXISTS " + checkpointTable + ` (
  replica VARCHAR(191) NOT NULL,
  file VARCHAR(255) NOT NULL DEFAULT '',
  pos BIGINT UNSIGNED NOT NULL DEFAULT 0,
  gtid VARCHAR(255) NOT NULL DEFAULT '',
  ddl_file VARCHAR(255) NOT NULL DEFAULT '',
  ddl_pos BIGINT UNSIGNED NOT NULL DEFAULT 0,
  xa_file VARCHAR(255) NOT NULL DEFAULT '',
  xa_pos BIGINT UNSIGNED NOT NULL DEFAULT 0,
  source_time DATETIME(6) NULL,
  updated DATETIME(6) NULL,
  PRIMARY KEY (replica)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='binlogcdc: where each replica stands; updated in the same transaction as the changes'`,
}

// dial opens a session with the settings replay needs: matched (not
// changed) rows counted (CLIENT_FOUND_ROWS), utf8mb4, UTC, no foreign key
// checks, and the exact sql_mode of sqltext.SessionSetup.
func dial(ctx context.Context, cfg Config) (*client.Conn, error) {
	connect := func(tlsCfg *tls.Config) (*client.Conn, error) {
		return client.ConnectWithContext(ctx, cfg.Addr, cfg.User, cfg.Password, "", 10*time.Second, func(c *client.Conn) error {
			if tlsCfg != nil {
				c.SetTLSConfig(tlsCfg)
			}
			if err := c.SetCapability(mysql.CLIENT_FOUND_ROWS); err != nil {
				return err
			}
			// LOAD DATA LOCAL (bulk.go). The server can only ask for the
			// file of a LOAD DATA LOCAL we sent: replies to anything else
			// that ask for a file are errors in go-mysql, never a file read.
			if err := c.SetCapability(mysql.CLIENT_LOCAL_FILES); err != nil {
				return err
			}
			return c.SetCollation("utf8mb4_general_ci")
		})
	}
	c, err := connect(cfg.TLS)
	if err != nil && cfg.TLS != nil && cfg.TLSPreferred && strings.Contains(err.Error(), "TLS") {
		c, err = connect(nil)
	}
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", cfg.Addr, err)
	}
	for _, q := range sqltext.SessionSetup {
		if _, err := c.Execute(q); err != nil {
			c.Close()
			return nil, fmt.Errorf("target %s: %s: %w", cfg.Addr, q, err)
		}
	}
	return c, nil
}

// lockName is the GET_LOCK name that keeps two binlogcdc processes from
// applying as the same replica at once.
func lockName(replica string) string {
	n := "binlogcdc:" + replica
	if len(n) > 64 {
		h := sha256.Sum256([]byte(replica))
		n = "binlogcdc:" + hex.EncodeToString(h[:16])
	}
	return n
}

// prepareTarget creates the checkpoint table, takes the replica's lock and
// reads its checkpoint.
func prepareTarget(c *client.Conn, replica string) (Checkpoint, error) {
	var cp Checkpoint
	for _, q := range setupCheckpoint {
		if _, err := c.Execute(q); err != nil {
			return cp, fmt.Errorf("creating the checkpoint table %s on the target: %w", checkpointTable, err)
		}
	}
	if err := addXAColumns(c); err != nil {
		return cp, err
	}
	r, err := c.Execute("SELECT GET_LOCK(?, 10)", lockName(replica))
	if err != nil {
		return cp, fmt.Errorf("target: GET_LOCK: %w", err)
	}
	got, _ := r.GetInt(0, 0)
	if got != 1 {
		return cp, fmt.Errorf("another binlogcdc is applying to this target as replica %q (it holds the lock %q); use a different --replica-name or stop it", replica, lockName(replica))
	}
	if _, err := c.Execute("INSERT IGNORE INTO "+checkpointTable+" (replica) VALUES (?)", replica); err != nil {
		return cp, fmt.Errorf("target: %w", err)
	}
	r, err = c.Execute("SELECT file, pos, gtid, ddl_file, ddl_pos, COALESCE(CAST(updated AS CHAR), ''), xa_file, xa_pos FROM "+checkpointTable+" WHERE replica = ?", replica)
	if err != nil {
		return cp, fmt.Errorf("target: reading the checkpoint: %w", err)
	}
	if r.RowNumber() != 1 {
		return cp, errors.New("target: the checkpoint row is missing")
	}
	str := func(col int) string { s, _ := r.GetString(0, col); return s }
	u := func(col int) uint64 { n, _ := r.GetUint(0, col); return n }
	cp.Next = change.Position{File: str(0), Offset: u(1)}
	cp.GTID = str(2)
	cp.DDL = change.Position{File: str(3), Offset: u(4)}
	cp.Updated, _ = time.Parse("2006-01-02 15:04:05.999999", str(5))
	cp.XAFrom = change.Position{File: str(6), Offset: u(7)}
	return cp, nil
}

// addXAColumns adds xa_file and xa_pos to a checkpoint table created by
// an earlier binlogcdc (ADD COLUMN IF NOT EXISTS is MariaDB's only).
func addXAColumns(c *client.Conn) error {
	r, err := c.Execute("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'binlogcdc' AND TABLE_NAME = 'checkpoint' AND COLUMN_NAME = 'xa_pos'")
	if err != nil {
		return fmt.Errorf("target: reading the checkpoint table's columns: %w", err)
	}
	if n, _ := r.GetInt(0, 0); n > 0 {
		return nil
	}
	_, err = c.Execute("ALTER TABLE " + checkpointTable + " ADD COLUMN xa_file VARCHAR(255) NOT NULL DEFAULT '' AFTER ddl_pos, ADD COLUMN xa_pos BIGINT UNSIGNED NOT NULL DEFAULT 0 AFTER xa_file")
	if err != nil && myErrorCode(err) != mysql.ER_DUP_FIELDNAME { // another binlogcdc added them meanwhile
		return fmt.Errorf("target: adding the columns xa_file, xa_pos to %s: %w", checkpointTable, err)
	}
	return nil
}

// ReadCheckpoint connects to the target and returns the checkpoint of
// replica, without changing anything (ok is false when there is none).
func ReadCheckpoint(ctx context.Context, cfg Config, replica string) (cp Checkpoint, ok bool, err error) {
	c, err := dial(ctx, cfg)
	if err != nil {
		return cp, false, err
	}
	defer c.Close()
	r, err := c.Execute("SELECT file, pos FROM "+checkpointTable+" WHERE replica = ?", replica)
	if err != nil {
		var me *mysql.MyError
		if errors.As(err, &me) && (me.Code == mysql.ER_NO_SUCH_TABLE || me.Code == mysql.ER_BAD_DB_ERROR) {
			return cp, false, nil
		}
		return cp, false, err
	}
	if r.RowNumber() == 0 {
		return cp, false, nil
	}
	f, _ := r.GetString(0, 0)
	p, _ := r.GetUint(0, 1)
	cp.Next = change.Position{File: f, Offset: p}
	return cp, f != "", nil
}

// saveCheckpoint updates the checkpoint row inside the open transaction.
func (s *Sink) saveCheckpoint(tx change.TxEnd, ddl change.Position) error {
	var srcTime any
	if !tx.Time.IsZero() {
		srcTime = sourceTime(tx.Time)
	}
	n, err := s.execPreparedCount(saveCheckpointSQL, tx.Next.File, tx.Next.Offset, tx.GTID, ddl.File, ddl.Offset, tx.XAFrom.File, tx.XAFrom.Offset, srcTime, s.opts.Replica)
	if err == nil && n != 1 {
		err = s.checkpointRowError(n)
	}
	return err
}

// checkpointRowError is the error of a checkpoint UPDATE that matched n
// rows, not one: the row was deleted (or renamed) behind binlogcdc's
// back. Committing the changes without it would make a restart apply
// them again.
func (s *Sink) checkpointRowError(n uint64) error {
	return fmt.Errorf("the row of replica %q in %s matched %d rows instead of 1: it was deleted or changed on the target while binlogcdc was applying, "+
		"so this group of changes was rolled back; the target holds the changes up to %s:%d (GTID %q). "+
		"Put the row back with that position (INSERT INTO %s (replica, file, pos, gtid) VALUES (…)) before running again: a run without it starts over",
		s.opts.Replica, checkpointTable, n, s.saved.Next.File, s.saved.Next.Offset, s.saved.GTID, checkpointTable)
}

// saveCheckpointSQL updates a replica's checkpoint row (saveCheckpoint,
// checkpointPacket).
const saveCheckpointSQL = "UPDATE " + checkpointTable + " SET file = ?, pos = ?, gtid = ?, ddl_file = ?, ddl_pos = ?, xa_file = ?, xa_pos = ?, source_time = ?, updated = NOW(6) WHERE replica = ?"

// sourceTime is how the checkpoint row stores a transaction's time.
func sourceTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.999999") }

// myErrorCode returns the server error code in err, or 0.
func myErrorCode(err error) uint16 {
	var me *mysql.MyError
	if errors.As(err, &me) {
		return me.Code
	}
	return 0
}

// SaveStart records start as the checkpoint of a replica that has none,
// so that a restart resumes there (stream --from now is resolved once).
// gtidPos is the source's GTID position at start ("" when it has none,
// or cannot tell): kept in the gtid column, it is what shows a restart
// that the checkpoint belongs to the source's history, as the last
// transaction's GTID does once one is applied.
func (s *Sink) SaveStart(start change.Position, gtidPos string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wait()
	if s.saved.Next.File != "" {
		return nil
	}
	s.saved = change.TxEnd{Next: start, GTID: gtidPos}
	next := s.saved.Next
	s.savedPos.Store(&next)
	if err := s.saveCheckpoint(s.saved, change.Position{}); err != nil {
		return fmt.Errorf("target: saving the start position: %w", err)
	}
	return nil
}

// Advance moves the checkpoint to next, a transaction boundary the source
// passed without a transaction (a ROTATE to the next binlog), so that the
// checkpoint does not keep naming a file the source may purge. It is saved
// with the next group.
func (s *Sink) Advance(next change.Position) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.curStart != len(s.pend) || s.curExecuted || next.File == "" {
		return
	}
	// Called after every transaction (stream): mostly next is where the
	// last one ended, and then there is nothing to do, nor to wait for.
	switch {
	case s.group.end != nil && s.group.end.Next == next:
		return
	case s.group.end == nil && s.bgBusy > 0 && s.handed.Next == next:
		return // the end of the group in flight (background.go)
	}
	s.wait()
	if s.failed != nil {
		return
	}
	end := s.saved
	if s.group.end != nil {
		end = *s.group.end
	}
	if end.Next == next {
		return
	}
	end.Next = next
	if s.group.txs == 0 && s.group.rows == 0 {
		s.group.start = time.Now()
	}
	s.group.txs++
	s.group.end = &end
}

// Describe connects to the target and says which server answered: its
// address, VERSION() and @@server_id (for the first log line of a
// command that writes there: a DSN without a port reaches port 3306).
func Describe(ctx context.Context, cfg Config) (string, error) {
	c, err := dial(ctx, cfg)
	if err != nil {
		return "", err
	}
	defer c.Close()
	r, err := c.Execute("SELECT VERSION(), @@server_id")
	if err != nil {
		return "", fmt.Errorf("target %s: %w", cfg.Addr, err)
	}
	v, _ := r.GetString(0, 0)
	id, _ := r.GetUint(0, 1)
	return fmt.Sprintf("%s (%s, server_id %d)", cfg.Addr, v, id), nil
}
