package binlogcdc_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/binlogcdc/binlogcdc"
	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// TestHandlerErrorRedelivers checks the contract's error clause: a
// handler's error ends Run with that error, and the next Run with the
// same checkpoint delivers that transaction first, then the rest, each
// once.
func TestHandlerErrorRedelivers(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	srv.Exec(t,
		"CREATE DATABASE h",
		"CREATE TABLE h.t (id INT PRIMARY KEY)",
		"INSERT INTO h.t VALUES (1)",
		"INSERT INTO h.t VALUES (2)",
		"INSERT INTO h.t VALUES (3)",
		"INSERT INTO h.t VALUES (4)",
	)
	cp := filepath.Join(t.TempDir(), "cp.json")
	errRefused := errors.New("refused")
	var got []int64
	var lastNext change.Position
	run := func(refuse int64) error {
		o := binlogcdc.DefaultStreamOptions()
		o.Conn.Source, o.Checkpoint, o.From = srv.DSN(), cp, "earliest"
		s := &binlogcdc.Stream{Options: o}
		s.Handler = binlogcdc.HandlerFunc(func(ctx context.Context, tx *binlogcdc.Tx) error {
			if len(tx.Changes) != 1 {
				t.Fatalf("%d changes in a transaction of one", len(tx.Changes))
			}
			id := tx.Changes[0].After[0].Int()
			if id == refuse {
				return errRefused
			}
			if lastNext.File != "" && tx.End.Next.Compare(lastNext) <= 0 {
				t.Errorf("row %d: positions do not increase (%v after %v)", id, tx.End.Next, lastNext)
			}
			got, lastNext = append(got, id), tx.End.Next
			if id == 4 {
				s.Stop()
			}
			return nil
		})
		return s.Run(context.Background())
	}
	if err := run(3); !errors.Is(err, errRefused) {
		t.Fatalf("Run with a handler that fails: %v, want the handler's error", err)
	}
	if err := run(0); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[0] != 1 || got[1] != 2 || got[2] != 3 || got[3] != 4 {
		t.Fatalf("handled %v, want [1 2 3 4]: each row once, in order", got)
	}
}
