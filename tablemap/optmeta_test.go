package tablemap

import (
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

// compressedTableMap is the body of a MariaDB 10.11 TABLE_MAP_EVENT for
// x.c (id INT, v VARCHAR(10) COMPRESSED, w VARCHAR(300) COMPRESSED
// CHARACTER SET latin1, b BLOB COMPRESSED, t TEXT COMPRESSED, tt TINYTEXT
// COMPRESSED CHARACTER SET latin1, vb VARBINARY(100) COMPRESSED, z INT):
// types 141 (VARCHAR_COMPRESSED) with 2 bytes of metadata, the field
// length counting the header byte, and 140 (BLOB_COMPRESSED) with 1, the
// pack length; COLUMN_CHARSET numbers all six compressed columns.
const compressedTableMap = "160000000000010001780001630008038d8d8c8c8c8d030929002d01020201650" +
	"0fe0101000306 2d083f2d083f0413026964017601770162017402747402766201" + "7a080100"

func TestColumnMetaCompressed(t *testing.T) {
	body, err := hex.DecodeString(strings.ReplaceAll(compressedTableMap, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	types := []byte{3, 141, 141, 140, 140, 140, 141, 3}
	meta, err := columnMeta(body, 6, types)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint16{0, 41, 301, 2, 2, 1, 101, 0}; !reflect.DeepEqual(meta, want) {
		t.Errorf("meta %v, want %v", meta, want)
	}
	for i := range body {
		if _, err := columnMeta(body[:i], 6, types); err == nil && i < 33 {
			t.Errorf("%d bytes: no error", i)
		}
	}
	if _, err := columnMeta(body, 6, types[:7]); err == nil {
		t.Errorf("wrong column count: no error")
	}
}

func FuzzColumnMeta(f *testing.F) {
	body, _ := hex.DecodeString(strings.ReplaceAll(compressedTableMap, " ", ""))
	f.Add(body, []byte{3, 141, 141, 140, 140, 140, 141, 3})
	f.Fuzz(func(t *testing.T, body, types []byte) {
		meta, err := columnMeta(body, 6, types)
		if err == nil && len(meta) != len(types) {
			t.Fatalf("%d metas for %d types", len(meta), len(types))
		}
	})
}
