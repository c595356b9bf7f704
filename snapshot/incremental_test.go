package snapshot

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

func TestSignalTables(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{"shop.orders, shop.items", []string{"`shop`.`orders`", "`shop`.`items`"}, false},
		{"`a.b`.`c`,", []string{"`a.b`.`c`"}, false},
		{`{"data-collections": ["shop.orders"]}`, []string{"`shop`.`orders`"}, false},
		{"orders", nil, true},
		{`{"data-collections": 5}`, nil, true},
	} {
		got, err := signalTables(c.in)
		if (err != nil) != c.bad || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %q, %v", c.in, got, err)
		}
	}
}

// recorder is a sink that keeps what it is given.
type recorder struct{ ops []string }

func (r *recorder) Write(_ context.Context, c *change.Change) error {
	r.ops = append(r.ops, c.Op.String()+" "+c.Table.Name)
	return nil
}
func (r *recorder) Commit(context.Context, change.TxEnd) error {
	r.ops = append(r.ops, "commit")
	return nil
}
func (r *recorder) Rollback(context.Context) error { return nil }
func (r *recorder) Close(context.Context) error    { return nil }

// A request adds its table to the selection at its commit; from then on
// the table's changes are left out until chunks are read; the state
// (saved with the checkpoint) brings the selection back after a restart.
func TestIncrementalRequest(t *testing.T) {
	ctx := context.Background()
	filter, _ := pipeline.NewFilter([]string{"shop.orders"}, []string{"shop.secret"})
	rec := &recorder{}
	in := &Incremental{Sink: rec, Filter: filter, SignalDB: "ctl", SignalTable: "signal", Reader: &ChunkReader{Flavor: "mariadb"}}
	if !filter.Add("ctl", "signal") {
		t.Fatal("the signal table is excluded")
	}
	sig := &tablemap.Table{DB: "ctl", Name: "signal", Columns: []tablemap.Column{{Name: "id"}, {Name: "type"}, {Name: "data"}}}
	items := &tablemap.Table{DB: "shop", Name: "items", Columns: []tablemap.Column{{Name: "id"}}, PrimaryKey: []int{0}, PKNames: []string{"id"}}
	row := func(vals ...string) change.Row {
		var r change.Row
		for _, v := range vals {
			r = append(r, change.TextValue(change.String, []byte(v)))
		}
		return r
	}
	pos := change.Position{File: "binlog.000001", Offset: 100}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(in.Write(ctx, &change.Change{Op: change.Insert, Table: sig, After: row("1", "snapshot", "shop.items, shop.secret, ctl.signal"), Pos: pos}))
	if filter.Table("shop", "items") {
		t.Fatal("the request took effect before its commit")
	}
	// The Reader is never dialed: with no start position no chunk is read.
	must(in.Commit(ctx, change.TxEnd{}))
	if !filter.Table("shop", "items") || filter.Table("shop", "secret") {
		t.Fatalf("after the commit: items selected %v, secret %v", filter.Table("shop", "items"), filter.Table("shop", "secret"))
	}
	if got := in.Running(); !reflect.DeepEqual(got, []string{"`shop`.`items`"}) {
		t.Fatalf("running %q", got)
	}
	// The pipeline in front reconciles each change with the coverage it
	// shares with the Incremental.
	c := &change.Change{Op: change.Insert, Table: items, After: change.Row{change.IntValue(1)}, Pos: change.Position{File: "binlog.000001", Offset: 200}}
	if keep, err := in.coverage().Reconcile(c); err != nil || keep {
		t.Errorf("a change to a table not read yet: keep %v, err %v", keep, err)
	} else if tc := in.coverage().Table("shop", "items"); tc == nil || !tc.Incremental {
		t.Errorf("the requested table is not marked incremental in the coverage: %+v", tc)
	}
	must(in.Commit(ctx, change.TxEnd{}))
	if got := strings.Join(rec.ops, ","); got != "commit,commit" {
		t.Errorf("the sink got %q: the signal row or a change to a table not read yet went through", got)
	}

	state, err := in.State()
	must(err)
	filter2, _ := pipeline.NewFilter([]string{"shop.orders"}, nil)
	in2 := &Incremental{Sink: rec, Filter: filter2}
	// A state saved before the coverage was shared has no "incremental"
	// mark: the state it is read from says so.
	old := strings.ReplaceAll(string(state), `,"incremental":true`, "")
	if old == string(state) {
		t.Fatalf("the saved state has no incremental mark: %s", state)
	}
	must(in2.Restore([]byte(old)))
	if tc := in2.coverage().Table("shop", "items"); tc == nil || !tc.Incremental {
		t.Errorf("restored from an old state, items is not marked incremental: %+v", tc)
	}
	if !filter2.Table("shop", "items") || !reflect.DeepEqual(in2.Running(), in.Running()) {
		t.Errorf("the restored state lost the selection or the queue: %s", state)
	}
}
