// Package sqltext turns changes into SQL: the statement shapes (INSERT,
// UPDATE, DELETE) shared by every SQL output, exact literals, and two
// sinks that write SQL text: Sink (binlogcdc read --format sql) and
// Flashback (--flashback, the statements that undo the changes).
//
// sink/mysql builds the same statements with placeholders through Builder
// and binds the values instead of writing literals.
//
// # Literals
//
// Literals are exact whatever the session's sql_mode (NO_BACKSLASH_ESCAPES,
// ANSI_QUOTES) and character set:
//
//   - identifiers: `name`, backticks doubled;
//   - text: _utf8mb4'…' with quotes doubled; text holding a backslash or a
//     control character other than tab and newline is written as
//     _utf8mb4 X'…' instead, so no backslash ever appears in a literal;
//   - binary strings, GEOMETRY (SRID + WKB), VECTOR: X'…';
//   - integers and DECIMAL: plain numbers (DECIMAL literals are exact);
//   - FLOAT and DOUBLE: approximate-value literals (1.5e+00) holding the
//     exact double, so a FLOAT column stores the same float and compares
//     equal to it;
//   - temporal values: '…' (their text is digits, '-', ':', '.', ' ');
//   - SET: its labels as text, or its bitmask where that text does not
//     read back as the same members (SetByNumber).
package sqltext

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/binlogcdc/binlogcdc/change"
)

// AppendIdent appends name as a quoted identifier.
func AppendIdent(b []byte, name string) []byte {
	b = append(b, '`')
	for i := 0; i < len(name); i++ {
		if name[i] == '`' {
			b = append(b, '`')
		}
		b = append(b, name[i])
	}
	return append(b, '`')
}

// QuoteIdent returns name as a quoted identifier.
func QuoteIdent(name string) string { return string(AppendIdent(nil, name)) }

// AppendTableName appends `db`.`name` (or `name` when db is empty).
func AppendTableName(b []byte, db, name string) []byte {
	if db != "" {
		b = AppendIdent(b, db)
		b = append(b, '.')
	}
	return AppendIdent(b, name)
}

// AppendText appends s as an exact utf8mb4 string literal.
func AppendText(b []byte, s []byte) []byte {
	if !plainText(s) {
		return AppendHexText(b, s)
	}
	b = append(b, "_utf8mb4'"...)
	for _, c := range s {
		if c == '\'' {
			b = append(b, '\'')
		}
		b = append(b, c)
	}
	return append(b, '\'')
}

// AppendHexText appends s as _utf8mb4 X'…'.
func AppendHexText(b []byte, s []byte) []byte {
	b = append(b, "_utf8mb4 "...)
	return AppendHex(b, s)
}

// AppendHex appends s as a hexadecimal (binary string) literal X'…'.
func AppendHex(b []byte, s []byte) []byte {
	b = append(b, "X'"...)
	b = hex.AppendEncode(b, s)
	return append(b, '\'')
}

// GeometryBytes returns a Geometry value in MySQL's internal format: the
// SRID as 4 little-endian bytes, then the WKB. A GEOMETRY column accepts
// it as is.
func GeometryBytes(v change.Value) []byte {
	wkb := v.Bytes()
	out := make([]byte, 4, 4+len(wkb))
	binary.LittleEndian.PutUint32(out, uint32(v.Uint()))
	return append(out, wkb...)
}

// AppendFloat appends f as an approximate-value literal that parses back
// to exactly f.
func AppendFloat(b []byte, f float64) []byte {
	return strconv.AppendFloat(b, f, 'e', -1, 64)
}

// SetByNumber reports whether the SET value v must be written as its
// bitmask. Its text is the server's: the members' labels joined with
// ',', with no ',' before the first label written, so a member whose
// label is ” vanishes when no label precedes it (” for that member
// alone, 'x' for it and 'x'), and the text reads back without it. The
// text has fewer labels than v has members exactly then; the bitmask
// reads back as the same members.
func SetByNumber(v change.Value) bool { return v.SetLostEmpty() }

// AppendLiteral appends v as an exact SQL literal. It fails only for a
// value whose text is not what its kind promises (which the decoder never
// produces), so that nothing unchecked is ever spliced into SQL.
func AppendLiteral(b []byte, v change.Value) ([]byte, error) {
	switch v.Kind() {
	case change.Null:
		return append(b, "NULL"...), nil
	case change.Int:
		return strconv.AppendInt(b, v.Int(), 10), nil
	case change.Uint:
		return strconv.AppendUint(b, v.Uint(), 10), nil
	case change.Float32, change.Float64:
		return AppendFloat(b, v.Float()), nil
	case change.Decimal:
		if !onlyBytes(v.Bytes(), "0123456789.-") || len(v.Bytes()) == 0 {
			return b, fmt.Errorf("sqltext: bad DECIMAL text %q", v.Bytes())
		}
		return append(b, v.Bytes()...), nil
	case change.Date, change.Datetime, change.Timestamp, change.Time:
		if !onlyBytes(v.Bytes(), "0123456789.-: ") {
			return b, fmt.Errorf("sqltext: bad %s text %q", v.Kind(), v.Bytes())
		}
		b = append(b, '\'')
		b = append(b, v.Bytes()...)
		return append(b, '\''), nil
	case change.Enum:
		if v.Uint() == 0 {
			// The error value: '' would store the member '' where the
			// ENUM has one. The number 0 stores index 0, under a
			// non-strict sql_mode (see EnumErrors).
			return append(b, '0'), nil
		}
		return AppendText(b, v.Bytes()), nil
	case change.Set:
		if SetByNumber(v) {
			return strconv.AppendUint(b, v.Uint(), 10), nil
		}
		return AppendText(b, v.Bytes()), nil
	case change.String, change.JSON:
		return AppendText(b, v.Bytes()), nil
	case change.Bytes, change.Vector:
		return AppendHex(b, v.Bytes()), nil
	case change.Geometry:
		return AppendHex(b, GeometryBytes(v)), nil
	}
	return b, fmt.Errorf("sqltext: no literal for a %s value", v.Kind())
}

func onlyBytes(s []byte, allowed string) bool {
	for _, c := range s {
		ok := false
		for i := 0; i < len(allowed); i++ {
			if allowed[i] == c {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
