package pipeline

import (
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/binlogcdc/binlogcdc/change"
)

// The JSON form of a Coverage, saved with checkpoints:
//
//	{"tables":[{"db":"shop","table":"orders","key":["id"],
//	  "chunks":[{"hi":[{"kind":"int","num":5000}],"file":"binlog.000003","offset":1234},
//	            {"lo":[{"kind":"int","num":5000}],"file":"binlog.000004","offset":4}]}]}
//
// A key value is its kind and its number (integers, ENUM index, SET
// mask, TIMESTAMP seconds, as a uint64 bit pattern) and its bytes as hex.

type coverageJSON struct {
	Tables []tableCoverageJSON `json:"tables"`
}

type tableCoverageJSON struct {
	DB     string      `json:"db"`
	Table  string      `json:"table"`
	Key    []string    `json:"key,omitempty"`
	Chunks []chunkJSON `json:"chunks"`
	// Incremental: TableCoverage.Incremental (each kind is saved in its
	// own state, which also says it).
	Incremental bool `json:"incremental,omitempty"`
}

type chunkJSON struct {
	Lo     []keyValueJSON `json:"lo,omitempty"`
	Hi     []keyValueJSON `json:"hi,omitempty"`
	File   string         `json:"file"`
	Offset uint64         `json:"offset"`
}

type keyValueJSON struct {
	Kind string `json:"kind"`
	Num  uint64 `json:"num,omitempty"`
	Hex  string `json:"hex,omitempty"`
}

// MarshalJSON writes the coverage (tables in name order).
func (c *Coverage) MarshalJSON() ([]byte, error) {
	out := coverageJSON{Tables: []tableCoverageJSON{}}
	for _, tc := range c.Tables() {
		t := tableCoverageJSON{DB: tc.DB, Table: tc.Table, Key: tc.Key, Chunks: []chunkJSON{}, Incremental: tc.Incremental}
		for _, ch := range tc.Chunks {
			t.Chunks = append(t.Chunks, chunkJSON{Lo: keyJSON(ch.Lo), Hi: keyJSON(ch.Hi), File: ch.Pos.File, Offset: ch.Pos.Offset})
		}
		out.Tables = append(out.Tables, t)
	}
	return json.Marshal(out)
}

func keyJSON(k []change.Value) []keyValueJSON {
	if k == nil {
		return nil
	}
	out := make([]keyValueJSON, len(k))
	for i, v := range k {
		out[i] = keyValueJSON{Kind: v.Kind().String(), Num: v.Uint(), Hex: hex.EncodeToString(v.Bytes())}
	}
	return out
}

// UnmarshalJSON reads a coverage back, checking it as AddChunk does.
func (c *Coverage) UnmarshalJSON(data []byte) error {
	var in coverageJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*c = *NewCoverage()
	for _, t := range in.Tables {
		if c.Table(t.DB, t.Table) != nil {
			return fmt.Errorf("coverage: %s twice", QuoteName(t.DB, t.Table))
		}
		var key []string
		if len(t.Key) > 0 {
			key = t.Key
		}
		c.SetTable(t.DB, t.Table, key).Incremental = t.Incremental
		for _, ch := range t.Chunks {
			lo, err := keyFromJSON(ch.Lo)
			if err != nil {
				return err
			}
			hi, err := keyFromJSON(ch.Hi)
			if err != nil {
				return err
			}
			if err := c.AddChunk(t.DB, t.Table, Chunk{Lo: lo, Hi: hi, Pos: change.Position{File: ch.File, Offset: ch.Offset}}); err != nil {
				return err
			}
		}
	}
	return nil
}

func keyFromJSON(k []keyValueJSON) ([]change.Value, error) {
	if k == nil {
		return nil, nil
	}
	out := make([]change.Value, len(k))
	for i, v := range k {
		kind, ok := kindByName(v.Kind)
		if !ok || !KeyKindOrdered(kind) {
			return nil, fmt.Errorf("coverage: a key value of kind %q", v.Kind)
		}
		b, err := hex.DecodeString(v.Hex)
		if err != nil {
			return nil, fmt.Errorf("coverage: a key value's bytes: %v", err)
		}
		out[i] = change.RawValue(kind, v.Num, b)
	}
	return out, nil
}

func kindByName(name string) (change.Kind, bool) {
	for k := change.Absent; k <= change.Vector; k++ {
		if k.String() == name {
			return k, true
		}
	}
	return 0, false
}
