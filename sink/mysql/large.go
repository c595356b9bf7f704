package mysqlsink

import (
	"bufio"
	"fmt"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
	"github.com/binlogcdc/binlogcdc/sink/sqltext"
)

// Large rows. go-mysql's Stmt.Execute copies every value twice on its way
// to the socket (into a per-parameter buffer, then into the packet), and
// the pipeline (pipeline.go) encodes statements into one buffer: with a
// 200 MB BLOB that is 400 MB on top of the row. A statement whose values
// reach largeStatement is instead written by execStreamed, straight from
// the row's values to the connection, split into protocol packets on the
// way; and a row that large is not copied when it is queued (write), as
// it is executed before Write returns. So replaying a row costs about the
// row itself (held by the decoder) plus a constant.
//
// A statement larger than the target's max_allowed_packet cannot run:
// the server would refuse it after reading it all, or reset the
// connection while we write. It is refused before anything is sent, with
// the size it needs (packetTooLarge, reported by packetError).
const largeStatement = 4 << 20

// largeValue is the size from which a value is sent from where it lies
// rather than copied into the statement's header buffer.
const largeValue = 64 << 10

// argBytes is the size of the values of a statement.
func argBytes(args []change.Value) int {
	n := 0
	for i := range args {
		n += len(args[i].Bytes())
	}
	return n
}

// largePart is a value sent from where it lies: it follows the first at
// bytes of the statement's encoded header and small values.
type largePart struct {
	at   int
	data []byte
}

// isLarge reports whether v is sent as a largePart: a value bound as
// length-prefixed bytes (appendParam's last case) of at least largeValue.
func isLarge(v change.Value) bool {
	switch v.Kind() {
	case change.Null, change.Int, change.Uint, change.Float32, change.Float64, change.Geometry:
		return false
	case change.Enum:
		if v.Uint() == 0 {
			return false
		}
	case change.Set:
		if sqltext.SetByNumber(v) {
			return false // bound as its number
		}
	}
	return len(v.Bytes()) >= largeValue
}

// packetTooLarge is a statement refused before it was sent: it does not
// fit the target's max_allowed_packet.
type packetTooLarge struct {
	need, max int
}

func (e *packetTooLarge) Error() string {
	return fmt.Sprintf("the statement needs %d bytes, more than the target's max_allowed_packet (%d bytes); nothing of it was sent", e.need, e.max)
}

// execStreamed runs st with args like exec, writing the COM_STMT_EXECUTE
// command from the values themselves (see above).
func (s *Sink) execStreamed(st *client.Stmt, args []change.Value) (uint64, error) {
	s.large = s.large[:0]
	head, ok := appendExecuteSplit(s.largeHead[:0], st, args, s.conn.HasCapability(mysql.CLIENT_QUERY_ATTRIBUTES), &s.large)
	s.largeHead = head
	if !ok {
		return 0, fmt.Errorf("cannot bind the statement's %d values to its %d parameters", len(args), st.ParamNum())
	}
	total := len(head) - 4 // the payload, after the packet header appendExecuteSplit left
	for _, p := range s.large {
		total += len(p.data)
	}
	if s.maxAllowedPacket > 0 && total >= s.maxAllowedPacket {
		return 0, &packetTooLarge{need: total, max: s.maxAllowedPacket}
	}
	if s.largeW == nil {
		s.largeW = bufio.NewWriterSize(s.conn, 256<<10)
	} else {
		s.largeW.Reset(s.conn)
	}
	w := packetWriter{w: s.largeW, left: total}
	pos := 4
	for _, p := range s.large {
		w.write(head[pos:p.at])
		w.write(p.data)
		pos = p.at
	}
	w.write(head[pos:])
	w.finish()
	if w.err == nil {
		w.err = s.largeW.Flush()
	}
	s.large = s.large[:0]
	s.largeW.Reset(nil)
	if w.err != nil {
		return 0, fmt.Errorf("%w: writing a %d-byte statement: %v", mysql.ErrBadConn, total, w.err)
	}
	// The reply's sequence number follows the last packet's.
	s.conn.Sequence = w.seq
	data, err := s.conn.ReadPacket()
	if err != nil {
		return 0, err
	}
	switch {
	case len(data) > 0 && data[0] == mysql.OK_HEADER:
		r := s.conn.HandleOKPacket(data)
		s.warnings = r.Warnings
		return r.AffectedRows, nil
	case len(data) > 0 && data[0] == mysql.ERR_HEADER:
		return 0, s.conn.HandleErrorPacket(data)
	}
	return 0, fmt.Errorf("%w: unexpected reply to a statement", mysql.ErrMalformPacket)
}

// packetWriter writes one client command of left bytes as protocol
// packets: at most maxPacket bytes each, a 4-byte header (length,
// sequence) before each, and an empty packet after a full last one.
type packetWriter struct {
	w    *bufio.Writer
	left int   // payload bytes not yet written
	room int   // bytes left in the current packet
	full bool  // the last packet begun is a full one
	seq  uint8 // the next packet's sequence number
	err  error
}

func (p *packetWriter) header() {
	n := min(p.left, maxPacket)
	_, p.err = p.w.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), p.seq})
	p.seq++
	p.room, p.full = n, n == maxPacket
}

func (p *packetWriter) write(b []byte) {
	for len(b) > 0 && p.err == nil {
		if p.room == 0 {
			p.header()
			continue
		}
		n := min(len(b), p.room)
		_, p.err = p.w.Write(b[:n])
		b = b[n:]
		p.room -= n
		p.left -= n
	}
}

func (p *packetWriter) finish() {
	if p.err == nil && p.room == 0 && p.full {
		p.header() // a payload of a multiple of maxPacket ends with an empty packet
	}
}
