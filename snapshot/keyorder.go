package snapshot

import (
	"fmt"
	"strings"

	"github.com/binlogcdc/binlogcdc/tablemap"
)

// keyTypes are the column types (as SHOW COLUMNS names them, without
// length or attributes) whose order binlogcdc reproduces exactly: for a
// key of whole columns of these types, the server's ORDER BY of the key,
// pipeline.CompareKeys on the values the snapshot and the binlog decode,
// and the condition sqltext.KeyRange writes ("key > after") agree row
// for row. keyorder_server_test.go proves each against a real MariaDB
// with hostile values. This one list decides, for a snapshot resumed
// after a kill (Copy) and for an incremental snapshot (ChunkReader),
// whether a table is read in key ranges or whole.
//
// INET4 and INET6 are in: MariaDB stores them as BINARY(4)/BINARY(16),
// most significant byte first, and orders them by those bytes; the
// snapshot reads and the binlog logs those bytes, and a binary literal
// of 4 or 16 bytes compares with the column as that address (MariaDB's
// documented binary form; IPv4-mapped and -compatible addresses are
// ordinary 16-byte values).
//
// Left out, and read whole:
//   - text in any collation, _bin ones included (PAD SPACE, case and
//     accent folding, multi-byte weights);
//   - FLOAT and DOUBLE (-0 = 0, the text of a float is not its order);
//   - UUID: MariaDB orders it by its time fields, not by the 16 bytes;
//   - BLOB types: a BLOB key always has a prefix part (the server
//     refuses one without), and a prefix part orders by the prefix only;
//   - a SET of 64 members: the server orders it by its bitmask unsigned,
//     but compares it with a number as signed (the 64th member makes it
//     negative), so "key > after" would leave rows out;
//   - anything else (JSON, GEOMETRY, VECTOR…).
var keyTypes = map[string]bool{
	"tinyint": true, "smallint": true, "mediumint": true, "int": true, "integer": true, "bigint": true,
	"year": true, "bit": true, "decimal": true, "numeric": true,
	"date": true, "datetime": true, "timestamp": true, "time": true,
	"enum": true, "set": true,
	"binary": true, "varbinary": true, "inet4": true, "inet6": true,
}

// chunkable reports whether the table can be read in key ranges (see
// keyTypes).
func chunkable(ts *tableSchema) bool { return wholeReason(ts) == "" }

// wholeReason says why the table is read whole, "" when it can be read in
// key ranges.
func wholeReason(ts *tableSchema) string {
	t := ts.table
	if len(t.PrimaryKey) == 0 {
		return "no primary key"
	}
	for i, k := range t.PrimaryKey {
		name := tablemap.QuoteIdent(t.Columns[k].Name)
		if i < len(t.PrimaryKeyPrefix) && t.PrimaryKeyPrefix[i] > 0 {
			return fmt.Sprintf("its key has a prefix part (%s(%d))", name, t.PrimaryKeyPrefix[i])
		}
		if k >= len(ts.showTypes) || !keyTypes[baseType(ts.showTypes[k])] {
			typ := ""
			if k < len(ts.showTypes) {
				typ = ts.showTypes[k]
			}
			return fmt.Sprintf("its key column %s is %s, whose order binlogcdc does not reproduce exactly", name, typ)
		}
		if len(t.Columns[k].SetValues) > 63 {
			return fmt.Sprintf("its key column %s is a SET of 64 members (the server orders it by the unsigned bitmask but compares it with a number as signed)", name)
		}
	}
	return ""
}

// baseType is a SHOW COLUMNS type without length or attributes:
// "int(10) unsigned" → "int".
func baseType(show string) string {
	base := strings.ToLower(show)
	if i := strings.IndexAny(base, "( "); i >= 0 {
		base = base[:i]
	}
	return base
}
