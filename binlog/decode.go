package binlog

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/go-mysql-org/go-mysql/replication"
)

// EventDecoder decodes the events around the rows (FORMAT_DESCRIPTION,
// GTID, QUERY, TABLE_MAP) with go-mysql's parser, turning its panics on
// malformed input into errors. Rows events are decoded by package rowevent.
type EventDecoder struct {
	parser *replication.BinlogParser
	fde    *replication.FormatDescriptionEvent
	// ServerVersion and MariaDB describe the server that wrote the events,
	// from the last FORMAT_DESCRIPTION_EVENT.
	ServerVersion string
	MariaDB       bool

	strs stringBlock // the GTID strings of MariaDB transactions
}

// Parse decodes any event.
func (d *EventDecoder) Parse(ev *Event) (e replication.Event, err error) {
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

// Format takes a FORMAT_DESCRIPTION_EVENT: it says how to decode what follows.
func (d *EventDecoder) Format(ev *Event) error {
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
	e, err := d.Parse(&fdeEv)
	if err != nil {
		d.parser = old
		return err
	}
	d.fde = e.(*replication.FormatDescriptionEvent)
	d.ServerVersion = strings.TrimRight(string(d.fde.ServerVersion), "\x00")
	d.MariaDB = strings.Contains(strings.ToLower(d.ServerVersion), "mariadb")
	if d.MariaDB {
		p.SetFlavor("mariadb")
	} else {
		p.SetFlavor("mysql")
	}
	return nil
}

// TableIDSize is 4 for event types whose post-header is 6 bytes (MySQL
// 5.1.15 and older), else 6.
func (d *EventDecoder) TableIDSize(t replication.EventType) int {
	if d.fde != nil && int(t) >= 1 && int(t) <= len(d.fde.EventTypeHeaderLengths) && d.fde.EventTypeHeaderLengths[t-1] == 6 {
		return 4
	}
	return 6
}

// GTID is what a GTID event says about its transaction.
type GTID struct {
	// ID is "uuid:n" or "uuid:tag:n" (MySQL), "domain-server-seq"
	// (MariaDB), or "" for MySQL's anonymous transactions.
	ID string
	// CommitTime is the immediate commit timestamp (MySQL 8.0.1+, in
	// microseconds), zero when the event lacks it.
	CommitTime time.Time
	// Standalone is set for MariaDB transactions without BEGIN/COMMIT
	// (a single DDL statement).
	Standalone bool
	// PreparedXA is set for MariaDB's group of an XA transaction that ends
	// in XA PREPARE (its outcome is logged later, in another group).
	PreparedXA bool
}

// GTID decodes a MySQL or MariaDB GTID event.
func (d *EventDecoder) GTID(ev *Event) (GTID, error) {
	if ev.Type() == replication.MARIADB_GTID_EVENT && d.parser != nil && len(ev.Body) >= 13 {
		return d.mariadbGTID(ev), nil
	}
	e, err := d.Parse(ev)
	if err != nil {
		return GTID{}, err
	}
	var g GTID
	switch e := e.(type) {
	case *replication.GTIDEvent:
		g = mysqlGTID(e, "")
	case *replication.GtidTaggedLogEvent:
		g = mysqlGTID(&e.GTIDEvent, e.Tag.String())
	case *replication.MariadbGTIDEvent:
		g.ID = fmt.Sprintf("%d-%d-%d", e.GTID.DomainID, e.GTID.ServerID, e.GTID.SequenceNumber)
		g.Standalone = e.IsStandalone()
		g.PreparedXA = e.Flags&mariadbFlPreparedXA != 0
	default:
		return g, fmt.Errorf("unexpected %T for a GTID event", e)
	}
	return g, nil
}

// mariadbGTID decodes a MariaDB GTID event directly: it comes with every
// transaction, and go-mysql's parser with fmt costs a tenth of reading a
// binlog of small transactions.
//
//	# bytes  field
//	8        sequence number
//	4        domain id
//	1        flags (FL_STANDALONE: no BEGIN/COMMIT)
//	…        commit id, XA data (not needed)
//
// The server id is the event header's.
func (d *EventDecoder) mariadbGTID(ev *Event) GTID {
	b := ev.Body
	var buf [64]byte
	id := strconv.AppendUint(buf[:0], uint64(binary.LittleEndian.Uint32(b[8:])), 10)
	id = append(id, '-')
	id = strconv.AppendUint(id, uint64(ev.Header.ServerID), 10)
	id = append(id, '-')
	id = strconv.AppendUint(id, binary.LittleEndian.Uint64(b), 10)
	return GTID{ID: d.strs.make(id), Standalone: b[12]&replication.BINLOG_MARIADB_FL_STANDALONE != 0,
		PreparedXA: b[12]&mariadbFlPreparedXA != 0}
}

// stringBlock makes small strings out of shared blocks: one allocation
// per few hundred strings instead of one each (a read of one-row
// transactions made one per transaction). The bytes of a string are never
// written again; a string that is kept keeps its block (4 KiB) alive.
// Not safe for concurrent use.
type stringBlock struct {
	buf []byte
}

func (b *stringBlock) make(s []byte) string {
	if len(s) == 0 || len(s) > 128 {
		return string(s)
	}
	if cap(b.buf)-len(b.buf) < len(s) {
		b.buf = make([]byte, 0, 4096)
	}
	n := len(b.buf)
	b.buf = append(b.buf, s...)
	out := unsafe.String(&b.buf[n], len(s))
	return out
}

func mysqlGTID(e *replication.GTIDEvent, tag string) GTID {
	var g GTID
	if e.ImmediateCommitTimestamp != 0 {
		g.CommitTime = time.UnixMicro(int64(e.ImmediateCommitTimestamp)).UTC()
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
	g.ID = uuid + ":" + strconv.FormatInt(e.GNO, 10)
	return g
}

// Query is a statement from a QUERY_EVENT.
type Query struct {
	DB, SQL string
	// SQLMode is the session's sql_mode bits when the statement ran
	// (the Q_SQL_MODE_CODE status variable); HasSQLMode is false when
	// the event does not carry it.
	SQLMode    uint64
	HasSQLMode bool
	// CollationServer and CollationDatabase are the session's
	// collation_server (Q_CHARSET_CODE) and collation_database
	// (Q_CHARSET_DATABASE_CODE, written when it is not the default
	// database's); 0 when the event does not carry them.
	CollationServer, CollationDatabase uint32
	// TimeZone is the session's time_zone (Q_TIME_ZONE_CODE), written
	// when the statement used it; "" otherwise.
	TimeZone string
	// StartMicros is the microseconds of the statement's start time,
	// whose seconds are the event header's timestamp: MariaDB's Q_HRNOW,
	// MySQL's Q_MICROSECONDS, written when the statement used them
	// (HasStartMicros).
	StartMicros    uint32
	HasStartMicros bool
}

// Query decodes a QUERY_EVENT (or MariaDB's compressed one) into the
// statement's default database and text.
func (d *EventDecoder) Query(ev *Event) (Query, error) {
	if ev.Type() == replication.MARIADB_QUERY_COMPRESSED_EVENT {
		if err := checkCompressedQuery(ev.Body); err != nil {
			return Query{}, err
		}
	}
	e, err := d.Parse(ev)
	if err != nil {
		return Query{}, err
	}
	qe, ok := e.(*replication.QueryEvent)
	if !ok {
		return Query{}, errors.New("QUERY event did not decode as one")
	}
	q := Query{DB: string(qe.Schema), SQL: string(qe.Query)}
	q.statusVars(qe.StatusVars)
	return q, nil
}

// statusVars reads the sql_mode, collations, time zone and start
// microseconds from a QUERY_EVENT's status variables. Servers write them first, in code order; the walk
// stops at a code it does not know the length of.
func (q *Query) statusVars(v []byte) {
	for len(v) > 0 {
		n := 0
		switch v[0] {
		case 0: // Q_FLAGS2_CODE
			n = 4
		case 1: // Q_SQL_MODE_CODE
			n = 8
			if len(v) >= 9 {
				q.SQLMode, q.HasSQLMode = binary.LittleEndian.Uint64(v[1:9]), true
			}
		case 3: // Q_AUTO_INCREMENT
			n = 4
		case 4: // Q_CHARSET_CODE: client charset, collation_connection, collation_server
			n = 6
			if len(v) >= 7 {
				q.CollationServer = uint32(binary.LittleEndian.Uint16(v[5:7]))
			}
		case 5, 6: // Q_TIME_ZONE_CODE, Q_CATALOG_NZ_CODE
			if len(v) < 2 {
				return
			}
			n = 1 + int(v[1])
			if v[0] == 5 && len(v) >= 1+n {
				q.TimeZone = string(v[2 : 1+n])
			}
		case 7: // Q_LC_TIME_NAMES_CODE
			n = 2
		case 8: // Q_CHARSET_DATABASE_CODE
			n = 2
			if len(v) >= 3 {
				q.CollationDatabase = uint32(binary.LittleEndian.Uint16(v[1:3]))
			}
		case 9: // Q_TABLE_MAP_FOR_UPDATE_CODE
			n = 8
		case 10: // Q_MASTER_DATA_WRITTEN_CODE
			n = 4
		case 11: // Q_INVOKER: user and host, each with a length byte
			if len(v) < 2 || len(v) < 3+int(v[1]) {
				return
			}
			n = 2 + int(v[1]) + int(v[2+int(v[1])])
		case 12: // Q_UPDATED_DB_NAMES: a count, then as many NUL-terminated names (none for 254)
			if len(v) < 2 {
				return
			}
			n = 1
			for k := 0; v[1] != 254 && k < int(v[1]); k++ {
				i := bytes.IndexByte(v[1+n:], 0)
				if i < 0 {
					return
				}
				n += i + 1
			}
		case 13, 128: // Q_MICROSECONDS (MySQL), Q_HRNOW (MariaDB)
			n = 3
			if len(v) >= 4 {
				q.StartMicros, q.HasStartMicros = uint32(v[1])|uint32(v[2])<<8|uint32(v[3])<<16, true
			}
		default:
			return
		}
		if len(v) < 1+n {
			return
		}
		v = v[1+n:]
	}
}

// TableMap decodes a TABLE_MAP_EVENT.
func (d *EventDecoder) TableMap(ev *Event) (*replication.TableMapEvent, error) {
	e, err := d.Parse(ev)
	if err != nil {
		return nil, err
	}
	te, ok := e.(*replication.TableMapEvent)
	if !ok {
		return nil, errors.New("TABLE_MAP event did not decode as one")
	}
	return te, nil
}

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

// maxQuery bounds a compressed statement's declared size (MariaDB's
// max_allowed_packet cannot exceed 1 GiB).
const maxQuery = 1 << 30

// mariadbFlPreparedXA is MariaDB's GTID flag FL_PREPARED_XA.
const mariadbFlPreparedXA = 64
