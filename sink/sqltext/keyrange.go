package sqltext

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// KeyRange is the SQL condition "primary key op vals" (op "<" or ">",
// orEqual adding "="), spelled out column by column with the values as
// literals, (a > 1) OR (a = 1 AND b > 2): the form an incremental
// snapshot's chunk reads on the source, a resumed snapshot's first
// SELECT and an incremental snapshot's range deletes on a target use.
// The values are those of a key whose order binlogcdc reproduces (see
// snapshot.keyTypes); a value of another kind is an error.
func KeyRange(t *tablemap.Table, vals change.Row, op string, orEqual bool) (string, error) {
	if op != "<" && op != ">" {
		return "", fmt.Errorf("sqltext: key range operator %q", op)
	}
	if len(vals) != len(t.PrimaryKey) || len(vals) == 0 {
		return "", fmt.Errorf("sqltext: a key of %d values for a primary key of %d columns", len(vals), len(t.PrimaryKey))
	}
	var terms []string
	for i := range t.PrimaryKey {
		var b []byte
		for j := 0; j <= i; j++ {
			if j > 0 {
				b = append(b, " AND "...)
			}
			b = AppendIdent(b, t.Columns[t.PrimaryKey[j]].Name)
			if j < i {
				b = append(b, " = "...)
			} else {
				b = append(b, ' ')
				b = append(b, op...)
				if orEqual && i == len(t.PrimaryKey)-1 {
					b = append(b, '=')
				}
				b = append(b, ' ')
			}
			var err error
			if b, err = appendKeyLiteral(b, vals[j]); err != nil {
				return "", err
			}
		}
		terms = append(terms, "("+string(b)+")")
	}
	return strings.Join(terms, " OR "), nil
}

// appendKeyLiteral appends a key value as a literal that compares with its
// column as the value orders: ENUM and SET by their numbers (a label
// would compare as text, in the column's collation, not by index or
// bitmask), the rest as AppendLiteral writes them (BIT and integers as
// numbers, binary strings as X'…', DECIMAL and temporal values as their
// text, which the server reads in the session's time zone: UTC).
func appendKeyLiteral(b []byte, v change.Value) ([]byte, error) {
	switch v.Kind() {
	case change.Enum, change.Set:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case change.Int, change.Uint, change.Decimal, change.Date, change.Datetime, change.Timestamp, change.Time, change.Bytes:
		return AppendLiteral(b, v)
	}
	return b, fmt.Errorf("sqltext: a key range cannot compare a %s value as the server orders it", v.Kind())
}
