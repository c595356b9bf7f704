package mysqlsink

import (
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
)

// Batched deletes. Each DELETE is a statement of its own on the target,
// whose fixed cost (about 40 µs here) is ten times the row's. So a run of
// deletes by a one-column primary key goes, within a pipeline
// (pipeline.go), as one
//
//	DELETE FROM t WHERE pk IN (?,?,…)
//
// of up to 128 rows, on a table that has no trigger, no foreign key either
// way and no unique key besides the primary key (as for batched updates:
// checkTable): each row then goes exactly as its own DELETE would, with
// nothing else to fire or cascade, and the order within the batch does not
// matter. The check is exact: the target counts the rows it deleted, so
// the statement passes only when that is its number of keys; a key that
// matches nothing (a conflict), or the same key twice (the second DELETE
// would match nothing), makes it fewer. Then the pipeline is undone
// (ROLLBACK TO SAVEPOINT) and run again one statement at a time, which
// reports the conflict exactly as without batching. Only with
// --on-conflict error (where pipelines run); --bulk-load=false turns it
// off. Keys are integers or strings (text or binary), compared with IN as
// = compares them one by one.
const (
	deleteMinRows = 8
	deleteMaxRows = 128
)

// deletable reports whether the delete o may share a DELETE … IN (see
// above).
func (s *Sink) deletable(o *op) bool {
	c, p := &o.c, o.plan
	if c.Op != change.Delete || s.opts.NoBulkLoad || p.versioned() || !o.key.PK || len(o.key.Cols) != 1 {
		return false
	}
	k := o.key.Cols[0]
	if k >= len(c.Before) {
		return false
	}
	switch c.Before[k].Kind() {
	case change.Int, change.Uint, change.String, change.Bytes:
	default:
		return false
	}
	return s.batchSafe(o) && s.keyTypeSafe(o)
}

// keyTypeSafe reports whether the target's key column compares with the
// binlog's key values as its primary key does, so that each key matches
// one row at most and the count of rows deleted proves every key matched
// (asked once per plan). An integer compared with a text column compares
// as a number: 1 matches both '1' and '01' there, and a batch could
// delete a row too many where another is missing with the right count.
// A target whose key column differs in type so keeps one DELETE per row.
func (s *Sink) keyTypeSafe(o *op) bool {
	p, t := o.plan, o.c.Table
	if p.deleteKey == 0 && s.askLater() {
		return false
	}
	if p.deleteKey == 0 {
		p.deleteKey = -1
		k := o.key.Cols[0]
		r, err := s.conn.Execute("SELECT LOWER(DATA_TYPE) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = ?",
			t.DB, t.Name, t.Columns[k].Name)
		if err != nil {
			return false
		}
		typ := ""
		if r.RowNumber() == 1 {
			typ, _ = r.GetString(0, 0)
		}
		r.Close()
		switch o.c.Before[k].Kind() {
		case change.Int, change.Uint:
			if integerTypes[typ] {
				p.deleteKey = 1
			}
		case change.String, change.Bytes:
			if stringTypes[typ] {
				p.deleteKey = 1
			}
		}
	}
	return p.deleteKey > 0
}

var (
	integerTypes = map[string]bool{"tinyint": true, "smallint": true, "mediumint": true, "int": true, "bigint": true}
	stringTypes  = map[string]bool{"char": true, "varchar": true, "binary": true, "varbinary": true,
		"tinytext": true, "text": true, "mediumtext": true, "longtext": true,
		"tinyblob": true, "blob": true, "mediumblob": true, "longblob": true}
)

// batchSafe reports whether o's table may take batched statements: as
// checkTable says (asked once per plan).
func (s *Sink) batchSafe(o *op) bool {
	p, t := o.plan, o.c.Table
	if p.upsert == 0 && s.askLater() {
		return false
	}
	if p.upsert == 0 {
		ok, known := checkTable(s.conn, t.DB, t.Name, t.PKNames) // parallel_catalog.go
		if !known {
			return false
		}
		p.upsert = -1
		if ok {
			p.upsert = 1
		}
	}
	return p.upsert > 0
}

// deleteChunk is how many of the deletes at ops[0] go into one DELETE …
// IN: a power of two from deleteMinRows to deleteMaxRows; 0: none (ops[0]
// goes as a DELETE of its own).
func (s *Sink) deleteChunk(ops []op) int {
	o := &ops[0]
	if len(ops) < deleteMinRows || !s.deletable(o) {
		return 0
	}
	limit := min(deleteMaxRows, len(ops))
	j := 1
	for j < limit && ops[j].plan == o.plan && ops[j].fk == o.fk && s.deletable(&ops[j]) &&
		ops[j].key.Cols[0] == o.key.Cols[0] && ops[j].c.Before[o.key.Cols[0]].Kind() == o.c.Before[o.key.Cols[0]].Kind() {
		j++
	}
	k := 1
	for k*2 <= j {
		k *= 2
	}
	if k < deleteMinRows {
		return 0
	}
	return k
}

// buildDeleteIn writes the DELETE … IN of ops into s.b.
func (s *Sink) buildDeleteIn(ops []op) {
	o := &ops[0]
	t := o.c.Table
	k := o.key.Cols[0]
	s.b.Reset()
	s.b.SQL = append(s.b.SQL, "DELETE FROM "...)
	s.b.SQL = sqltext.AppendTableName(s.b.SQL, t.DB, t.Name)
	s.b.SQL = append(s.b.SQL, " WHERE "...)
	s.b.SQL = sqltext.AppendIdent(s.b.SQL, t.Columns[k].Name)
	s.b.SQL = append(s.b.SQL, " IN ("...)
	for i := range ops {
		if i > 0 {
			s.b.SQL = append(s.b.SQL, ',')
		}
		s.b.SQL = append(s.b.SQL, '?')
		s.b.Args = append(s.b.Args, ops[i].c.Before[k])
	}
	s.b.SQL = append(s.b.SQL, ')')
}
