package verify

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// The proof of equality. Each side's rows are read once, in the side's
// consistent snapshot, with the binary protocol (integers, FLOAT and
// DOUBLE as their stored bits, DECIMAL values as exact text, temporal
// values without fractional seconds as their number (col+0:
// YYYYMMDDhhmmss), others as their exact text (CAST AS BINARY, with
// every fractional digit of the column; a TIMESTAMP in UTC), strings as
// their bytes), and every row is encoded without
// ambiguity: per column a tag (NULL, integer, float, string) and, for a
// string, its length before its bytes. ENUM and SET columns are read as
// their label and their number (the '' member and the error value 0
// have the same label, 1 and 0 of SET('','x') too). A TEXT or BLOB value
// longer than bigValue is read as its length and MD5 instead of its
// bytes, so that one row never needs more than bigValue bytes per
// column of memory.
//
// The digest of a side is the number of rows and two sums, each of a
// different 64-bit word of the SHA-256 of every row's encoding, added
// without overflow (128-bit sums). It does not depend on the order of
// the rows, so tables without a key are compared as multisets. Two
// different multisets of rows have the same digest only when, for some
// row, a multiple of each of two independent 64-bit words equals a
// value fixed by the other rows: with SHA-256 as a random function, a
// probability of at most 2^-128 per table (and per MD5 of a long value,
// 2^-128 more).

// bigValue is the longest TEXT/BLOB value read as it is.
const bigValue = 65536

// blobTypes are read as their bytes up to bigValue, else as MD5.
var blobTypes = map[string]bool{"tinyblob": true, "blob": true, "mediumblob": true, "longblob": true,
	"tinytext": true, "text": true, "mediumtext": true, "longtext": true, "json": true,
	"geometry": true, "point": true, "linestring": true, "polygon": true, "multipoint": true,
	"multilinestring": true, "multipolygon": true, "geometrycollection": true}

var temporalTypes = map[string]bool{"date": true, "datetime": true, "timestamp": true, "time": true}

// digest is a side's summary of a table's rows.
type digest struct {
	rows uint64
	sum  [2][2]uint64 // two 128-bit sums (high, low)
}

// streamSelect is the query that reads every row for the digest.
func streamSelect(cols []column, t *tableInfo) string {
	var exprs []string
	for _, c := range cols {
		ref := quote(c.name)
		switch {
		case blobTypes[c.dataType]:
			exprs = append(exprs, fmt.Sprintf("IF(LENGTH(%s) > %d, NULL, %s)", ref, bigValue, ref),
				fmt.Sprintf("IF(LENGTH(%s) > %d, CONCAT(LENGTH(%s), ':', MD5(%s)), NULL)", ref, bigValue, ref, ref))
		case c.asBytes:
			exprs = append(exprs, "UNHEX(HEX("+ref+"))")
		case c.dataType == "enum" || c.dataType == "set":
			exprs = append(exprs, ref, ref+"+0")
		case temporalTypes[c.dataType] && !strings.Contains(c.typ, "("):
			// Without fractional seconds: its number, YYYYMMDDhhmmss
			// (an integer, one to one with the value), cheaper for the
			// server than its text and for the client than the binary
			// protocol's temporal fields.
			exprs = append(exprs, ref+"+0")
		case temporalTypes[c.dataType]:
			// Its exact text (all the column's fractional digits),
			// formatted by the server: its number would be a DECIMAL,
			// which costs the server more (measured: docs/performance.md).
			exprs = append(exprs, "CAST("+ref+" AS BINARY)")
		default:
			exprs = append(exprs, ref)
		}
	}
	q := "SELECT "
	for i, e := range exprs {
		if i > 0 {
			q += ", "
		}
		q += e
	}
	return q + " FROM " + scope(t, "")
}

// rowDigest reads every row of t and returns their digest.
func (s *side) rowDigest(cols []column, t *tableInfo) (digest, error) {
	var d digest
	q := streamSelect(cols, t)
	stmt, err := s.q.Prepare(q)
	if err != nil {
		return d, fmt.Errorf("%s: %s: %w", s.name, clip(q), err)
	}
	defer stmt.Close()
	h := sha256.New()
	var buf []byte
	var sum [sha256.Size]byte
	var res mysql.Result
	err = stmt.ExecuteSelectStreaming(&res, func(row []mysql.FieldValue) error {
		buf = encodeRow(buf[:0], row)
		h.Reset()
		h.Write(buf)
		h.Sum(sum[:0])
		d.add(binary.LittleEndian.Uint64(sum[0:8]), binary.LittleEndian.Uint64(sum[8:16]))
		return nil
	}, nil)
	if err != nil {
		return d, fmt.Errorf("%s: %s: %w", s.name, clip(q), err)
	}
	return d, nil
}

// add counts a row whose hash words are a and b.
func (d *digest) add(a, b uint64) {
	d.rows++
	for i, w := range []uint64{a, b} {
		var carry uint64
		d.sum[i][1], carry = bits.Add64(d.sum[i][1], w, 0)
		d.sum[i][0] += carry
	}
}

// Field tags of the row encoding.
const (
	tagNull   byte = iota
	tagUint        // an integer >= 0, 8 bytes
	tagInt         // an integer < 0, 8 bytes
	tagFloat       // FLOAT or DOUBLE: the bits of the float64, 8 bytes
	tagString      // length (uvarint), bytes
)

// encodeRow appends the row's unambiguous encoding to buf. An integer
// is the same whether the column is signed or not (a definition
// difference is reported as such; the values compare by value).
func encodeRow(buf []byte, row []mysql.FieldValue) []byte {
	for i := range row {
		v := &row[i]
		switch v.Type {
		case mysql.FieldValueTypeNull:
			buf = append(buf, tagNull)
		case mysql.FieldValueTypeUnsigned:
			buf = binary.LittleEndian.AppendUint64(append(buf, tagUint), v.AsUint64())
		case mysql.FieldValueTypeSigned:
			if n := v.AsInt64(); n >= 0 {
				buf = binary.LittleEndian.AppendUint64(append(buf, tagUint), uint64(n))
			} else {
				buf = binary.LittleEndian.AppendUint64(append(buf, tagInt), uint64(n))
			}
		case mysql.FieldValueTypeFloat:
			buf = binary.LittleEndian.AppendUint64(append(buf, tagFloat), math.Float64bits(v.AsFloat64()))
		default:
			b := v.AsString()
			buf = binary.AppendUvarint(append(buf, tagString), uint64(len(b)))
			buf = append(buf, b...)
		}
	}
	return buf
}
