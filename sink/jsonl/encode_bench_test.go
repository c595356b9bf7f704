package jsonl

import (
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/cputime"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// benchChange is a row of bench/gen.sh's table (INT, BIGINT, DECIMAL,
// DATETIME(6), ENUM, VARCHAR, TEXT) as the decoder produces it.
func benchChange(op change.Op) *change.Change {
	tbl := &tablemap.Table{DB: "bench", Name: "orders", PrimaryKey: []int{0}, PKNames: []string{"id"},
		Columns: []tablemap.Column{
			{Name: "id", Type: mysql.MYSQL_TYPE_LONG},
			{Name: "customer", Type: mysql.MYSQL_TYPE_LONGLONG},
			{Name: "amount", Type: mysql.MYSQL_TYPE_NEWDECIMAL},
			{Name: "created", Type: mysql.MYSQL_TYPE_DATETIME2},
			{Name: "status", Type: mysql.MYSQL_TYPE_ENUM},
			{Name: "email", Type: mysql.MYSQL_TYPE_VARCHAR},
			{Name: "note", Type: mysql.MYSQL_TYPE_BLOB},
		}}
	row := change.Row{
		change.IntValue(12345),
		change.IntValue(97644751),
		change.TextValue(change.Decimal, []byte("24632.39")),
		change.TextValue(change.Datetime, []byte("2024-01-05 04:55:51.234567")),
		change.EnumValue(2, []byte("paid")),
		change.TextValue(change.String, []byte("user12345@example.com")),
		change.TextValue(change.String, []byte(`foxtrot sierra "quoted" xray charlie café tango foxtrot juliett naïve kilo lima mike Zürich oscar papa quebec romeo`)),
	}
	c := &change.Change{Op: op, Table: tbl, Time: time.Unix(1796039146, 0).UTC(),
		Pos: change.Position{File: "binlog.000002", Offset: 123456789}, GTID: "0-1-226504"}
	switch op {
	case change.Insert:
		c.After = row
	case change.Update:
		c.Before, c.After = row, row
	case change.Delete:
		c.Before = row
	}
	return c
}

func BenchmarkAppendChange(b *testing.B) {
	for _, op := range []change.Op{change.Insert, change.Update, change.Delete} {
		c := benchChange(op)
		b.Run(op.String(), func(b *testing.B) {
			var e encoder
			buf := e.appendChange(nil, c)
			b.ReportAllocs()
			b.SetBytes(int64(len(buf)))
			defer cputime.Start(b)()
			for b.Loop() {
				buf = e.appendChange(buf[:0], c)
			}
		})
	}
}

func BenchmarkAppendString(b *testing.B) {
	for _, bc := range []struct{ name, s string }{
		{"ascii 120", "foxtrot sierra xray charlie tango foxtrot juliett kilo lima mike oscar papa quebec romeo sierra tango uniform victor w"},
		{"mixed 120", `foxtrot sierra "quoted" xray charlie café tango foxtrot juliett naïve kilo lima mike Zürich oscar papa quebec romeo`},
		{"short", "paid"},
	} {
		s := []byte(bc.s)
		b.Run(bc.name, func(b *testing.B) {
			var buf []byte
			b.ReportAllocs()
			b.SetBytes(int64(len(s)))
			defer cputime.Start(b)()
			for b.Loop() {
				buf = appendStringBytes(buf[:0], s)
			}
		})
	}
}
