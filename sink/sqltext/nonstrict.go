package sqltext

import (
	"fmt"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/internal/charset"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// NotStored returns the index of a value of row, among cols (nil: all),
// that a statement run under a non-strict sql_mode (for a row holding the
// ENUM error value: EnumErrors) would not store as it is, or -1. Text
// goes unchecked (change.UncheckedText) for the target to check, which a
// strict sql_mode does; a non-strict one stores '?' for what the column's
// charset cannot hold, with a warning only. So such a row is refused
// before it is written. Text is taken as MariaDB checks it: UTF-8 encoded
// surrogates, which its utf8mb4 stores, pass.
func NotStored(row change.Row, cols []int) int {
	if cols == nil {
		for i := range row {
			if !storable(&row[i]) {
				return i
			}
		}
		return -1
	}
	for _, i := range cols {
		if !storable(&row[i]) {
			return i
		}
	}
	return -1
}

func storable(v *change.Value) bool {
	coll, ok := v.UncheckedUTF8()
	if !ok {
		return true
	}
	maxLen := 4
	if c, ok := charset.Lookup(coll); ok {
		maxLen = c.MaxLen
	}
	_, ok = charset.UTF8Chars(v.Bytes(), maxLen) // as MariaDB's utf8mb3/utf8mb4 check it
	return ok
}

// NotStoredError says why the row is refused: column i of t (NotStored).
func NotStoredError(t *tablemap.Table, i int) error {
	name := fmt.Sprintf("column %d", i+1)
	if t != nil && i < len(t.Columns) && t.Columns[i].Name != "" {
		name = "column " + tablemap.QuoteIdent(t.Columns[i].Name)
	}
	return fmt.Errorf("%s holds bytes its character set cannot store, in a row with the ENUM error value '' (index 0), which only a non-strict sql_mode stores; "+
		"under it the target would store '?' for those bytes, with a warning only, so the row is refused (replay it with --to, which stops on the target's warning, or correct the source row)", name)
}
