package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// ResumeState is the progress of an initial snapshot, saved with every batch the sink
// commits (in the checkpoint file, or in the target's binlogcdc.snapshot
// in the same transaction as the rows), so that a run killed inside it
// resumes from the last finished chunk. The read view dies with the
// process: the rest is read in a new consistent snapshot at a later
// position, and the stream that follows starts at Start and reconciles
// each change with Coverage (pipeline.Coverage.Reconcile) until it is
// past every chunk's position.
type ResumeState struct {
	// Done: every table is copied; what is left is the window between
	// Start and the last chunk's position, which the stream reconciles.
	Done bool `json:"done"`
	// Start is the first snapshot's position (where the stream starts),
	// StartGTID the GTID position there and StartTime its time.
	Start     change.Position `json:"-"`
	StartGTID string          `json:"start_gtid,omitempty"`
	StartTime time.Time       `json:"start_time"`
	// OutputSize is the size -o had before the snapshot (a snapshot taken
	// again from the start cuts it back to it).
	OutputSize int64 `json:"output_size"`
	// Rows counts the snapshot rows committed so far (progress, and the
	// snapshot rows' "row" numbers).
	Rows uint64 `json:"rows"`
	// Schemas holds a fingerprint of each table's schema as the first
	// chunk of it was read: a resume refuses to continue a table whose
	// schema changed since.
	Schemas map[string]string `json:"schemas,omitempty"`
	// Coverage is what the consumer holds, by table, and as of which
	// position.
	Coverage *pipeline.Coverage `json:"coverage"`
}

// MarshalJSON writes the state.
func (s *ResumeState) MarshalJSON() ([]byte, error) {
	type plain ResumeState
	return json.Marshal(struct {
		*plain
		File   string `json:"start_file"`
		Offset uint64 `json:"start_offset"`
	}{(*plain)(s), s.Start.File, s.Start.Offset})
}

// UnmarshalJSON reads a state back.
func (s *ResumeState) UnmarshalJSON(data []byte) error {
	type plain ResumeState
	var in struct {
		*plain
		File   string `json:"start_file"`
		Offset uint64 `json:"start_offset"`
	}
	in.plain = (*plain)(s)
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("snapshot state: %w", err)
	}
	s.Start = change.Position{File: in.File, Offset: in.Offset}
	if s.Schemas == nil {
		s.Schemas = map[string]string{}
	}
	if s.Start.File == "" || s.Coverage == nil {
		return fmt.Errorf("snapshot state: no start position or coverage")
	}
	return nil
}

// NewResumeState starts the state of a snapshot at pos that copies tables.
func NewResumeState(pos Position, outputSize int64) *ResumeState {
	return &ResumeState{Start: pos.Pos(), StartGTID: pos.GTID, StartTime: pos.Time, OutputSize: outputSize,
		Schemas: map[string]string{}, Coverage: pipeline.NewCoverage()}
}

func tableKey(db, name string) string { return strings.ToLower(db) + "." + strings.ToLower(name) }

// fingerprint sums what the rows of a table depend on: its columns (name,
// type, metadata, signedness, collation, labels) and its key.
func fingerprint(t *tablemap.Table) string {
	h := sha256.New()
	for _, c := range t.Columns {
		fmt.Fprintf(h, "%s|%d|%d|%d|%d|%d|%d|%v|%d|%q|%q|%d|%v;", strings.ToLower(c.Name), c.Type, c.Meta, c.Length, c.Precision, c.Scale, c.FSP,
			c.Unsigned, c.Collation, c.EnumValues, c.SetValues, c.GeometryType, c.Compressed)
	}
	fmt.Fprintf(h, "pk %v %v", t.PrimaryKey, t.PrimaryKeyPrefix)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// keyOf returns a copy of the key of row.
func keyOf(t *tablemap.Table, row change.Row) []change.Value {
	k := make([]change.Value, len(t.PrimaryKey))
	for i, c := range t.PrimaryKey {
		k[i] = row[c].Clone()
	}
	return k
}

// keyWhere is the condition "key > after" for a resumed table, as
// (a > x) OR (a = x AND b > y) … (which the optimizer reads as ranges of
// the key, unlike a row constructor on MariaDB): the condition an
// incremental snapshot's chunk reads with (sqltext.KeyRange).
func keyWhere(t *tablemap.Table, after []change.Value) (string, error) {
	return sqltext.KeyRange(t, after, ">", false)
}
