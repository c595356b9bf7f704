package verify

import (
	"bytes"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// TestEncodeRowUnambiguous: rows whose values differ in bytes, length,
// NULL-ness or sign never share an encoding.
func TestEncodeRowUnambiguous(t *testing.T) {
	s := func(v string) mysql.FieldValue { return mysql.NewFieldValue(mysql.FieldValueTypeString, 0, []byte(v)) }
	null := mysql.NewFieldValue(mysql.FieldValueTypeNull, 0, nil)
	i := func(v int64) mysql.FieldValue { return mysql.NewFieldValue(mysql.FieldValueTypeSigned, uint64(v), nil) }
	u := func(v uint64) mysql.FieldValue { return mysql.NewFieldValue(mysql.FieldValueTypeUnsigned, v, nil) }
	rows := [][]mysql.FieldValue{
		{s("ab"), s("c")}, {s("a"), s("bc")}, {s(""), s("abc")}, {s("abc"), s("")},
		{s("abc"), null}, {null, s("abc")}, {s(""), null}, {null, null}, {s("\x00"), null},
		{i(-1), null}, {u(1<<64 - 1), null}, {i(1), null}, {s("\x01"), null},
	}
	seen := map[string]int{}
	for n, r := range rows {
		e := string(encodeRow(nil, r))
		if m, dup := seen[e]; dup {
			t.Errorf("rows %d and %d have the same encoding %x", m, n, e)
		}
		seen[e] = n
	}
	// Signed and unsigned columns holding the same value agree.
	if !bytes.Equal(encodeRow(nil, []mysql.FieldValue{i(5)}), encodeRow(nil, []mysql.FieldValue{u(5)})) {
		t.Errorf("5 signed and unsigned differ")
	}
}
