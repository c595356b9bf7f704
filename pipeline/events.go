package pipeline

import (
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
	e, err := d.parse(ev)
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
