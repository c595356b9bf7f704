package schemahist

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// The history is saved as JSON: one object per table, in name order.
//
//	{"version": 1, "mariadb": true, "tables": [
//	  {"db": "shop", "name": "orders", "file": "mysql-bin.000003", "offset": 1234,
//	   "table": {…tablemap.Table…}, "default_collation": 45,
//	   "columns": {"total": {"default": "DEFAULT 0", "generated": "STORED"}}},
//	  {"db": "shop", "name": "tmp", "file": "…", "offset": 99, "unknown": "why"}]}

const formatVersion = 1

type savedHistory struct {
	Version int          `json:"version"`
	MariaDB bool         `json:"mariadb"`
	Tables  []savedTable `json:"tables"`
}

type savedTable struct {
	DB      string `json:"db"`
	Name    string `json:"name"`
	File    string `json:"file,omitempty"`
	Offset  uint64 `json:"offset,omitempty"`
	Unknown string `json:"unknown,omitempty"`

	Table     *tablemap.Table       `json:"table,omitempty"`
	DefColl   uint32                `json:"default_collation,omitempty"`
	Guessed   bool                  `json:"collation_guessed,omitempty"`
	CreateSQL string                `json:"create_sql,omitempty"`
	Coll      uint32                `json:"create_collation,omitempty"`
	TypeNames map[string]string     `json:"type_names,omitempty"`
	Columns   map[string]savedAttrs `json:"columns,omitempty"`
}

type savedAttrs struct {
	Default   string `json:"default,omitempty"`
	OnUpdate  string `json:"on_update,omitempty"`
	Comment   string `json:"comment,omitempty"`
	Generated string `json:"generated,omitempty"`
	AutoInc   bool   `json:"auto_increment,omitempty"`
	Type      string `json:"type,omitempty"` // the type as declared; absent in histories saved before it was kept
	JSON      bool   `json:"json,omitempty"` // MariaDB JSON (colAttrs.json); absent in histories saved before it was kept
}

// MarshalJSON encodes the history (see the layout above). Each table's
// object is encoded once after it changed and kept (entry.enc), so a save
// after a DDL re-encodes only the tables the DDL changed; the rest is
// copying. The bytes are those json.Marshal of the whole savedHistory
// gives (TestMarshalCached), so the SHA-256 a checkpoint names the
// history by and every saved layout stay as they were.
func (h *History) MarshalJSON() ([]byte, error) {
	es := make([]*entry, 0, len(h.tables))
	n := 64
	for _, e := range h.tables {
		if e.enc == nil {
			b, err := json.Marshal(e.saved())
			if err != nil {
				return nil, err
			}
			e.enc = b
		}
		n += len(e.enc) + 1
		es = append(es, e)
	}
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		return a.db < b.db || a.db == b.db && a.name < b.name
	})
	head, err := json.Marshal(savedHistory{Version: formatVersion, MariaDB: h.mariadb, Tables: []savedTable{}})
	if err != nil {
		return nil, err
	}
	// head ends in `[]}`: the tables go between the brackets.
	out := make([]byte, 0, n+len(head))
	out = append(out, head[:len(head)-2]...)
	for i, e := range es {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e.enc...)
	}
	return append(out, "]}"...), nil
}

// saved is the entry as the layout above saves it.
func (e *entry) saved() savedTable {
	t := savedTable{DB: e.db, Name: e.name, File: e.pos.File, Offset: e.pos.Offset, Unknown: e.unknown, CreateSQL: e.createSQL, Coll: e.coll}
	if e.sh != nil {
		t.Table, t.DefColl, t.Guessed = e.sh.T, e.sh.DefColl, e.sh.Guessed
		if len(e.sh.TypeNames) > 0 {
			t.TypeNames = e.sh.TypeNames
		}
		for k, a := range e.sh.Attrs {
			if a == (colAttrs{}) {
				continue
			}
			if t.Columns == nil {
				t.Columns = map[string]savedAttrs{}
			}
			t.Columns[k] = savedAttrs{Default: a.def, OnUpdate: a.onUpdate, Comment: a.comment, Generated: a.Generated, AutoInc: a.autoInc, Type: a.declared, JSON: a.json}
		}
	}
	return t
}

// Decode reads a history that MarshalJSON encoded. Errors say what is
// wrong with it; name is where it comes from, for them.
func Decode(data []byte, name string) (*History, error) {
	var s savedHistory
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("schemahist: %s is damaged (%v); move it away to start the history over (the tables then follow their TABLE_MAPs until created again)", name, err)
	}
	if s.Version != formatVersion {
		return nil, fmt.Errorf("schemahist: %s has format version %d, this binlogcdc reads %d", name, s.Version, formatVersion)
	}
	h := New(s.MariaDB)
	for _, t := range s.Tables {
		e := &entry{pos: change.Position{File: t.File, Offset: t.Offset}, unknown: t.Unknown, createSQL: t.CreateSQL, coll: t.Coll}
		if t.Table != nil && t.Unknown == "" {
			if err := validTable(t.Table); err != nil {
				return nil, fmt.Errorf("schemahist: %s: table %s: %w", name, quoteName(t.DB, t.Name), err)
			}
			sh := &Shape{T: t.Table, DefColl: t.DefColl, Guessed: t.Guessed, TypeNames: map[string]string{}, Attrs: map[string]colAttrs{}, Rooted: true, Generated: true}
			for k, v := range t.TypeNames {
				sh.TypeNames[strings.ToLower(k)] = v
			}
			for k, a := range t.Columns {
				sh.Attrs[strings.ToLower(k)] = colAttrs{def: a.Default, onUpdate: a.OnUpdate, comment: a.Comment, Generated: a.Generated, autoInc: a.AutoInc, declared: a.Type, json: a.JSON}
			}
			e.sh = sh
		} else if t.Unknown == "" {
			e.unknown = "the saved schema history holds no columns"
		}
		h.set(t.DB, t.Name, e)
	}
	return h, nil
}

// validTable checks what the history relies on: primary key indexes
// within the columns.
func validTable(t *tablemap.Table) error {
	for _, i := range t.PrimaryKey {
		if i < 0 || i >= len(t.Columns) {
			return fmt.Errorf("primary key column %d of %d", i, len(t.Columns))
		}
	}
	if len(t.PrimaryKeyPrefix) != 0 && len(t.PrimaryKeyPrefix) != len(t.PrimaryKey) {
		return fmt.Errorf("%d primary key prefixes for %d parts", len(t.PrimaryKeyPrefix), len(t.PrimaryKey))
	}
	return nil
}
