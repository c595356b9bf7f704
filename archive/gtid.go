package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"sort"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
)

// gtid is one MariaDB GTID.
type gtid struct {
	domain, server uint32
	seq            uint64
}

func (g gtid) String() string { return fmt.Sprintf("%d-%d-%d", g.domain, g.server, g.seq) }

// gtidState is a MariaDB GTID position: the last GTID of each domain.
type gtidState map[uint32]gtid

// parseState parses "0-1-100,1-2-5" (MariaDB's slave_pos form).
func parseState(s string) (gtidState, error) {
	st := gtidState{}
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		f := strings.Split(p, "-")
		if len(f) != 3 {
			return nil, fmt.Errorf("GTID %q: want domain-server-seq", p)
		}
		d, err1 := strconv.ParseUint(f[0], 10, 32)
		sv, err2 := strconv.ParseUint(f[1], 10, 32)
		q, err3 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("GTID %q: want domain-server-seq", p)
		}
		st.add(gtid{uint32(d), uint32(sv), q})
	}
	return st, nil
}

// add takes in g (the newest of its domain by sequence number).
func (st gtidState) add(g gtid) {
	if old, ok := st[g.domain]; !ok || g.seq >= old.seq {
		st[g.domain] = g
	}
}

// covers reports whether g is in the position (at or before it, in a
// domain of strictly increasing sequence numbers: gtid_strict_mode).
func (st gtidState) covers(g gtid) bool {
	old, ok := st[g.domain]
	return ok && g.seq <= old.seq
}

func (st gtidState) clone() gtidState {
	c := make(gtidState, len(st))
	for k, v := range st {
		c[k] = v
	}
	return c
}

func (st gtidState) String() string {
	ds := make([]uint32, 0, len(st))
	for d := range st {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = st[d].String()
	}
	return strings.Join(parts, ",")
}

// txInfo is one whole transaction (a MariaDB event group, a MySQL
// transaction) of a binlog.
type txInfo struct {
	gtid   gtid
	start  int64     // offset of its GTID event (-1: from a stream)
	end    int64     // offset after its last event
	before gtidState // the position before it
	sum    [32]byte  // fingerprint: what it changes (sameTx)
	// MySQL: my is its GTID (uuid:n; gtid is zero), myBefore the set
	// executed before it (the file's PREVIOUS_GTIDS and the file's
	// transactions before it; nil when the file has no PREVIOUS_GTIDS).
	my       string
	myBefore mysqlSet
}

// id is the transaction's GTID as the manifest and messages write it.
func (tx *txInfo) id() string {
	if tx.my != "" {
		return tx.my
	}
	return tx.gtid.String()
}

// txTracker follows the event groups of one binlog file (or one dump):
// the GTID position after each whole group, and the fingerprint of the
// group, which does not depend on the server that logged it: the GTID,
// each event's type, the query texts and the row images (table ids,
// timestamps, XIDs and thread ids differ between a primary and its
// replica; the changes do not).
type txTracker struct {
	state gtidState // after the last whole group
	crc   bool
	in    bool // inside a group
	cur   gtid
	start int64
	alone bool // FL_STANDALONE: the group is one more event
	// MySQL: the executed set after the last whole transaction (nil
	// until a PREVIOUS_GTIDS event), the current transaction's GTID, and
	// whether the next event is its first after the GTID event (a
	// QUERY other than BEGIN there is the whole transaction: DDL).
	my      mysqlSet
	myCur   string
	myFirst bool
	h       hash.Hash
	last    *txInfo // the last whole group
	onTx    func(*txInfo) error
}

func newTxTracker() *txTracker { return &txTracker{state: gtidState{}, h: sha256.New()} }

// event takes in one real event at off (-1 when unknown).
func (t *txTracker) event(h header, raw []byte, off int64) error {
	body := raw[binlog.HeaderSize:]
	if t.crc && len(body) >= 4 {
		body = body[:len(body)-4]
	}
	switch h.typ {
	case replication.FORMAT_DESCRIPTION_EVENT:
		crc, err := binlog.FDEChecksum(raw)
		if err != nil {
			return err
		}
		t.crc = crc
		return nil
	case replication.MARIADB_GTID_LIST_EVENT:
		st, err := gtidListState(body)
		if err != nil {
			return err
		}
		if !t.in {
			for _, g := range st {
				t.state.add(g)
			}
		}
		return nil
	case replication.PREVIOUS_GTIDS_EVENT:
		if !t.in {
			set, err := previousGTIDs(raw, t.crc)
			if err != nil {
				return err
			}
			if t.my, err = parseMySQLSet(set); err != nil {
				return err
			}
		}
		return nil
	case replication.GTID_EVENT, replication.GTID_TAGGED_LOG_EVENT:
		g := gtidOf(h, raw)
		if g == "" {
			return fmt.Errorf("a GTID event of %d bytes", len(raw))
		}
		t.in, t.start, t.alone, t.myCur, t.myFirst = true, off, false, g, true
		t.h.Reset()
		fmt.Fprintf(t.h, "gtid %s\n", g)
		return nil
	case replication.MARIADB_GTID_EVENT:
		t.myCur = ""
		if len(body) < 13 {
			return fmt.Errorf("a GTID event of %d bytes", len(raw))
		}
		t.in, t.start = true, off
		t.cur = gtid{domain: binary.LittleEndian.Uint32(body[8:]), server: h.server, seq: binary.LittleEndian.Uint64(body)}
		t.alone = body[12]&replication.BINLOG_MARIADB_FL_STANDALONE != 0
		t.h.Reset()
		fmt.Fprintf(t.h, "gtid %s\n", t.cur)
		return nil
	}
	if !t.in {
		return nil
	}
	fmt.Fprintf(t.h, "event %d\n", h.typ)
	end := false
	first := t.myFirst
	t.myFirst = false
	switch h.typ {
	case replication.QUERY_EVENT:
		q := queryText(body)
		t.h.Write(q)
		t.h.Write([]byte{0})
		end = t.alone || bytes.EqualFold(q, []byte("COMMIT")) || bytes.EqualFold(q, []byte("ROLLBACK")) ||
			first && !bytes.EqualFold(q, []byte("BEGIN"))
	case replication.XID_EVENT, replication.XA_PREPARE_LOG_EVENT:
		end = true
	case replication.WRITE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv1,
		replication.WRITE_ROWS_EVENTv2, replication.UPDATE_ROWS_EVENTv2, replication.DELETE_ROWS_EVENTv2:
		if len(body) > 8 {
			t.h.Write(body[8:]) // after the table id and flags
		}
	default:
		end = t.alone
	}
	if !end {
		return nil
	}
	tx := &txInfo{gtid: t.cur, start: t.start, before: t.state.clone()}
	if off >= 0 {
		tx.end = off + int64(len(raw))
	}
	copy(tx.sum[:], t.h.Sum(nil))
	if t.myCur != "" {
		tx.gtid, tx.my = gtid{}, t.myCur
		if t.my != nil {
			tx.myBefore = t.my.clone()
			t.my.add(t.myCur)
		}
	} else {
		t.state.add(t.cur)
	}
	t.in, t.last = false, tx
	if t.onTx != nil {
		return t.onTx(tx)
	}
	return nil
}

// queryText is a QUERY event's statement (with its default database).
func queryText(body []byte) []byte {
	if len(body) < 13 {
		return nil
	}
	dbLen := int(body[8])
	varsLen := int(binary.LittleEndian.Uint16(body[11:]))
	at := 13 + varsLen + dbLen + 1
	if at > len(body) {
		return nil
	}
	return body[at:]
}

// gtidListState decodes a MARIADB_GTID_LIST_EVENT's body: a count (low
// 28 bits), then domain, server, seq per GTID.
func gtidListState(body []byte) (gtidState, error) {
	if len(body) < 4 {
		return nil, fmt.Errorf("a GTID_LIST event of %d bytes", len(body))
	}
	n := int(binary.LittleEndian.Uint32(body) & (1<<28 - 1))
	if n > (len(body)-4)/16 {
		return nil, fmt.Errorf("a GTID_LIST event of %d GTIDs in %d bytes", n, len(body))
	}
	st := gtidState{}
	for i := 0; i < n; i++ {
		b := body[4+16*i:]
		st.add(gtid{domain: binary.LittleEndian.Uint32(b), server: binary.LittleEndian.Uint32(b[4:]), seq: binary.LittleEndian.Uint64(b[8:])})
	}
	return st, nil
}
