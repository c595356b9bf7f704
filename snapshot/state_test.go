package snapshot

import (
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

func TestResumeStateJSON(t *testing.T) {
	st := NewResumeState(Position{File: "binlog.000007", Offset: 1234, GTID: "0-1-9,1-2-3", Time: time.Unix(1700000000, 0).UTC()}, 42)
	st.Rows = 777
	st.Schemas["shop.orders"] = "abc"
	st.Coverage.SetTable("shop", "orders", []string{"id"})
	if err := st.Coverage.AddChunk("shop", "orders", pipeline.Chunk{Hi: []change.Value{change.IntValue(500)}, Pos: st.Start}); err != nil {
		t.Fatal(err)
	}
	st.Coverage.SetTable("shop", "notes", nil)
	data, err := st.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back ResumeState
	if err := back.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	if back.Start != st.Start || back.StartGTID != st.StartGTID || !back.StartTime.Equal(st.StartTime) || back.OutputSize != 42 || back.Rows != 777 ||
		back.Schemas["shop.orders"] != "abc" || back.Done {
		t.Fatalf("round trip: %+v", back)
	}
	tc := back.Coverage.Table("shop", "orders")
	if tc == nil || len(tc.Chunks) != 1 || tc.Chunks[0].Hi[0].Int() != 500 || tc.Chunks[0].Pos != st.Start {
		t.Fatalf("coverage back: %+v", tc)
	}
	if n := back.Coverage.Table("shop", "notes"); n == nil || n.Key != nil || len(n.Chunks) != 0 {
		t.Fatalf("a table not read yet: %+v", n)
	}
	// A state saved before any table began has no schemas: still usable.
	empty, _ := NewResumeState(Position{File: "b.000001", Offset: 4}, 0).MarshalJSON()
	var e ResumeState
	if err := e.UnmarshalJSON(empty); err != nil || e.Schemas == nil {
		t.Fatalf("empty state: %v %v", err, e.Schemas)
	}
	if err := e.UnmarshalJSON([]byte(`{"done":true}`)); err == nil {
		t.Fatal("a state without a start position")
	}
}

func TestKeyWhere(t *testing.T) {
	tbl := &tablemap.Table{Columns: []tablemap.Column{{Name: "a"}, {Name: "b`x"}, {Name: "c"}}, PrimaryKey: []int{0, 1, 2}}
	w, err := keyWhere(tbl, []change.Value{change.IntValue(-3), change.TextValue(change.Datetime, []byte("2020-01-02 03:04:05.000")),
		change.TextValue(change.Bytes, []byte{0, 'A', 0xff})})
	if err != nil {
		t.Fatal(err)
	}
	want := "(`a` > -3) OR (`a` = -3 AND `b``x` > '2020-01-02 03:04:05.000') OR (`a` = -3 AND `b``x` = '2020-01-02 03:04:05.000' AND `c` > X'0041ff')"
	if w != want {
		t.Fatalf("got  %s\nwant %s", w, want)
	}
	tbl1 := &tablemap.Table{Columns: []tablemap.Column{{Name: "a"}}, PrimaryKey: []int{0}}
	for _, v := range []change.Value{change.UintValue(1 << 63), change.EnumValue(3, []byte("c")), change.TextValue(change.Decimal, []byte("-1.50")), change.TextValue(change.Bytes, nil)} {
		if _, err := keyWhere(tbl1, []change.Value{v}); err != nil {
			t.Errorf("%s: %v", v.Kind(), err)
		}
	}
	for _, v := range []change.Value{change.TextValue(change.String, []byte("x")), change.TextValue(change.Decimal, []byte("1'; DROP")), change.TextValue(change.Date, []byte("2020-01-01'")),
		change.Float64Value(1), change.NullValue()} {
		if w, err := keyWhere(tbl1, []change.Value{v}); err == nil {
			t.Errorf("%s %q: no error (%s)", v.Kind(), v.Bytes(), w)
		}
	}
}

func TestChunkable(t *testing.T) {
	mk := func(types []string, prefix ...int) *tableSchema {
		tbl := &tablemap.Table{}
		for i := range types {
			tbl.Columns = append(tbl.Columns, tablemap.Column{Name: string(rune('a' + i))})
			tbl.PrimaryKey = append(tbl.PrimaryKey, i)
			p := 0
			if i < len(prefix) {
				p = prefix[i]
			}
			tbl.PrimaryKeyPrefix = append(tbl.PrimaryKeyPrefix, p)
		}
		return &tableSchema{table: tbl, showTypes: types}
	}
	for _, c := range []struct {
		types  []string
		prefix []int
		want   bool
	}{
		{[]string{"int(11)"}, nil, true},
		{[]string{"bigint(20) unsigned", "datetime(3)"}, nil, true},
		{[]string{"decimal(10,2)", "binary(16)", "enum('a','b')", "time"}, nil, true},
		{[]string{"varchar(30)"}, nil, false},
		{[]string{"int(11)", "char(3)"}, nil, false},
		{[]string{"uuid"}, nil, false},
		{[]string{"inet6"}, nil, true},
		{[]string{"inet4", "set('a')"}, nil, true},
		{[]string{"blob"}, nil, false},
		{[]string{"float"}, nil, false},
		{[]string{"double"}, nil, false},
		{[]string{"varbinary(200)"}, []int{8}, false},
		{nil, nil, false},
	} {
		if got := chunkable(mk(c.types, c.prefix...)); got != c.want {
			t.Errorf("%v prefix %v: %v, want %v", c.types, c.prefix, got, c.want)
		}
	}
}
