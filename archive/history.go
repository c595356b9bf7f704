package archive

// Failover: the source replaced by another server that had every archived
// transaction (a promoted replica). Its binlog files have other names and
// other contents (its own XIDs, times, table ids), so they cannot go on
// the first server's series: the archive keeps one series per server
// history. The first history's files are in DIR itself; each later one
// in DIR/history-N (N = 2, 3, …), with a manifest of its own whose
// Switch says where it takes over: after the GTID position at the end of
// the previous history's last whole transaction. The new history starts,
// byte for byte like the others, at the beginning of the new server's
// file that holds the first transaction after that position, so its first
// file may repeat transactions the previous history holds: ReadList says
// what to read of each file so that every transaction comes once.
//
// The new server is only taken for the same history when it has logged
// the archive's last whole transaction with the same changes (GTID, query
// texts, row images: sameTx): otherwise it is another history, refused.
// MariaDB: GTID positions by domain (gtid_strict_mode); MySQL: GTID sets,
// the new server's gtid_executed holding the old source's transactions
// under its server_uuid (mysqlgtid.go).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
)

// Switch is where a history takes over from the one before.
type Switch struct {
	// PrevFile is the previous history's file holding its last whole
	// transaction, PrevEnd where that transaction ends: the previous
	// history is read up to there (a cut transaction after it is read
	// from this history).
	PrevFile string `json:"prev_file"`
	PrevEnd  int64  `json:"prev_end"`
	// After is the GTID position after that transaction (LastGTID): this
	// history's transactions are the ones after it.
	After    string `json:"after"`
	LastGTID string `json:"last_gtid"`
	// FirstFile is the new server's file the history starts with.
	FirstFile string `json:"first_file"`
	Time      string `json:"time"`
}

// historyDir is the name of the N-th history's subdirectory.
func historyDir(n int) string { return fmt.Sprintf("history-%d", n) }

// chainNames lists the history subdirectories an archive's manifests
// name (they belong to the archive).
func chainNames(top string) (map[string]bool, error) {
	names := map[string]bool{}
	m, ok, err := readManifest(top)
	for ok && m.Next != "" {
		if names[m.Next] || !validName(m.Next) {
			return nil, &Error{Msg: fmt.Sprintf("the archive %s names the history %q twice or badly", top, m.Next), Hint: "restore its manifests from a copy"}
		}
		names[m.Next] = true
		m, ok, err = readManifest(filepath.Join(top, m.Next))
	}
	return names, err
}

// follow loads the histories after d (the archive's first) and returns
// the newest: the one the archiver writes.
func (d *dir) follow() (*dir, error) {
	for d.m.Next != "" {
		sub := filepath.Join(d.top, d.m.Next)
		if _, ok, err := readManifest(sub); err != nil {
			return nil, err
		} else if !ok {
			d.pending = true // killed before the new history's manifest was written
			return d, nil
		}
		n := &dir{path: sub, top: d.top, prev: d, depth: d.depth + 1, unlock: d.unlock}
		if err := n.load(nil); err != nil {
			return nil, err
		}
		d = n
	}
	return d, nil
}

// failover takes the archive over to the server hist is connected to
// (server id sid), another than the history's: after checking that it
// logged the archive's last whole transaction, the same, the current
// history is closed and a new one begins (Switch).
func (a *archiver) failover(ctx context.Context, hist *binlog.History, sid uint32) error {
	d := a.d
	mysqlFlavor := a.cfg.Live.Flavor != "mariadb"
	file, tx, err := a.lastTx()
	if err != nil {
		return err
	}
	if tx == nil || mysqlFlavor && (tx.my == "" || tx.myBefore == nil) {
		return &Error{Msg: fmt.Sprintf("the server %s has server_id %d, not %d as the archive %s, which holds no whole transaction to go on after by GTID", a.cfg.Source, sid, d.m.ServerID, d.path),
			Hint: "archive the new server into another directory"}
	}
	other := func(why string) error {
		return &Error{Msg: fmt.Sprintf("the server %s (server_id %d) %s: it is not a replica that had every transaction of the archive %s (written from server_id %d), whose last whole one is %s in %s", a.cfg.Source, sid, why, a.cfg.Dir, d.m.ServerID, tx.id(), file),
			Hint: "point --source at the promoted replica that has every archived transaction, or archive this server into another directory"}
	}
	s, err := hist.GTIDState(ctx)
	if err != nil {
		return err
	}
	var after fmt.Stringer
	if mysqlFlavor {
		have, err := parseMySQLSet(s)
		if err != nil {
			return err
		}
		if !have.has(tx.my) {
			return other(fmt.Sprintf("has not executed %s (its gtid_executed is %q)", tx.my, s))
		}
		set := tx.myBefore.clone()
		set.add(tx.my)
		after = set
	} else {
		have, err := parseState(s)
		if err != nil {
			return err
		}
		if !have.covers(tx.gtid) {
			return other(fmt.Sprintf("has not logged %s (its gtid_binlog_state is %q)", tx.gtid, s))
		}
		st := tx.before.clone()
		st.add(tx.gtid)
		after = st
	}
	first, err := a.sameTx(ctx, hist, tx, other)
	if err != nil {
		return err
	}
	name := d.m.Next
	if name == "" {
		name = historyDir(d.depth + 1)
	}
	// The current history ends: its open file is closed as it is (the
	// server that wrote it is gone), and the manifest names the next.
	a.locked(func() { d.m.Next = name })
	if o := a.cur; o != nil {
		if o.w == nil && o.torn > 0 {
			if err := o.f.Truncate(o.off); err != nil {
				return o.writeErr(err)
			}
		}
		if err := a.closeFile("failover"); err != nil {
			return err
		}
	} else if err := a.save(d); err != nil {
		return err
	}
	sub := filepath.Join(d.top, name)
	if err := os.MkdirAll(sub, 0o755); err != nil {
		return &Error{Msg: fmt.Sprintf("cannot create %s: %v", sub, err), Write: true}
	}
	m := &Manifest{Format: 1, Source: a.cfg.Source, Flavor: a.cfg.Live.Flavor, ServerID: sid, Switch: &Switch{
		PrevFile: file, PrevEnd: tx.end, After: after.String(), LastGTID: tx.id(), FirstFile: first,
		Time: time.Now().UTC().Format(time.RFC3339)}}
	if err := m.save(sub); err != nil {
		return err
	}
	if err := syncDir(d.top); err != nil {
		return &Error{Msg: fmt.Sprintf("cannot sync %s: %v", d.top, err), Write: true}
	}
	a.cfg.Logf("the source %s is server_id %d, not %d: it has the archive's last transaction %s, the same; the archive goes on in %s with its %s, after GTID position %s",
		a.cfg.Source, sid, d.m.ServerID, tx.id(), sub, first, m.Switch.After)
	a.locked(func() { a.d = &dir{path: sub, m: m, top: d.top, prev: d, depth: d.depth + 1, unlock: d.unlock} })
	return nil
}

// lastTx finds the current history's last whole transaction: in its
// newest file that has one.
func (a *archiver) lastTx() (string, *txInfo, error) {
	files := a.d.m.Files
	for i := len(files) - 1; i >= 0; i-- {
		e := files[i]
		if e.Expired {
			break
		}
		var path string
		a.locked(func() { path = filepath.Join(a.d.path, e.stored()) }) // the worker may compress it
		limit := int64(0)
		if a.cur != nil && a.cur.entry == e {
			if err := a.flush(false); err != nil {
				return "", nil, err
			}
			if limit = a.cur.off; limit < 4 {
				continue
			}
		}
		t, err := trackFile(path, limit, nil)
		if err != nil {
			return "", nil, err
		}
		if t.last != nil {
			if a.cur != nil && a.cur.entry == e && t.last.end > a.cur.off {
				return "", nil, damaged(path, a.cur.off, "the open file holds more than the archiver measured")
			}
			return e.Name, t.last, nil
		}
	}
	return "", nil, nil
}

var errFound = errors.New("found")

// refusedDump reports whether err is the server refusing a dump (MySQL
// error 1236: a GTID position it cannot serve).
func refusedDump(err error) bool {
	var me *mysql.MyError
	return errors.As(err, &me) && me.Code == mysql.ER_MASTER_FATAL_ERROR_READING_BINLOG
}

// sameTx dumps the server from the GTID position before tx (MySQL: with
// COM_BINLOG_DUMP_GTID and the set executed before tx, so that the
// server leaves out what the set holds) and checks that the first
// transaction after it is tx, with the same changes. It returns the
// server's file the dump started in.
func (a *archiver) sameTx(ctx context.Context, hist *binlog.History, tx *txInfo, other func(string) error) (string, error) {
	var before string
	var start change.Position
	switch {
	case tx.my != "":
		if before = tx.myBefore.String(); before == "" {
			// Nothing before tx: from the server's oldest binlog.
			files, err := hist.Binlogs(ctx)
			if err != nil {
				return "", err
			}
			if len(files) == 0 {
				return "", other("lists no binlogs")
			}
			start = change.Position{File: files[0], Offset: 4}
		}
	default:
		before = tx.before.String()
		if !tx.before.covers(gtid{domain: tx.gtid.domain}) {
			// The first transaction of its domain in the archive.
			b := tx.before.clone()
			b[tx.gtid.domain] = gtid{tx.gtid.domain, tx.gtid.server, tx.gtid.seq - 1}
			before = b.String()
		}
	}
	src, err := binlog.DialLive(ctx, a.cfg.Live, start, before)
	if err != nil {
		if refusedDump(err) {
			return "", other(fmt.Sprintf("cannot send its binlog after GTID position %s (%v)", before, err))
		}
		return "", err
	}
	defer src.Close()
	file := ""
	t := newTxTracker()
	t.onTx = func(got *txInfo) error {
		if tx.my == "" && tx.before.covers(got.gtid) || tx.my != "" && got.my != "" && tx.myBefore.has(got.my) {
			return nil
		}
		if got.gtid != tx.gtid || got.my != tx.my {
			return other(fmt.Sprintf("logged %s after GTID position %s, not %s", got.id(), orEmpty(before), tx.id()))
		}
		if got.sum != tx.sum {
			return other(fmt.Sprintf("logged %s with other changes than the archive holds", tx.id()))
		}
		return errFound
	}
	for {
		raw, err := src.NextRaw(ctx)
		if err != nil {
			if refusedDump(err) {
				return "", other(fmt.Sprintf("cannot send its binlog after GTID position %s (%v)", before, err))
			}
			return "", err
		}
		if len(raw) < binlog.HeaderSize {
			return "", other("sent an event too short for a header")
		}
		h := parseHeader(raw)
		switch {
		case h.heartbeat():
			return "", other(fmt.Sprintf("sent nothing after GTID position %s", before))
		case h.typ == replication.ROTATE_EVENT && (h.artificial() || h.logPos == 0):
			if _, name, ok := rotateTarget(raw); ok && file == "" {
				file = name
			}
			continue
		case h.artificial():
			continue
		}
		if file == "" {
			return "", other("sent an event before naming its file")
		}
		if err := t.event(h, raw, -1); errors.Is(err, errFound) {
			return file, nil
		} else if err != nil {
			return "", err
		}
	}
}

func orEmpty(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}
