package recovery

import (
	"context"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/sqllex"
	"github.com/binlogcdc/binlogcdc/schemahist"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Event is a DDL statement read from the binlog.
type Event struct {
	Pos  change.Position
	Time time.Time // the event's timestamp (whole seconds, UTC)
	DB   string    // the statement's default database
	SQL  string
	// SQLMode is the session's sql_mode bits (HasSQLMode: the event
	// carries it).
	SQLMode    uint64
	HasSQLMode bool
	// CollServer, CollDatabase: the session's collation_server and
	// collation_database (0: not in the event).
	CollServer, CollDatabase uint32
	TimeZone                 string // the session's time_zone, when the statement used it
}

// EndKind says how an incarnation ended.
type EndKind uint8

const (
	StillExists     EndKind = iota // not ended in the binlogs read
	Dropped                        // DROP TABLE
	Truncated                      // TRUNCATE TABLE (a new, empty incarnation follows)
	DatabaseDropped                // DROP DATABASE of its database
	Replaced                       // CREATE OR REPLACE TABLE (or a CREATE TABLE over it)
)

func (k EndKind) String() string {
	return [...]string{"still exists", "DROP TABLE", "TRUNCATE", "DROP DATABASE", "CREATE OR REPLACE"}[k]
}

// Destroyed reports whether the incarnation's rows are gone: it was
// dropped, truncated or replaced.
func (k EndKind) Destroyed() bool { return k != StillExists }

// Name is one name an incarnation had, from the statement that gave it
// (nil: its creation, or before the binlogs) to the one that took it away.
type Name struct {
	DB, Table string
	From, To  *Event
}

// span is the interval of binlog positions in which an object held a
// Name: rows events at positions in (from, to) are its rows.
type span struct {
	key      string
	DB, Name string
	from     change.Position // the zero Position: before the binlogs
	to       change.Position
	open     bool
	fromEv   *Event
	toEv     *Event
	obj      *Incarnation
}

func (s *span) holds(pos change.Position) bool {
	return before(s.from, pos) && (s.open || before(pos, s.to))
}

// before reports whether a comes before b (change.Position.Compare: by
// file sequence, an archive's later server histories after the earlier).
func before(a, b change.Position) bool { return a.Before(b) }

type alterEvent struct {
	ev   *Event
	info *schemahist.AlterInfo
}

// Incarnation is one life of a table: from its CREATE (or from before
// the binlogs) to its DROP, TRUNCATE, the DROP DATABASE of its database,
// or the end of the binlogs. Renames do not end it: it keeps its rows
// under its new names.
type Incarnation struct {
	N int // 1-based, in the order of History.Incarnations

	// Created is the statement that created it; nil when it existed before
	// the binlogs (or was first seen in a TABLE_MAP without a CREATE that
	// binlogcdc recognised: then FirstSeen is set).
	Created   *Event
	CreatedBy string // "CREATE TABLE", "CREATE TABLE … LIKE db.t", "CREATE TABLE … SELECT", "TRUNCATE"
	FirstSeen *change.Position

	Ended *Event
	End   EndKind

	Inserts, Updates, Deletes uint64

	id     int
	spans  []*span
	alters []alterEvent

	// The CREATE TABLE statement, when it defines the columns itself.
	createSQL  string
	createName sqllex.TableName
	createDB   string
	// inherit is the incarnation a TRUNCATE replaced: same columns.
	inherit *Incarnation
	// alteredBefore: the incarnation a TRUNCATE replaced had been altered,
	// so its CREATE TABLE statement no longer describes the columns.
	alteredBefore bool

	lastTable *tablemap.Table // the last TABLE_MAP of its rows (pass B)
	lastPos   change.Position
	// maps are its rows' TABLE_MAPs where they changed, in order (pass B).
	maps []seenMap
}

// Names lists the names the incarnation had, in order.
func (inc *Incarnation) Names() []Name {
	out := make([]Name, len(inc.spans))
	for i, s := range inc.spans {
		out[i] = Name{DB: s.DB, Table: s.Name, From: s.fromEv, To: s.toEv}
	}
	return out
}

// Alters lists the ALTER TABLE (and CREATE/DROP INDEX) statements that
// changed it.
func (inc *Incarnation) Alters() []*Event {
	out := make([]*Event, len(inc.alters))
	for i, a := range inc.alters {
		out[i] = a.ev
	}
	return out
}

// InBinlogs reports whether it was created inside the binlogs read.
func (inc *Incarnation) InBinlogs() bool { return inc.Created != nil }

// current is the span it holds now (the last one).
func (inc *Incarnation) current() *span { return inc.spans[len(inc.spans)-1] }

// nameKey is how names are compared: case-insensitively, since servers
// with lower_case_table_names=1 log statements in the user's spelling but
// TABLE_MAPs in lower case.
func nameKey(db, table string) string {
	return strings.ToLower(db) + "\x00" + strings.ToLower(table)
}

// catalog is what pass A learns: every table object's names over time.
type catalog struct {
	objects []*Incarnation
	current map[string]*Incarnation // name → the object holding it now
	spans   map[string][]*span      // name → every span of it, in order
	lastEnd map[string]*span        // name → the last closed span

	serverVersion string
	mariadb       bool
	first         change.Position // the first event read
}

func newCatalog() *catalog {
	return &catalog{current: map[string]*Incarnation{}, spans: map[string][]*span{}, lastEnd: map[string]*span{}}
}

func (c *catalog) newObject(created *Event, by string, db, name string, from change.Position) *Incarnation {
	o := &Incarnation{id: len(c.objects) + 1, Created: created, CreatedBy: by}
	c.objects = append(c.objects, o)
	c.open(o, db, name, from, created)
	return o
}

func (c *catalog) open(o *Incarnation, db, name string, from change.Position, ev *Event) {
	key := nameKey(db, name)
	s := &span{key: key, DB: db, Name: name, from: from, open: true, fromEv: ev, obj: o}
	o.spans = append(o.spans, s)
	c.spans[key] = append(c.spans[key], s)
	if prev := c.current[key]; prev != nil && prev != o {
		// The name was taken (our picture of it was wrong): close it.
		c.closeSpan(prev, ev)
	}
	c.current[key] = o
}

func (c *catalog) closeSpan(o *Incarnation, ev *Event) {
	s := o.current()
	if !s.open {
		return
	}
	s.open, s.to, s.toEv = false, ev.Pos, ev
	if c.current[s.key] == o {
		delete(c.current, s.key)
	}
	c.lastEnd[s.key] = s
}

func (c *catalog) end(o *Incarnation, ev *Event, kind EndKind) {
	c.closeSpan(o, ev)
	o.Ended, o.End = ev, kind
}

// implicit returns the object that must have held db.Name, which a
// statement or a TABLE_MAP at pos refers to while no known object holds it.
func (c *catalog) implicit(db, name string, pos change.Position) *Incarnation {
	key := nameKey(db, name)
	last := c.lastEnd[key]
	if last == nil {
		// Never seen before: it existed before the binlogs.
		o := c.newObject(nil, "", db, name, change.Position{})
		return o
	}
	// It existed once, ended, and is in use again without a CREATE that we
	// recognised.
	o := c.newObject(nil, "", db, name, last.to)
	o.FirstSeen = &pos
	o.spans[0].fromEv = nil
	return o
}

func (c *catalog) holder(db, name string, pos change.Position, create bool) *Incarnation {
	if o := c.current[nameKey(db, name)]; o != nil {
		return o
	}
	if !create {
		return nil
	}
	return c.implicit(db, name, pos)
}

// seen records a TABLE_MAP of db.Name at pos.
func (c *catalog) seen(db, name string, pos change.Position) {
	c.holder(db, name, pos, true)
}

// ddl applies one DDL statement.
func (c *catalog) ddl(ev *Event) {
	for _, a := range schemahist.ParseDDL(ev.SQL, ev.DB) {
		switch a.Kind {
		case schemahist.ActCreate:
			if cur := c.holder(a.T.DB, a.T.Name, ev.Pos, false); cur != nil {
				if a.IfNotExists && !a.OrReplace {
					continue // a no-op: the table exists
				}
				c.end(cur, ev, Replaced)
			}
			by := "CREATE TABLE"
			switch {
			case a.Like != "":
				by = "CREATE TABLE … LIKE " + a.Like
			case !a.Usable:
				by = "CREATE TABLE … SELECT"
			}
			o := c.newObject(ev, by, a.T.DB, a.T.Name, ev.Pos)
			if a.Usable {
				o.createSQL, o.createName, o.createDB = ev.SQL, a.T, ev.DB
			}
		case schemahist.ActDrop:
			cur := c.holder(a.T.DB, a.T.Name, ev.Pos, !a.IfExists)
			if cur != nil {
				c.end(cur, ev, Dropped)
			}
		case schemahist.ActTruncate:
			cur := c.holder(a.T.DB, a.T.Name, ev.Pos, true)
			s := cur.current()
			c.end(cur, ev, Truncated)
			o := c.newObject(ev, "TRUNCATE", s.DB, s.Name, ev.Pos)
			o.inherit = cur
			o.createSQL, o.createName, o.createDB = cur.createSQL, cur.createName, cur.createDB
			o.alteredBefore = cur.alteredBefore || len(cur.alters) > 0
		case schemahist.ActRename:
			cur := c.holder(a.T.DB, a.T.Name, ev.Pos, !a.IfExists)
			if cur != nil {
				c.closeSpan(cur, ev)
				c.open(cur, a.To.DB, a.To.Name, ev.Pos, ev)
			}
		case schemahist.ActAlter:
			cur := c.holder(a.T.DB, a.T.Name, ev.Pos, !a.IfExists)
			if cur != nil {
				cur.alters = append(cur.alters, alterEvent{ev: ev, info: a.Alter})
			}
		case schemahist.ActDropDB:
			db := strings.ToLower(a.T.DB)
			var victims []*Incarnation
			for _, o := range c.current {
				if strings.ToLower(o.current().DB) == db {
					victims = append(victims, o)
				}
			}
			sort.Slice(victims, func(i, j int) bool { return victims[i].id < victims[j].id })
			for _, o := range victims {
				c.end(o, ev, DatabaseDropped)
			}
		}
	}
}

// objectAt returns the object that held db.Name at pos, or nil.
func (c *catalog) objectAt(db, name string, pos change.Position) *Incarnation {
	spans := c.spans[nameKey(db, name)]
	for i := len(spans) - 1; i >= 0; i-- {
		if spans[i].holds(pos) {
			return spans[i].obj
		}
	}
	return nil
}

// scan is pass A: it reads every event, without decoding rows, and
// builds the catalog from the DDL statements and the table names of the
// TABLE_MAP events.
func scan(ctx context.Context, o Options, start, stop change.Position) (*catalog, error) {
	src, err := o.open(ctx, start)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	c := newCatalog()
	var d binlog.EventDecoder
	inTx := false   // inside a transaction opened by a GTID or BEGIN
	skipTx := false // that transaction started before o.StartTime
	firstSet := false
	for {
		ev, err := src.Next(ctx)
		if err == io.EOF {
			return c, nil
		}
		if err != nil {
			return nil, err
		}
		if !firstSet {
			c.first, firstSet = ev.Pos, true
		}
		t := ev.Type()
		evTime := time.Unix(int64(ev.Header.Timestamp), 0).UTC()
		// stopHere: at a transaction's start, the stop bound (position or
		// --stop-datetime) is reached; the pipeline stops there too. It
		// also notes whether that transaction started before StartTime
		// (skipped, as the pipeline skips it).
		stopHere := func() bool {
			skipTx = !o.StartTime.IsZero() && evTime.Before(o.StartTime)
			return (stop.File != "" && !before(ev.Pos, stop)) || (!o.StopTime.IsZero() && !evTime.Before(o.StopTime))
		}
		switch t {
		case replication.FORMAT_DESCRIPTION_EVENT:
			if ev.InPayload {
				continue
			}
			if err := d.Format(ev); err != nil {
				return nil, &binlog.Error{Pos: ev.Pos, Err: err}
			}
			c.serverVersion, c.mariadb = d.ServerVersion, d.MariaDB
		case replication.GTID_EVENT, replication.ANONYMOUS_GTID_EVENT, replication.GTID_TAGGED_LOG_EVENT, replication.MARIADB_GTID_EVENT:
			if stopHere() {
				return c, nil
			}
			inTx = true
			if o.SkipGTID != nil && t == replication.MARIADB_GTID_EVENT {
				g, err := d.GTID(ev)
				if err != nil {
					return nil, &binlog.Error{Pos: ev.Pos, Err: err}
				}
				skipTx = skipTx || o.SkipGTID(ev.Pos, g.ID)
			}
		case replication.XID_EVENT, replication.XA_PREPARE_LOG_EVENT:
			inTx = false
		case replication.QUERY_EVENT, replication.MARIADB_QUERY_COMPRESSED_EVENT:
			if ev.InPayload {
				continue // BEGIN of a compressed transaction
			}
			q, err := d.Query(ev)
			if err != nil {
				return nil, &binlog.Error{Pos: ev.Pos, Err: err}
			}
			switch firstWord(q.SQL) {
			case "XA":
				// XA START opens a transaction; XA END/PREPARE/COMMIT are
				// bookkeeping inside or after one.
				if toks := sqllex.Lex(q.SQL[:min(len(q.SQL), 64)]); len(toks) > 1 && toks[1].Is("START") {
					if !inTx && stopHere() {
						return c, nil
					}
					inTx = true
				}
				continue
			case "BEGIN", "SAVEPOINT", "RELEASE":
				if !inTx && stopHere() {
					return c, nil
				}
				inTx = true
				continue
			case "COMMIT", "ROLLBACK":
				inTx = false
				continue
			case "INSERT", "UPDATE", "DELETE", "REPLACE", "LOAD", "SET", "":
				continue
			}
			if !inTx && stopHere() {
				return c, nil
			}
			inTx = false // DDL commits on its own
			if skipTx {
				continue
			}
			c.ddl(&Event{Pos: ev.Pos, Time: time.Unix(int64(ev.Header.Timestamp), 0).UTC(), DB: q.DB, SQL: q.SQL, SQLMode: q.SQLMode, HasSQLMode: q.HasSQLMode,
				CollServer: q.CollationServer, CollDatabase: q.CollationDatabase, TimeZone: q.TimeZone})
		case replication.TABLE_MAP_EVENT:
			if !inTx && stopHere() {
				return c, nil
			}
			if skipTx {
				continue
			}
			_, db, name, err := tablemap.PeekName(ev.Body, d.TableIDSize(t))
			if err != nil {
				return nil, &binlog.Error{Pos: ev.Pos, Err: err}
			}
			c.seen(db, name, ev.Pos)
		}
	}
}

// firstWord returns the statement's first keyword, upper-cased. It lexes
// only the statement's head (all of it when a long comment fills that).
func firstWord(sql string) string {
	toks := sqllex.Lex(sql[:min(len(sql), 256)])
	if len(toks) == 0 && len(sql) > 256 {
		toks = sqllex.Lex(sql)
	}
	if len(toks) == 0 || toks[0].Kind != sqllex.Word {
		return ""
	}
	return strings.ToUpper(toks[0].Text)
}
