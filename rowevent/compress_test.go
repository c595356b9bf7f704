package rowevent

import (
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// compCol is a MariaDB COMPRESSED column as tablemap.FromEventBody makes
// it: VARCHAR with the values' byte length, or BLOB with its pack length.
func compCol(typ byte, length int, collation uint32) tablemap.Column {
	return tablemap.Column{Type: typ, Length: length, Collation: collation, Compressed: true}
}

// TestDecodeCellCompressed: cells captured from a MariaDB 10.11 binlog
// (the values are what SELECT printed), stored raw, as raw deflate
// (column_compression_zlib_wrap=OFF, the default) and as zlib streams
// (wrap=ON).
func TestDecodeCellCompressed(t *testing.T) {
	vc, bl := byte(mysql.MYSQL_TYPE_VARCHAR), byte(mysql.MYSQL_TYPE_BLOB)
	runCellCases(t, []cellCase{
		// VARCHAR(10) COMPRESSED utf8mb4: field length 41, a 1-byte prefix; raw
		{"varchar raw", compCol(vc, 40, 45), "0400616263", cellText(change.String, "abc")},
		{"varchar raw at its limit", compCol(vc, 40, 45), "0b0061616161616161616161", cellText(change.String, "aaaaaaaaaa")},
		// VARCHAR(300) COMPRESSED latin1: field length 301, a 2-byte prefix
		{"varchar deflate", compCol(vc, 300, 8), "0a008a012caba81805c40200", cellText(change.String, strings.Repeat("x", 300))},
		{"varchar zlib", compCol(vc, 300, 8), "0e0081c8789cabac1c1e00001f575e89", cellText(change.String, strings.Repeat("y", 200))},
		// BLOB COMPRESSED (pack length 2)
		{"blob deflate", compCol(bl, 2, 63), "15008a07d04b4c4a1c85a370148ec251380a47e1108700", cellText(change.Bytes, strings.Repeat("ab", 1000))},
		{"blob zlib", compCol(bl, 2, 63), "1b008207d0789c4b4c4a1c85a370148ec251380a47e1108700a7e7f9d7", cellText(change.Bytes, strings.Repeat("ab", 1000))},
		// TEXT COMPRESSED utf8mb4, TINYTEXT COMPRESSED latin1
		{"text raw", compCol(bl, 2, 45), "030000c3a9", cellText(change.String, "é")},
		{"text zlib", compCol(bl, 2, 45), "15008203e8789c3bbcf2f0281c85a3709843005ef6c70f", cellText(change.String, strings.Repeat("é", 500))},
		{"tinytext raw", compCol(bl, 1, 8), "020071", cellText(change.String, "q")},
		{"tinytext latin1 raw", compCol(bl, 1, 8), "0200e9", cellText(change.String, "é")},
		// VARBINARY(100) COMPRESSED: the empty value has no header
		{"varbinary empty", compCol(vc, 100, 63), "00", cellText(change.Bytes, "")},
		{"varbinary zlib", compCol(vc, 100, 63), "0e8164789cabaaa23d0000678f2fa9", cellText(change.Bytes, strings.Repeat("z", 100))},
	})
}

func TestDecodeCellCompressedErrors(t *testing.T) {
	zl := func(s string) string {
		var b bytes.Buffer
		w := zlib.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return hex.EncodeToString(b.Bytes())
	}
	vc := compCol(mysql.MYSQL_TYPE_VARCHAR, 300, 8)
	body := zl(strings.Repeat("y", 200))
	corrupt := []byte(body)
	corrupt[len(corrupt)-1] ^= 1 // the Adler-32 checksum's last digit
	cases := []struct {
		name string
		col  tablemap.Column
		hex  string
		is   error
	}{
		{"header 0x90", vc, "02009000", ErrBadValue},
		{"header with 5 length bytes", vc, "0600850000000001", ErrBadValue},
		{"header without its length", vc, "02008201", ErrTruncated},
		{"more than the column holds", vc, "0400812d0000", ErrBadValue},
		{"shorter than declared", vc, "1000" + "81c9" + body, ErrBadValue},
		{"longer than declared", vc, "1000" + "81c7" + body, ErrBadValue},
		{"bad checksum", vc, "1000" + "81c8" + string(corrupt), ErrBadValue},
		{"not a zlib stream", vc, "05008103616263", ErrBadValue},
		{"claims far more than its bytes", compCol(mysql.MYSQL_TYPE_BLOB, 4, 63), "0500000084ffffff00", ErrBadValue},
		{"blob pack length 0", compCol(mysql.MYSQL_TYPE_BLOB, 0, 63), "00", ErrBadMetadata},
	}
	for _, tc := range cases {
		data, err := hex.DecodeString(tc.hex)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var a arena
		_, n, err := decodeCell(&a, data, &tc.col)
		if !errors.Is(err, tc.is) || n != 0 {
			t.Errorf("%s: n=%d err=%v, want %v", tc.name, n, err, tc.is)
		}
		var ce *CellError
		if errors.As(err, &ce) && !strings.Contains(err.Error(), "COMPRESSED") {
			t.Errorf("%s: %v does not name the COMPRESSED type", tc.name, err)
		}
	}
}
