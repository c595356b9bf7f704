package snapshot

import (
	"strings"

	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// chunkable reports whether t can be read in key ranges: it has a
// primary key of whole columns whose order the client reproduces exactly
// (pipeline.CompareKeys). Text in a collation, floats, MariaDB's UUID
// (which the server orders by its time fields) and prefix parts are not:
// such a table is read whole, in one chunk.
func chunkable(ts *tableSchema) bool {
	t := ts.table
	if len(t.PrimaryKey) == 0 {
		return false
	}
	for i, k := range t.PrimaryKey {
		if i < len(t.PrimaryKeyPrefix) && t.PrimaryKeyPrefix[i] > 0 {
			return false
		}
		if !orderedColumn(&t.Columns[k], ts.showTypes[k]) {
			return false
		}
	}
	return true
}

func orderedColumn(c *tablemap.Column, showType string) bool {
	base := strings.ToLower(showType)
	if i := strings.IndexAny(base, "( "); i >= 0 {
		base = base[:i]
	}
	switch base {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year", "bit",
		"decimal", "numeric", "date", "datetime", "timestamp", "time",
		"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "inet4", "inet6",
		"enum", "set":
		return true
	}
	return false
}

// coverageKey is the key the coverage keeps for a chunk's table: its
// key columns' names, nil for a table read whole.
func coverageKey(ch *Chunk) []string {
	if ch.Whole {
		return nil
	}
	return append([]string(nil), ch.Table.PKNames...)
}

// addChunk records a chunk in cov (the table's first chunk fixes its key).
func addChunk(cov *pipeline.Coverage, ch *Chunk) error {
	t := ch.Table
	if tc := cov.Table(t.DB, t.Name); tc == nil || len(tc.Chunks) == 0 {
		cov.SetTable(t.DB, t.Name, coverageKey(ch))
	}
	return cov.AddChunk(t.DB, t.Name, pipeline.Chunk{Lo: ch.Lo, Hi: ch.Hi, Pos: ch.Pos.Pos()})
}
