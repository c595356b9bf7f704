package checkpoint

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// MariaGTID is one MariaDB GTID: domain-server-sequence.
type MariaGTID struct {
	Domain, Server uint32
	Seq            uint64
}

func (g MariaGTID) String() string { return fmt.Sprintf("%d-%d-%d", g.Domain, g.Server, g.Seq) }

// ParseMariaGTID parses "domain-server-sequence".
func ParseMariaGTID(s string) (MariaGTID, bool) {
	// strings.Cut, not Split: a stream parses one per transaction.
	a, rest, ok1 := strings.Cut(strings.TrimSpace(s), "-")
	b, c, ok2 := strings.Cut(rest, "-")
	if !ok1 || !ok2 || strings.Contains(c, "-") {
		return MariaGTID{}, false
	}
	d, err1 := strconv.ParseUint(a, 10, 32)
	srv, err2 := strconv.ParseUint(b, 10, 32)
	n, err3 := strconv.ParseUint(c, 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return MariaGTID{}, false
	}
	return MariaGTID{Domain: uint32(d), Server: uint32(srv), Seq: n}, true
}

// MariaPos is a MariaDB GTID position: the last GTID of each replication
// domain (as in @@gtid_binlog_pos or BINLOG_GTID_POS). A server's
// @@gtid_binlog_state, one GTID per domain and server, parses into a
// MariaState instead.
type MariaPos map[uint32]MariaGTID

// ParseMariaPos parses a comma-separated GTID position; entries that are
// not MariaDB GTIDs (a MySQL uuid:n) are left out. ok is false when some
// were.
func ParseMariaPos(s string) (MariaPos, bool) {
	p := MariaPos{}
	ok := true
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		g, good := ParseMariaGTID(part)
		if !good {
			ok = false
			continue
		}
		p[g.Domain] = g
	}
	return p, ok
}

// Add records g as its domain's last GTID.
func (p MariaPos) Add(g MariaGTID) { p[g.Domain] = g }

// domains returns p's domains in order.
func (p MariaPos) domains() []uint32 {
	ds := make([]uint32, 0, len(p))
	for d := range p {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds
}

// String formats the position ordered by domain ("" when empty).
func (p MariaPos) String() string {
	ds := p.domains()
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = p[d].String()
	}
	return strings.Join(parts, ",")
}

// Matches reports whether every domain of p has the same last GTID in
// at: the position at is where p's transactions end. Domains of at that
// p lacks are not compared (checkpoints of older versions knew only the
// domains they saw).
func (p MariaPos) Matches(at MariaPos) bool {
	for d, g := range p {
		if at[d] != g {
			return false
		}
	}
	return true
}

// After reports whether, in every domain of start, p is at or past it:
// a server whose binlogs begin at GTID state start still has every
// transaction after p. An empty start (binlogs that begin before any
// transaction) is covered by any p.
func (p MariaPos) After(start MariaPos) bool {
	for d, g := range start {
		if h, ok := p[d]; !ok || h.Seq < g.Seq {
			return false
		}
	}
	return true
}

// MariaState is a server's @@gtid_binlog_state: the last sequence number
// logged by each (domain, server id).
type MariaState map[[2]uint32]uint64

// ParseMariaState parses @@gtid_binlog_state.
func ParseMariaState(s string) MariaState {
	st := MariaState{}
	for _, part := range strings.Split(s, ",") {
		if g, ok := ParseMariaGTID(part); ok {
			k := [2]uint32{g.Domain, g.Server}
			st[k] = max(st[k], g.Seq)
		}
	}
	return st
}

// Contains reports whether the server's history holds every GTID of p:
// for each, the server logged its domain and server id up to at least
// its sequence number.
func (st MariaState) Contains(p MariaPos) bool {
	for _, g := range p {
		if st[[2]uint32{g.Domain, g.Server}] < g.Seq {
			return false
		}
	}
	return true
}
