package envelope

import (
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

func benchChange() *change.Change {
	tbl := &tablemap.Table{DB: "shop", Name: "orders", PrimaryKey: []int{0}, PKNames: []string{"id"}, Columns: []tablemap.Column{
		{Name: "id", Type: mysql.MYSQL_TYPE_LONGLONG}, {Name: "total", Type: mysql.MYSQL_TYPE_NEWDECIMAL, Precision: 12, Scale: 2},
		{Name: "note", Type: mysql.MYSQL_TYPE_VARCHAR, Length: 400, Collation: 45, Nullable: true},
		{Name: "placed", Type: mysql.MYSQL_TYPE_DATETIME2, FSP: 6}, {Name: "paid", Type: mysql.MYSQL_TYPE_TIMESTAMP2, FSP: 3}}}
	row := func(total string) change.Row {
		return change.Row{change.IntValue(42), change.TextValue(change.Decimal, []byte(total)), change.TextValue(change.String, []byte("a note")),
			change.TextValue(change.Datetime, []byte("2024-06-15 12:34:56.123456")), change.TimestampValue(1718454896, []byte("2024-06-15 12:34:56.123"))}
	}
	return &change.Change{Op: change.Update, Table: tbl, Before: row("999.99"), After: row("-0.50"), Time: time.Unix(1718454896, 0),
		Pos: change.Position{File: "binlog.000042", Offset: 1234}, GTID: "0-1-42", ServerID: 1}
}

// BenchmarkEncoders: the per-change cost of each format (no allocations
// once a table is cached).
func BenchmarkEncoders(b *testing.B) {
	for _, opts := range []Options{{Format: "debezium"}, {Format: "debezium", WithSchema: true}, {Format: "maxwell"}, {Format: "canal"}} {
		name := opts.Format
		if opts.WithSchema {
			name += "-schema"
		}
		b.Run(name, func(b *testing.B) {
			enc, err := New(opts)
			if err != nil {
				b.Fatal(err)
			}
			c := benchChange()
			buf := make([]byte, 0, 64<<10)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				buf, _ = enc.AppendValue(buf[:0], c)
				buf = enc.AppendTail(buf, change.TxEnd{Xid: 7}, true)
			}
			b.SetBytes(int64(len(buf)))
		})
	}
}

func TestEncodersDoNotAllocate(t *testing.T) {
	for _, f := range Formats {
		enc, _ := New(Options{Format: f})
		c := benchChange()
		buf := make([]byte, 0, 64<<10)
		buf, _ = enc.AppendValue(buf, c)
		if n := testing.AllocsPerRun(100, func() { buf, _ = enc.AppendValue(buf[:0], c) }); n != 0 {
			t.Errorf("%s: %.1f allocations per change", f, n)
		}
	}
}
