package binlog

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// readTimeoutDialer wraps dial's connections so that each Read waits at
// most timeout for data: a network stall ends the connection with a
// timeout error. go-mysql's own ReadTimeout does the same by setting a
// deadline three times per packet, reading the clock each time, which
// costs a replication stream more than decoding its events; here the
// deadline is set once per read from the socket (the dump is read
// through a 256 KiB buffer, packet.go).
func readTimeoutDialer(dial client.Dialer, timeout time.Duration) client.Dialer {
	if timeout <= 0 {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &deadlineConn{Conn: c, timeout: timeout}, nil
	}
}

type deadlineConn struct {
	net.Conn
	timeout time.Duration

	mu    sync.Mutex
	fixed bool // a deadline was set from outside: it wins from then on
}

func (c *deadlineConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	if !c.fixed {
		if err := c.Conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
			c.mu.Unlock()
			return 0, err
		}
	}
	c.mu.Unlock()
	return c.Conn.Read(b)
}

// SetReadDeadline sets a deadline that Read keeps: LiveSource sets one to
// end a blocked read when the context of Next ends.
func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fixed = true
	return c.Conn.SetReadDeadline(t)
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fixed = true
	return c.Conn.SetDeadline(t)
}
