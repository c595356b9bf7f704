package mysqlsink

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/packet"

	"github.com/binlogcdc/binlogcdc/change"
)

// scriptConn is a net.Conn that replays scripted server packets and
// records what the client writes.
type scriptConn struct {
	in  bytes.Buffer
	out bytes.Buffer
}

func (c *scriptConn) Read(b []byte) (int, error)       { return c.in.Read(b) }
func (c *scriptConn) Write(b []byte) (int, error)      { return c.out.Write(b) }
func (c *scriptConn) Close() error                     { return nil }
func (c *scriptConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *scriptConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *scriptConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(time.Time) error { return nil }

func (c *scriptConn) packet(seq byte, payload ...byte) {
	n := len(payload)
	c.in.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq})
	c.in.Write(payload)
}

// appendExecute writes the bytes go-mysql's Stmt.Execute writes for the
// same values bound by bindValue.
func TestAppendExecuteMatchesGoMySQL(t *testing.T) {
	cases := [][]change.Value{
		{change.IntValue(-42)},
		{change.UintValue(18446744073709551615), change.IntValue(1)},
		{change.NullValue()},
		{change.NullValue(), change.NullValue()},
		{change.IntValue(7), change.NullValue(), change.TextValue(change.String, []byte("héllo")),
			change.Float64Value(-2.5), change.Float32Value(1.25),
			change.TextValue(change.Decimal, []byte("24632.39")), change.TextValue(change.Datetime, []byte("2024-01-01 00:00:00.000001")),
			change.EnumValue(2, []byte("paid")), change.SetValue(5, []byte("a,c")), change.TextValue(change.JSON, []byte(`{"a":1}`)),
			change.TextValue(change.Bytes, []byte{0, 1, 2}), change.TextValue(change.Bytes, nil),
			change.GeometryValue(4326, []byte{1, 1, 0, 0, 0}), change.TextValue(change.Vector, []byte{0, 0, 128, 63})},
		{change.TextValue(change.String, bytes.Repeat([]byte("x"), 300))},
		{change.TextValue(change.String, bytes.Repeat([]byte("y"), 70000))},
		{},
	}
	for i, args := range cases {
		sc := &scriptConn{}
		// COM_STMT_PREPARE reply: OK, statement id 0x01020304, 0 columns,
		// len(args) params, their definitions, EOF.
		ok := []byte{0, 4, 3, 2, 1, 0, 0, byte(len(args)), byte(len(args) >> 8), 0, 0, 0}
		sc.packet(1, ok...)
		seq := byte(2)
		if len(args) > 0 {
			for range args {
				sc.packet(seq, 'p')
				seq++
			}
			sc.packet(seq, 0xfe, 0, 0, 2, 0)
		}
		// COM_STMT_EXECUTE reply: OK, 1 row.
		sc.packet(1, 0, 1, 0, 2, 0, 0, 0)
		c := &client.Conn{Conn: packet.NewConn(sc)}
		st, err := c.Prepare("X")
		if err != nil {
			t.Fatal(err)
		}
		sc.out.Reset()
		var bound []any
		for _, v := range args {
			a, err := bindValue(v)
			if err != nil {
				t.Fatal(err)
			}
			bound = append(bound, a)
		}
		r, err := st.Execute(bound...)
		if err != nil {
			t.Fatal(err)
		}
		if r.AffectedRows != 1 {
			t.Fatalf("affected %d", r.AffectedRows)
		}
		got, okEnc := appendExecute([]byte("prefix"), st, args, false)
		if !okEnc {
			t.Fatalf("case %d: appendExecute refused", i)
		}
		if !bytes.Equal(got[6:], sc.out.Bytes()) {
			t.Errorf("case %d:\n got %x\nwant %x", i, got[6:], sc.out.Bytes())
		}
		if binary.LittleEndian.Uint32(got[6+5:]) != 0x01020304 {
			t.Errorf("case %d: statement id", i)
		}
	}
	// A value bindValue refuses, and a wrong count, are refused.
	st := &client.Stmt{}
	st.Params = 1
	if _, ok := appendExecute(nil, st, []change.Value{{}}, false); ok {
		t.Error("an Absent value was encoded")
	}
	if _, ok := appendExecute(nil, st, nil, false); ok {
		t.Error("a wrong argument count was encoded")
	}
}
