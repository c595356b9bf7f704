package rowevent

import (
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// benchTable is bench/gen.sh's table: INT primary key, BIGINT,
// DECIMAL(12,2), DATETIME(6), ENUM, VARCHAR(100) and TEXT, utf8mb4.
func benchTable() *tablemap.Table {
	const utf8mb4 = 45
	return &tablemap.Table{DB: "bench", Name: "orders", PrimaryKey: []int{0}, PKNames: []string{"id"},
		Columns: []tablemap.Column{
			{Name: "id", Type: mysql.MYSQL_TYPE_LONG},
			{Name: "customer", Type: mysql.MYSQL_TYPE_LONGLONG},
			{Name: "amount", Type: mysql.MYSQL_TYPE_NEWDECIMAL, Precision: 12, Scale: 2},
			{Name: "created", Type: mysql.MYSQL_TYPE_DATETIME2, FSP: 6},
			{Name: "status", Type: mysql.MYSQL_TYPE_ENUM, Length: 1, Collation: utf8mb4,
				EnumValues: []string{"new", "paid", "shipped", "cancelled"}},
			{Name: "email", Type: mysql.MYSQL_TYPE_VARCHAR, Length: 400, Collation: utf8mb4, Nullable: true},
			{Name: "note", Type: mysql.MYSQL_TYPE_BLOB, Length: 2, Collation: utf8mb4, Nullable: true},
		}}
}

// benchRow encodes one row image of benchTable (all columns present).
func benchRow(b []byte, id int) []byte {
	b = append(b, 0) // NULL bitmap: none
	b = binary.LittleEndian.AppendUint32(b, uint32(id))
	b = binary.LittleEndian.AppendUint64(b, uint64(id)*7919%1000003)
	dec, _ := hex.DecodeString("800000603827") // 24632.39
	b = append(b, dec...)
	dt, _ := hex.DecodeString("99b39ec8b801e240")
	b = append(b, dt...)
	b = append(b, byte(1+id%4))
	email := "user12345@example.com"
	b = binary.LittleEndian.AppendUint16(b, uint16(len(email)))
	b = append(b, email...)
	note := `foxtrot sierra "quoted" xray charlie café tango foxtrot juliett naïve kilo lima mike Zürich oscar papa quebec romeo`
	b = binary.LittleEndian.AppendUint16(b, uint16(len(note)))
	return append(b, note...)
}

// benchRowsEvent builds the body of a MariaDB v1 rows event of type t
// with n rows of benchTable.
func benchRowsEvent(t replication.EventType, n int) []byte {
	b := []byte{42, 0, 0, 0, 0, 0, 1, 0} // table id, flags STMT_END
	b = append(b, 7, 0x7f)               // 7 columns, all present
	if t == replication.UPDATE_ROWS_EVENTv1 {
		b = append(b, 0x7f)
	}
	for i := range n {
		b = benchRow(b, 1000+i)
		if t == replication.UPDATE_ROWS_EVENTv1 {
			b = benchRow(b, 1000+i)
		}
	}
	return b
}

func BenchmarkDecodeRowsEvent(b *testing.B) {
	tbl := benchTable()
	cases := []struct {
		name string
		typ  replication.EventType
		rows int
	}{
		{"insert 1 row", replication.WRITE_ROWS_EVENTv1, 1},
		{"update 1 row", replication.UPDATE_ROWS_EVENTv1, 1},
		{"delete 1 row", replication.DELETE_ROWS_EVENTv1, 1},
		{"insert 100 rows", replication.WRITE_ROWS_EVENTv1, 100},
	}
	for _, bc := range cases {
		body := benchRowsEvent(bc.typ, bc.rows)
		var d Decoder
		h, err := ParseHeader(bc.typ, body, 6)
		if err != nil {
			b.Fatal(err)
		}
		changes, err := d.Decode(bc.typ, h, tbl)
		if err != nil {
			b.Fatal(err)
		}
		if len(changes) != bc.rows {
			b.Fatalf("%d rows, want %d", len(changes), bc.rows)
		}
		img := changes[0].After
		if img == nil {
			img = changes[0].Before
		}
		if got := string(img[2].Bytes()); got != "24632.39" || img[4].Kind() != change.Enum {
			b.Fatalf("decoded amount %q, status %v", got, img[4].Kind())
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				h, err := ParseHeader(bc.typ, body, 6)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := d.Decode(bc.typ, h, tbl); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
