package pipeline

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/binlogcdc/binlogcdc/binlog"
	"github.com/binlogcdc/binlogcdc/change"
)

// batchCollect is collect taking rows events' changes at once
// (sink.BatchWriter); with failAt > 0, the failAt-th change fails.
type batchCollect struct {
	collect
	batches, failAt int
}

var errBatch = errors.New("refused")

func (c *batchCollect) Write(ctx context.Context, ch *change.Change) error {
	if c.failAt > 0 && len(c.changes)+1 == c.failAt {
		return errBatch
	}
	return c.collect.Write(ctx, ch)
}

func (c *batchCollect) WriteBatch(ctx context.Context, cs []change.Change) (int, error) {
	c.batches++
	for i := range cs {
		if err := c.Write(ctx, &cs[i]); err != nil {
			return i, err
		}
	}
	return len(cs), nil
}

// TestBatchWriter: a sink.BatchWriter gets the same changes in the same
// order as Write would, and the run's counts are the same, up to a
// change the sink refuses.
func TestBatchWriter(t *testing.T) {
	ctx := context.Background()
	run := func(s interface {
		Write(context.Context, *change.Change) error
		Commit(context.Context, change.TxEnd) error
		Rollback(context.Context) error
		Close(context.Context) error
	}) (Stats, error) {
		src, err := binlog.OpenFiles([]string{"../testdata/shop.binlog"}, change.Position{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		p := New(src, s, Options{DDL: true})
		err = p.Run(ctx)
		return p.Stats, err
	}
	one := &collect{}
	st1, err := run(one)
	if err != nil {
		t.Fatal(err)
	}
	many := &batchCollect{}
	st2, err := run(many)
	if err != nil {
		t.Fatal(err)
	}
	if many.batches == 0 || !reflect.DeepEqual(one.changes, many.changes) || st1 != st2 {
		t.Fatalf("batches %d; %d changes, stats %+v; want %d, %+v", many.batches, len(many.changes), st2, len(one.changes), st1)
	}
	// Refused at the k-th change: the run stops there, having counted
	// what Write one by one counts.
	for _, k := range []int{1, 2, len(one.changes) / 2, len(one.changes)} {
		b, w := &batchCollect{failAt: k}, &batchCollect{failAt: k}
		st, err := run(b)
		stw, errw := run(writeOnly{w})
		if !errors.Is(err, errBatch) || !errors.Is(errw, errBatch) || len(b.changes) != k-1 || !reflect.DeepEqual(b.changes, w.changes) {
			t.Fatalf("refused at %d: %v, %d changes written; one by one %v, %d", k, err, len(b.changes), errw, len(w.changes))
		}
		if st != stw {
			t.Errorf("refused at %d: stats %+v, one by one %+v", k, st, stw)
		}
	}
}

// writeOnly hides batchCollect's WriteBatch.
type writeOnly struct{ b *batchCollect }

func (w writeOnly) Write(ctx context.Context, c *change.Change) error { return w.b.Write(ctx, c) }
func (w writeOnly) Commit(ctx context.Context, tx change.TxEnd) error { return w.b.Commit(ctx, tx) }
func (w writeOnly) Rollback(ctx context.Context) error                { return w.b.Rollback(ctx) }
func (w writeOnly) Close(ctx context.Context) error                   { return w.b.Close(ctx) }
