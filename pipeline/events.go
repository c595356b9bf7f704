package pipeline

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
)

// eventDecoder decodes the non-rows events with go-mysql's parser, turning
// its panics on malformed input into errors.
type eventDecoder struct {
	parser        *replication.BinlogParser
	fde           *replication.FormatDescriptionEvent
	serverVersion string
	mariadb       bool
}

func (d *eventDecoder) parse(ev *binlog.Event) (e replication.Event, err error) {
	if d.parser == nil {
		return nil, fmt.Errorf("%v event before any FORMAT_DESCRIPTION_EVENT", ev.Type())
	}
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("malformed %v event: %v", ev.Type(), r)
		}
	}()
	be, err := d.parser.Parse(ev.Raw)
	if err != nil {
		// go-mysql's EventError prints the whole header struct and every
		// byte of the event; the position and type say where it is.
		var ee *replication.EventError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("malformed %v event of %d bytes: %s", ev.Type(), len(ev.Raw), ee.Err)
		}
		return nil, err
	}
	return be.Event, nil
}

func (d *eventDecoder) format(ev *binlog.Event) error {
	if ev.InPayload {
		return nil
	}
	p := replication.NewBinlogParser()
	p.SetVerifyChecksum(false) // the source verified it
	old := d.parser
	d.parser = p
	// go-mysql's FormatDescriptionEvent keeps EventTypeHeaderLengths as a
	// slice of the bytes it decoded, and the parser keeps the event. A
	// FileSource reuses its buffer for the next events, so without a copy
	// the post-header lengths (and with them tableIDSize) would change
	// under us with every event read: a rows event whose byte 76+type-1
	// happened to be 6 was read with 4-byte table ids.
	fdeEv := *ev
	fdeEv.Raw = append([]byte(nil), ev.Raw...)
	e, err := d.parse(&fdeEv)
	if err != nil {
		d.parser = old
		return err
	}
	d.fde = e.(*replication.FormatDescriptionEvent)
	d.serverVersion = strings.TrimRight(string(d.fde.ServerVersion), "\x00")
	d.mariadb = strings.Contains(strings.ToLower(d.serverVersion), "mariadb")
	if d.mariadb {
		p.SetFlavor("mariadb")
	} else {
		p.SetFlavor("mysql")
	}
	return nil
}

// tableIDSize is 4 for event types whose post-header is 6 bytes (MySQL
// 5.1.15 and older), else 6.
func (d *eventDecoder) tableIDSize(t replication.EventType) int {
	if d.fde != nil && int(t) >= 1 && int(t) <= len(d.fde.EventTypeHeaderLengths) && d.fde.EventTypeHeaderLengths[t-1] == 6 {
		return 4
	}
	return 6
}

type gtidInfo struct {
	id         string
	commitTS   time.Time
	standalone bool
}

func (d *eventDecoder) gtid(ev *binlog.Event) (gtidInfo, error) {
	e, err := d.parse(ev)
	if err != nil {
		return gtidInfo{}, err
	}
	var g gtidInfo
	switch e := e.(type) {
	case *replication.GTIDEvent:
		g = mysqlGTID(e, "")
	case *replication.GtidTaggedLogEvent:
		g = mysqlGTID(&e.GTIDEvent, e.Tag.String())
	case *replication.MariadbGTIDEvent:
		g.id = fmt.Sprintf("%d-%d-%d", e.GTID.DomainID, e.GTID.ServerID, e.GTID.SequenceNumber)
		g.standalone = e.IsStandalone()
	default:
		return g, fmt.Errorf("unexpected %T for a GTID event", e)
	}
	return g, nil
}

func mysqlGTID(e *replication.GTIDEvent, tag string) gtidInfo {
	var g gtidInfo
	if e.ImmediateCommitTimestamp != 0 {
		g.commitTS = time.UnixMicro(int64(e.ImmediateCommitTimestamp)).UTC()
	}
	anonymous := true
	for _, b := range e.SID {
		if b != 0 {
			anonymous = false
		}
	}
	if anonymous || len(e.SID) != 16 {
		return g
	}
	h := hex.EncodeToString(e.SID)
	uuid := h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	if tag != "" {
		uuid += ":" + tag
	}
	g.id = uuid + ":" + strconv.FormatInt(e.GNO, 10)
	return g
}

type queryKind uint8

const (
	queryOther queryKind = iota // DDL and other statements that commit on their own
	queryBegin
	queryCommit
	querySavepoint
	queryDML
)

type query struct {
	kind queryKind
	db   string
	sql  string
}

func (d *eventDecoder) query(ev *binlog.Event) (query, error) {
	if ev.Type() == replication.MARIADB_QUERY_COMPRESSED_EVENT {
		if err := checkCompressedQuery(ev.Body); err != nil {
			return query{}, err
		}
	}
	e, err := d.parse(ev)
	if err != nil {
		return query{}, err
	}
	qe, ok := e.(*replication.QueryEvent)
	if !ok {
		return query{}, errors.New("QUERY event did not decode as one")
	}
	q := query{db: string(qe.Schema), sql: string(qe.Query)}
	switch w := firstWord(q.sql); w {
	case "BEGIN", "XA":
		if w == "XA" {
			// XA START opens; XA END/PREPARE/COMMIT/ROLLBACK are bookkeeping
			// inside the group that an XID or XA_PREPARE event ends.
			if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(q.sql)), "XA START") {
				q.kind = queryBegin
			} else if u := strings.ToUpper(strings.TrimSpace(q.sql)); strings.HasPrefix(u, "XA COMMIT") || strings.HasPrefix(u, "XA ROLLBACK") {
				q.kind = queryCommit
			} else {
				q.kind = querySavepoint
			}
		} else {
			q.kind = queryBegin
		}
	case "COMMIT":
		q.kind = queryCommit
	case "ROLLBACK":
		if strings.Contains(strings.ToUpper(q.sql), " TO ") {
			q.kind = querySavepoint
		} else {
			q.kind = queryCommit
		}
	case "SAVEPOINT", "RELEASE":
		q.kind = querySavepoint
	case "INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD":
		q.kind = queryDML
	}
	return q, nil
}

// maxQuery bounds a compressed statement's declared size (MariaDB's
// max_allowed_packet cannot exceed 1 GiB).
const maxQuery = 1 << 30

// checkCompressedQuery checks the size that a MariaDB
// QUERY_COMPRESSED_EVENT (log_bin_compress=ON) declares for its statement
// before go-mysql allocates that much: it trusts the field, so a damaged
// event could claim gigabytes.
//
//	# bytes   field
//	4+4       thread id, execution time
//	1         schema length s
//	2         error code
//	2         status vars length v
//	v, s, 1   status vars, schema, NUL
//	1         0x80 | algorithm<<4 | n (algorithm 0 = zlib; n = 1..4)
//	n         uncompressed length, big-endian
//	rest      zlib stream
func checkCompressedQuery(body []byte) error {
	if len(body) < 13 {
		return errors.New("compressed QUERY event cut short")
	}
	p := 13 + int(binary.LittleEndian.Uint16(body[11:])) + int(body[8]) + 1
	if p >= len(body) {
		return errors.New("compressed QUERY event cut short before its statement")
	}
	h := body[p]
	n := int(h & 0x07)
	if h&0x80 == 0 || (h>>4)&0x07 != 0 || n < 1 || n > 4 || len(body) < p+1+n {
		return fmt.Errorf("compressed QUERY event: header %#x is not zlib with a 1-4 byte length", h)
	}
	var size uint64
	for _, b := range body[p+1 : p+1+n] {
		size = size<<8 | uint64(b)
	}
	// zlib cannot inflate by more than about 1032:1.
	if rest := uint64(len(body) - p - 1 - n); size > maxQuery || size > rest*1100 {
		return fmt.Errorf("compressed QUERY event claims a %d-byte statement in %d bytes", size, rest)
	}
	return nil
}

// firstWord returns the statement's first keyword, upper-cased, skipping
// white space and /* comments */.
func firstWord(sql string) string {
	s := sql
	for {
		s = strings.TrimLeft(s, " \t\r\n(")
		if strings.HasPrefix(s, "/*") {
			end := strings.Index(s, "*/")
			if end < 0 {
				return ""
			}
			s = s[end+2:]
			continue
		}
		if strings.HasPrefix(s, "#") || strings.HasPrefix(s, "-- ") {
			nl := strings.IndexByte(s, '\n')
			if nl < 0 {
				return ""
			}
			s = s[nl+1:]
			continue
		}
		break
	}
	end := strings.IndexAny(s, " \t\r\n(;")
	if end < 0 {
		end = len(s)
	}
	return strings.ToUpper(s[:end])
}

func (d *eventDecoder) tableMap(ev *binlog.Event) (*replication.TableMapEvent, error) {
	e, err := d.parse(ev)
	if err != nil {
		return nil, err
	}
	te, ok := e.(*replication.TableMapEvent)
	if !ok {
		return nil, errors.New("TABLE_MAP event did not decode as one")
	}
	return te, nil
}
