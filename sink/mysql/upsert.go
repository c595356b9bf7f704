package mysqlsink

import (
	"bytes"
	"slices"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
)

// Batched updates. Each UPDATE is a statement of its own on the target,
// whose fixed cost (opening the table, planning the lookup, the result
// packet) outweighs the row's. So a run of updates by primary key that
// keep the key and carry the whole row goes, within a pipeline
// (pipeline.go), as one
//
//	INSERT INTO t (cols) VALUES (…),(…),… ON DUPLICATE KEY UPDATE c = VALUES(c), …
//
// of up to 128 rows. On a table whose only unique key is that primary
// key, with no trigger and no foreign key either way (as the target's
// catalog says, checkTable), this writes exactly what the UPDATEs would,
// when every row exists: each row's key hits its row, whose columns
// become the after image. The check is exact: with CLIENT_FOUND_ROWS the
// server counts 2 for a row found and changed, 1 for a row inserted (the
// row was missing: a conflict) or found unchanged, so the statement
// passes only when it reports twice its rows. Otherwise the pipeline is
// undone (ROLLBACK TO SAVEPOINT) and run again one statement at a time,
// which reports a conflict, or applies the unchanged rows, exactly as
// without batching.
const (
	upsertMinRows = 8
	upsertMaxRows = 128
	upsertMaxSize = 64 << 10 // bytes of a row's values
)

// upsertable reports whether the update o may share an INSERT … ON
// DUPLICATE KEY UPDATE (see above).
func (s *Sink) upsertable(o *op) bool {
	c, p := &o.c, o.plan
	if c.Op != change.Update || s.opts.NoBulkLoad || p.versioned() || !o.key.PK || o.size > upsertMaxSize {
		return false
	}
	t := c.Table
	if len(t.PrimaryKey) == 0 || len(o.cols) != p.insCount(len(t.Columns)) || len(o.cols) <= len(t.PrimaryKey) {
		return false
	}
	for i, k := range t.PrimaryKey {
		if t.PrimaryKeyPrefix[i] != 0 || k >= len(c.Before) || k >= len(c.After) {
			return false
		}
		b, a := c.Before[k], c.After[k]
		if b.Kind() != a.Kind() || b.Uint() != a.Uint() || !bytes.Equal(b.Bytes(), a.Bytes()) || b.IsNull() {
			return false // the key changes (or is not there)
		}
	}
	for _, i := range o.cols {
		if sqltext.SetByNumber(c.After[i]) {
			// Bound as its bitmask, but VALUES(col) hands the row
			// its text, which loses the member '': an UPDATE.
			return false
		}
	}
	return s.batchSafe(o) // delete.go
}

// insCount is how many of n columns an INSERT writes.
func (p *plan) insCount(n int) int {
	if p.ins == nil {
		return n
	}
	k := 0
	for _, in := range p.ins {
		if in {
			k++
		}
	}
	return k
}

// upsertChunk is how many of the updates at ops[0] go into one INSERT …
// ON DUPLICATE KEY UPDATE: a power of two from upsertMinRows to
// upsertMaxRows, within maxPlaceholders and the statement size limit; 0:
// none (ops[0] goes as an UPDATE).
func (s *Sink) upsertChunk(ops []op) int {
	o := &ops[0]
	if len(ops) < upsertMinRows || !s.upsertable(o) {
		return 0
	}
	limit := min(upsertMaxRows, maxPlaceholders/len(o.cols), len(ops))
	j := 1
	for j < limit && ops[j].c.Op == change.Update && ops[j].plan == o.plan && ops[j].fk == o.fk &&
		slices.Equal(ops[j].cols, o.cols) && s.upsertable(&ops[j]) {
		j++
	}
	k := 1
	for k*2 <= j {
		k *= 2
	}
	for k >= upsertMinRows && batchBytes(ops[:k]) > s.batchBytesLimit() {
		k /= 2
	}
	if k < upsertMinRows {
		return 0
	}
	return k
}

// buildUpsert writes the INSERT … ON DUPLICATE KEY UPDATE of ops into s.b.
func (s *Sink) buildUpsert(ops []op) {
	o := &ops[0]
	t := o.c.Table
	s.b.Reset()
	s.b.InsertHead("INSERT", t, o.cols)
	for i := range ops {
		if i > 0 {
			s.b.SQL = append(s.b.SQL, ',')
		}
		s.b.InsertTuple(o.cols, ops[i].c.After)
	}
	s.b.SQL = append(s.b.SQL, " ON DUPLICATE KEY UPDATE "...)
	first := true
	for _, i := range o.cols {
		if slices.Contains(t.PrimaryKey, i) {
			continue
		}
		if !first {
			s.b.SQL = append(s.b.SQL, ',')
		}
		first = false
		s.b.SQL = sqltext.AppendIdent(s.b.SQL, t.Columns[i].Name)
		s.b.SQL = append(s.b.SQL, "=VALUES("...)
		s.b.SQL = sqltext.AppendIdent(s.b.SQL, t.Columns[i].Name)
		s.b.SQL = append(s.b.SQL, ')')
	}
}
