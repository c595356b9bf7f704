package archive

// MySQL GTID sets in an archive: each MySQL binlog file starts with a
// PREVIOUS_GTIDS event, the set the server had executed before it; the
// manifest records it (FileEntry.PreviousGTIDs), so that a read with
// --start-gtid SET picks its first file from the manifest alone.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
)

// mysqlSet is a MySQL GTID set indexed for lookups: "uuid" or "uuid:tag"
// (lower case, as binlog.GTID.ID writes them) to its intervals, sorted
// and merged ([Start, Stop): Stop is one past the last).
type mysqlSet map[string]mysql.IntervalSlice

// parseMySQLSet parses "uuid:1-5,uuid2:7,uuid3:tag:1-3" (MySQL's
// gtid_executed form, tagged GTIDs of 9.x included); "" is the empty set.
func parseMySQLSet(s string) (mysqlSet, error) {
	g, err := mysql.ParseMysqlGTIDSet(strings.TrimSpace(s))
	if err != nil {
		return nil, err
	}
	return indexMySQLSet(g.(*mysql.MysqlGTIDSet)), nil
}

func indexMySQLSet(g *mysql.MysqlGTIDSet) mysqlSet {
	set := mysqlSet{}
	for u, tags := range *g {
		for tag, iv := range tags {
			key := u.String()
			if t := tag.String(); t != "" {
				key += ":" + t
			}
			set[key] = append(set[key], iv...).Normalize()
		}
	}
	return set
}

// has reports whether the set holds the GTID g ("uuid:n", "uuid:tag:n").
func (s mysqlSet) has(g string) bool {
	i := strings.LastIndexByte(g, ':')
	if i < 0 {
		return false
	}
	n, err := strconv.ParseInt(g[i+1:], 10, 64)
	if err != nil {
		return false
	}
	iv := s[strings.ToLower(g[:i])]
	j := sort.Search(len(iv), func(j int) bool { return iv[j].Stop > n })
	return j < len(iv) && iv[j].Start <= n
}

// add takes in the GTID g ("uuid:n", "uuid:tag:n"; anything else is
// ignored).
func (s mysqlSet) add(g string) {
	i := strings.LastIndexByte(g, ':')
	if i < 0 {
		return
	}
	n, err := strconv.ParseInt(g[i+1:], 10, 64)
	if err != nil || n < 1 {
		return
	}
	k := strings.ToLower(g[:i])
	s[k] = append(s[k], mysql.Interval{Start: n, Stop: n + 1}).Normalize()
}

// union is s with o's GTIDs added.
func (s mysqlSet) union(o mysqlSet) mysqlSet {
	out := s.clone()
	for k, iv := range o {
		out[k] = append(out[k], iv...).Normalize()
	}
	return out
}

func (s mysqlSet) clone() mysqlSet {
	out := make(mysqlSet, len(s))
	for k, iv := range s {
		out[k] = append(mysql.IntervalSlice(nil), iv...)
	}
	return out
}

// minus is what of s is not in o.
func (s mysqlSet) minus(o mysqlSet) mysqlSet {
	out := mysqlSet{}
	for k, iv := range s {
		rest := iv
		for _, cut := range o[k] {
			var next mysql.IntervalSlice
			for _, x := range rest {
				if cut.Stop <= x.Start || cut.Start >= x.Stop {
					next = append(next, x)
					continue
				}
				if x.Start < cut.Start {
					next = append(next, mysql.Interval{Start: x.Start, Stop: cut.Start})
				}
				if cut.Stop < x.Stop {
					next = append(next, mysql.Interval{Start: cut.Stop, Stop: x.Stop})
				}
			}
			rest = next
		}
		if len(rest) > 0 {
			out[k] = rest
		}
	}
	return out
}

// last is the highest transaction number of key in the set (0: none).
func (s mysqlSet) last(key string) int64 {
	iv := s[key]
	if len(iv) == 0 {
		return 0
	}
	return iv[len(iv)-1].Stop - 1
}

// String is the set in MySQL's form, keys sorted.
func (s mysqlSet) String() string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		iv := make([]string, len(s[k]))
		for i, x := range s[k] {
			iv[i] = x.String()
		}
		parts = append(parts, k+":"+strings.Join(iv, ":"))
	}
	return strings.Join(parts, ",")
}

// previousGTIDs decodes a PREVIOUS_GTIDS event (raw: header, body and,
// with crc, the checksum) into MySQL's set form.
func previousGTIDs(raw []byte, crc bool) (string, error) {
	body := raw[binlog.HeaderSize:]
	if crc {
		if len(body) < 4 {
			return "", fmt.Errorf("a PREVIOUS_GTIDS event of %d bytes", len(raw))
		}
		body = body[:len(body)-4]
	}
	g, err := mysql.DecodeMysqlGTIDSet(body)
	if err != nil {
		return "", fmt.Errorf("a PREVIOUS_GTIDS event that does not decode: %v", err)
	}
	return indexMySQLSet(g).String(), nil
}

// filePreviousGTIDs reads the PREVIOUS_GTIDS event at the head of the
// archived file at path (for manifests written before they recorded it);
// ok is false when the file has none (it follows another event than the
// FORMAT_DESCRIPTION_EVENT: no MySQL 5.6+ binlog).
func filePreviousGTIDs(path string) (set string, ok bool, err error) {
	rc, err := openArchived(path)
	if err != nil {
		return "", false, err
	}
	defer rc.Close()
	crc := false
	err = eachEvent(path, rc, func(h header, raw []byte, off int64) error {
		switch h.typ {
		case replication.FORMAT_DESCRIPTION_EVENT:
			c, err := binlog.FDEChecksum(raw)
			crc = c
			return err
		case replication.PREVIOUS_GTIDS_EVENT:
			if set, err = previousGTIDs(raw, crc); err != nil {
				return err
			}
			ok = true
		}
		return errFound // only the events before the first other one
	})
	if err == errFound {
		err = nil
	}
	return set, ok, err
}

// afterPos is a switch's GTID position (Switch.After): MariaDB's GTID
// position, or, when it holds a ':', MySQL's executed set.
type afterPos struct {
	maria gtidState
	my    mysqlSet // non-nil: MySQL
}

func parseAfter(s string) (afterPos, error) {
	if strings.Contains(s, ":") {
		set, err := parseMySQLSet(s)
		return afterPos{my: set}, err
	}
	st, err := parseState(s)
	return afterPos{maria: st}, err
}

// covers reports whether the position holds tx.
func (p afterPos) covers(tx *txInfo) bool {
	if p.my != nil {
		return tx.my != "" && p.my.has(tx.my)
	}
	return tx.my == "" && p.maria.covers(tx.gtid)
}

// coversID reports whether the position holds the transaction whose
// GTID, as a read gives it (binlog.GTID.ID), is g.
func (p afterPos) coversID(g string) bool {
	if p.my != nil {
		return p.my.has(g)
	}
	st, err := parseState(g)
	if err != nil || len(st) != 1 {
		return false
	}
	for _, x := range st {
		return p.maria.covers(x)
	}
	return false
}
