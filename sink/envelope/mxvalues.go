package envelope

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/tablemap"
)

// Where Maxwell's values differ from the binlog's as binlogcdc reads
// them (its tests, src/test/resources/sql/json/test_blob and
// test_zero_created_at, say what it writes).

// unpad returns a BINARY(n) value without the trailing 0x00 bytes
// binlogcdc restores: Maxwell writes the bytes as the binlog logs them,
// with the padding stripped (test_blob: x'00010203' in a BINARY(10) is
// "AAECAw=="). Snapshot rows, which a SELECT returns padded, are written
// the same way, so that a row reads the same whether it came from the
// snapshot or the binlog.
func (m *maxwell) unpad(col *tablemap.Column, b []byte) []byte {
	if col.Type != mysql.MYSQL_TYPE_STRING {
		return b
	}
	return bytes.TrimRight(b, "\x00")
}

// mxZeroDate: a DATE or DATETIME whose month or day is zero but which
// is not all zero ('0003-00-00 00:00:01') names no instant; Maxwell's
// binlog reader gives up on it and writes the zero date of the column's
// shape ("0000-00-00 00:00:00", with the column's fractional digits).
func mxZeroDate(s []byte) []byte {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' || (string(s[5:7]) != "00" && string(s[8:10]) != "00") {
		return s
	}
	for _, c := range s {
		if c >= '1' && c <= '9' {
			z := []byte(string(s))
			for i, c := range z {
				if c >= '0' && c <= '9' {
					z[i] = '0'
				}
			}
			return z
		}
	}
	return s
}

// appendQuery writes the row's statement (output_row_query), in pieces
// when it is large.
func (m *maxwell) appendQuery(b []byte, q string) []byte {
	if m.active && len(q) >= largeValue {
		return m.str(b, []byte(q))
	}
	return appendString(b, q)
}

// appendUUID appends a random (version 4) UUID, as Java's
// UUID.randomUUID writes it.
func appendUUID(b []byte) []byte {
	var u [16]byte
	_, _ = rand.Read(u[:]) // crypto/rand.Read never fails (Go 1.24+)
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	var h [32]byte
	hex.Encode(h[:], u[:])
	b = append(b, h[:8]...)
	b = append(b, '-')
	b = append(b, h[8:12]...)
	b = append(b, '-')
	b = append(b, h[12:16]...)
	b = append(b, '-')
	b = append(b, h[16:20]...)
	b = append(b, '-')
	return append(b, h[20:]...)
}

// appendBootstrapMark writes the rest of Maxwell's bootstrap-start or
// bootstrap-complete record (after `"type":"`), which brackets a table's
// bootstrap-insert rows: {…,"type":"bootstrap-start","ts":…,"data":{}}.
func appendBootstrapMark(b []byte, c *change.Change) []byte {
	if c.Mark == change.MarkTableStart {
		b = append(b, "bootstrap-start"...)
	} else {
		b = append(b, "bootstrap-complete"...)
	}
	b = append(b, `","ts":`...)
	b = strconv.AppendInt(b, c.Time.Unix(), 10)
	return append(b, `,"data":{}`...)
}
