package snapshot

import (
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// textCell is one column of a text-protocol result row: its text, or
// NULL. The text points into the row's packet: valid until the next row.
type textCell struct {
	b    []byte
	null bool
}

// errRowsTaken ends ExecuteSelectStreaming once selectText has read the
// rows itself.
var errRowsTaken = errors.New("snapshot: result rows read by selectText")

// selectText runs q and calls fn with each row's cells, read in place
// from the packet: no per-row or per-field copies or allocations
// (go-mysql's row parsing copies each field and parses numbers the
// converter reads as text anyway; a snapshot spent 7% of its CPU there).
// go-mysql sends the query and reads the column definitions; the rows
// and the result's end are read here.
func selectText(c *client.Conn, q string, ncols int, fn func([]textCell) error) error {
	if ok, err := wireSelect(c, q, ncols, fn); ok { // wire.go
		return err
	}
	var result mysql.Result
	var rowsErr error
	err := c.ExecuteSelectStreaming(q, &result, func([]mysql.FieldValue) error {
		return errors.New("snapshot: a row reached go-mysql's row reader") // cannot happen: perResult reads them
	}, func(r *mysql.Result) error {
		if len(r.Fields) != ncols {
			rowsErr = fmt.Errorf("the query returned %d columns, not %d", len(r.Fields), ncols)
		} else {
			var pb packetBuf
			rowsErr = readTextRows(func() ([]byte, error) { return pb.read(c) }, c, ncols, fn)
		}
		return errRowsTaken
	})
	if errors.Is(err, errRowsTaken) {
		return rowsErr
	}
	if err == nil {
		return fmt.Errorf("the query returned no result set")
	}
	return err
}

// readTextRows reads row packets up to the result's end (an EOF packet,
// or the OK packet that replaces it with CLIENT_DEPRECATE_EOF).
func readTextRows(next func() ([]byte, error), c *client.Conn, ncols int, fn func([]textCell) error) error {
	cells := make([]textCell, ncols)
	for {
		data, err := next()
		if err != nil {
			return err
		}
		if len(data) == 0 {
			return mysql.ErrMalformPacket
		}
		switch {
		case data[0] == mysql.EOF_HEADER && len(data) < 0xffffff:
			// The end (EOF, or OK with CLIENT_DEPRECATE_EOF): a row whose
			// first field is 2^24 bytes or more starts with 0xfe too, but
			// its packet is longer.
			return nil
		case data[0] == mysql.ERR_HEADER:
			return c.HandleErrorPacket(append([]byte(nil), data...))
		}
		if err := parseTextRow(data, cells); err != nil {
			return err
		}
		if err := fn(cells); err != nil {
			return err
		}
	}
}

// parseTextRow splits a text-protocol row into its length-encoded
// strings (0xfb: NULL).
func parseTextRow(p []byte, cells []textCell) error {
	pos := 0
	for i := range cells {
		if pos >= len(p) {
			return fmt.Errorf("row packet of %d bytes ends before column %d: %w", len(p), i+1, mysql.ErrMalformPacket)
		}
		var n uint64
		switch h := p[pos]; {
		case h < 0xfb:
			n = uint64(h)
			pos++
		case h == 0xfb:
			cells[i] = textCell{null: true}
			pos++
			continue
		case h == 0xfc && pos+3 <= len(p):
			n = uint64(p[pos+1]) | uint64(p[pos+2])<<8
			pos += 3
		case h == 0xfd && pos+4 <= len(p):
			n = uint64(p[pos+1]) | uint64(p[pos+2])<<8 | uint64(p[pos+3])<<16
			pos += 4
		case h == 0xfe && pos+9 <= len(p):
			for k := 8; k >= 1; k-- {
				n = n<<8 | uint64(p[pos+k])
			}
			pos += 9
		default:
			return fmt.Errorf("row packet: bad length of column %d: %w", i+1, mysql.ErrMalformPacket)
		}
		if n > uint64(len(p)-pos) {
			return fmt.Errorf("row packet: column %d of %d bytes runs past its end: %w", i+1, n, mysql.ErrMalformPacket)
		}
		end := pos + int(n)
		cells[i] = textCell{b: p[pos:end:end]}
		pos = end
	}
	if pos != len(p) {
		return fmt.Errorf("row packet: %d bytes after its %d columns: %w", len(p)-pos, len(cells), mysql.ErrMalformPacket)
	}
	return nil
}

// packetBuf holds one packet's payload, reused from packet to packet.
type packetBuf struct{ b []byte }

func (p *packetBuf) Write(d []byte) (int, error) {
	p.b = append(p.b, d...)
	return len(d), nil
}

// read reads the next packet. Uncompressed, the payload goes straight
// into p (ReadPacketReuseMem copies it through a pooled buffer first: a
// copy of every row, and 2 pool round trips per row).
func (p *packetBuf) read(c *client.Conn) ([]byte, error) {
	p.b = p.b[:0]
	var err error
	if c.Compression != mysql.MYSQL_COMPRESS_NONE {
		p.b, err = c.ReadPacketReuseMem(p.b)
	} else {
		err = c.ReadPacketTo(p)
	}
	return p.b, err
}
