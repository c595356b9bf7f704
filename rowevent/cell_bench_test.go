package rowevent

import (
	"encoding/hex"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/tablemap"
)

func BenchmarkDecodeCell(b *testing.B) {
	cases := []struct {
		name string
		col  tablemap.Column
		hex  string
	}{
		{"bigint", intCol(mysql.MYSQL_TYPE_LONGLONG, false), "ffffffffffffff7f"},
		{"decimal(10,2)", dcol(10, 2), "800003e763"},
		{"decimal(65,30)", dcol(65, 30), "7f439eb1ca484078caf1cb3fd0f8a086f8a432eaff439eb1ca484078fc85"},
		{"datetime2(6)", tcol(mysql.MYSQL_TYPE_DATETIME2, 6), "99b39ec8b801e240"},
		{"timestamp2(3)", tcol(mysql.MYSQL_TYPE_TIMESTAMP2, 3), "666d8a701ed2"},
		{"time2(3)", tcol(mysql.MYSQL_TYPE_TIME2, 3), "7fef7cec78"},
		{"varchar utf8mb4", strCol(mysql.MYSQL_TYPE_VARCHAR, 80, 45), "0d68c3a96c6c6f2077c3b6726c64"},
		{"text latin1", strCol(mysql.MYSQL_TYPE_BLOB, 2, 8), "0400636166e9"},
		{"binary(4) padded", strCol(mysql.MYSQL_TYPE_STRING, 4, 63), "01de"},
		{"enum", tablemap.Column{Type: mysql.MYSQL_TYPE_ENUM, Length: 1, EnumValues: []string{"a", "b", "c"}}, "02"},
		{"set", tablemap.Column{Type: mysql.MYSQL_TYPE_SET, Length: 1, SetValues: []string{"x", "y", "z"}}, "05"},
		{"json object", strCol(mysql.MYSQL_TYPE_JSON, 4, 0),
			"1a000000" + "00020019001200010013000200040000021500" + "6b616200000400"},
	}
	for _, bc := range cases {
		data, err := hex.DecodeString(bc.hex)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			col := bc.col
			var a arena
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				a.reset()
				if _, _, err := decodeCell(&a, data, &col); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
