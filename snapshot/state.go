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

// orderedKey reports whether binlogcdc can reproduce the server's order of
// the table's key exactly (pipeline.CompareKeys), so that it can be copied
// and resumed in key-range chunks; otherwise it is copied and resumed as a
// whole. Exact: whole columns of integer types, YEAR, BIT, DECIMAL, DATE,
// DATETIME, TIMESTAMP, TIME, ENUM, SET, and binary strings (BINARY,
// VARBINARY). Not: text in any collation (PAD SPACE, case- and
// accent-folding), FLOAT/DOUBLE, UUID (MariaDB orders it by swapped
// segments), INET4/INET6, prefix parts, and tables without a key.
func orderedKey(ts *tableSchema) bool {
	t := ts.table
	if len(t.PrimaryKey) == 0 {
		return false
	}
	for i, k := range t.PrimaryKey {
		if t.PrimaryKeyPrefix[i] > 0 {
			return false
		}
		base := strings.ToLower(ts.showTypes[k])
		if j := strings.IndexAny(base, "( "); j >= 0 {
			base = base[:j]
		}
		switch base {
		case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year", "bit",
			"decimal", "numeric", "date", "datetime", "timestamp", "time", "enum", "set",
			"binary", "varbinary":
		default:
			return false
		}
	}
	return true
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
// the key, unlike a row constructor on MariaDB).
func keyWhere(t *tablemap.Table, after []change.Value) (string, error) {
	lits := make([]string, len(after))
	for i, v := range after {
		l, err := keyLiteral(v)
		if err != nil {
			return "", err
		}
		lits[i] = l
	}
	var ors []string
	for i := range after {
		var ands []string
		for j := 0; j < i; j++ {
			ands = append(ands, tablemap.QuoteIdent(t.Columns[t.PrimaryKey[j]].Name)+" = "+lits[j])
		}
		ands = append(ands, tablemap.QuoteIdent(t.Columns[t.PrimaryKey[i]].Name)+" > "+lits[i])
		ors = append(ors, "("+strings.Join(ands, " AND ")+")")
	}
	return strings.Join(ors, " OR "), nil
}

// keyLiteral writes a key value as SQL that compares with its column as
// the value does: ENUM and SET by their numbers, BIT as a number, binary
// strings as hex, temporal values as their text (the session is UTC).
func keyLiteral(v change.Value) (string, error) {
	switch v.Kind() {
	case change.Int:
		return fmt.Sprint(v.Int()), nil
	case change.Uint, change.Enum, change.Set:
		return fmt.Sprint(v.Uint()), nil
	case change.Decimal:
		for _, c := range v.Bytes() {
			if !(c >= '0' && c <= '9' || c == '-' || c == '.') {
				return "", fmt.Errorf("DECIMAL key %q", v.Bytes())
			}
		}
		return string(v.Bytes()), nil
	case change.Date, change.Datetime, change.Timestamp, change.Time:
		for _, c := range v.Bytes() {
			if !(c >= '0' && c <= '9' || c == '-' || c == '.' || c == ':' || c == ' ') {
				return "", fmt.Errorf("temporal key %q", v.Bytes())
			}
		}
		return "'" + string(v.Bytes()) + "'", nil
	case change.Bytes:
		if len(v.Bytes()) == 0 {
			return "''", nil
		}
		return "X'" + hex.EncodeToString(v.Bytes()) + "'", nil
	}
	return "", fmt.Errorf("a key value of kind %s", v.Kind())
}
