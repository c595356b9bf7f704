package sqltext

import (
	"fmt"
	"strings"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// KeyRange is the SQL condition "primary key op vals" (op "<" or ">",
// orEqual adding "="), spelled out column by column with the values as
// literals, (a > 1) OR (a = 1 AND b > 2): the form an incremental
// snapshot's chunk reads on the source and its range deletes on a
// target use.
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
			if b, err = AppendLiteral(b, vals[j]); err != nil {
				return "", err
			}
		}
		terms = append(terms, "("+string(b)+")")
	}
	return strings.Join(terms, " OR "), nil
}
