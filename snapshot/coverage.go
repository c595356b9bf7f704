package snapshot

import (
	"github.com/binlogcdc/binlogcdc/pipeline"
)

// coverageKey is the key the coverage keeps for a chunk's table: its
// key columns' names, nil for a table read whole.
func coverageKey(ch *Chunk) []string {
	if ch.Whole {
		return nil
	}
	return append([]string(nil), ch.Table.PKNames...)
}

// addChunk records a chunk in cov (the table's first chunk fixes its
// key; the table stays Incremental or not).
func addChunk(cov *pipeline.Coverage, ch *Chunk) error {
	t := ch.Table
	if tc := cov.Table(t.DB, t.Name); tc == nil || len(tc.Chunks) == 0 {
		incremental := tc != nil && tc.Incremental
		cov.SetTable(t.DB, t.Name, coverageKey(ch)).Incremental = incremental
	}
	return cov.AddChunk(t.DB, t.Name, pipeline.Chunk{Lo: ch.Lo, Hi: ch.Hi, Pos: ch.Pos.Pos()})
}
