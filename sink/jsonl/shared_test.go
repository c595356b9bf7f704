package jsonl_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/envelope"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// An encoder shared by a JSON lines sink and another user (binlogcdc read
// --to kafka:// makes both) writes that user's records whole: the sink's
// spill function is the encoder's only while the sink writes. And the
// sink's lines of a large value, written in pieces, are the whole record.
func TestSharedFormatLarge(t *testing.T) {
	tbl := &tablemap.Table{DB: "d", Name: "t", PrimaryKey: []int{0}, PKNames: []string{"id"}, Columns: []tablemap.Column{
		{Name: "id", Type: mysql.MYSQL_TYPE_LONG},
		{Name: "b", Type: mysql.MYSQL_TYPE_BLOB, Length: 4, Collation: 63, Nullable: true},
	}}
	c := &change.Change{Op: change.Insert, Table: tbl, After: change.Row{
		change.IntValue(1), change.TextValue(change.Bytes, bytes.Repeat([]byte("xyz\x00"), 3<<18)),
	}}
	now := func() time.Time { return time.Unix(1700000000, 0) }
	for _, format := range envelope.Formats {
		enc, err := envelope.New(envelope.Options{Format: format, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := envelope.New(envelope.Options{Format: format, Now: now})
		want, _ := ref.AppendValue(nil, c)
		want2, _ := ref.AppendValue(nil, c) // canal numbers its records
		var out bytes.Buffer
		s := jsonl.New(&out, jsonl.Options{Format: enc, TempDir: t.TempDir()})
		ctx := context.Background()
		if err := s.Write(ctx, c); err != nil {
			t.Fatal(err)
		}
		if got, _ := enc.AppendValue(nil, c); !bytes.Equal(got, want2) {
			t.Errorf("%s: the shared encoder's record is %d bytes, not the %d of the whole record", format, len(got), len(want2))
		}
		if err := s.Commit(ctx, change.TxEnd{}); err != nil {
			t.Fatal(err)
		}
		s.Close(ctx)
		line := out.Bytes()
		if format == "maxwell" { // its tail: "commit":true and '}' at the commit
			want = append(want[:len(want):len(want)], `,"commit":true}`...)
		}
		if !bytes.Equal(bytes.TrimSuffix(line, []byte("\n")), want) {
			t.Errorf("%s: the sink's line (%d bytes) is not the whole record (%d bytes)", format, len(line), len(want))
		}
	}
}
