package e2e

// A TCP proxy between binlogcdc and a server that can stop forwarding,
// so the stream tests can fake a network stall.

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// stProxy forwards TCP connections from 127.0.0.1 to a server. stall
// makes it stop forwarding on the connections open at that moment (bytes
// read are dropped; nothing is closed: a network stall), while new
// connections are forwarded as usual.
type stProxy struct {
	l      net.Listener
	target string

	mu    sync.Mutex
	pairs []*stPair
}

type stPair struct {
	client, server net.Conn
	stalled        atomic.Bool
	limited        atomic.Bool  // budget applies to the server's bytes
	budget         atomic.Int64 // server bytes still to forward when limited
	once           sync.Once
}

func (p *stPair) close() {
	p.once.Do(func() { p.client.Close(); p.server.Close() })
}

func stStartProxy(t testing.TB, target string) *stProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stProxy{l: l, target: target}
	t.Cleanup(func() {
		l.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.pairs {
			c.close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			to := p.target // retarget may change it
			p.mu.Unlock()
			s, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			pair := &stPair{client: c, server: s}
			p.mu.Lock()
			p.pairs = append(p.pairs, pair)
			p.mu.Unlock()
			go pair.pipe(c, s)
			go pair.pipe(s, c)
		}
	}()
	return p
}

func (p *stPair) pipe(from, to net.Conn) {
	defer p.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 && from == p.server && p.limited.Load() {
			n = int(min(int64(n), max(0, p.budget.Add(-int64(n))+int64(n))))
		}
		if n > 0 && !p.stalled.Load() {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// stall stops forwarding on every open connection.
func (p *stProxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.pairs {
		c.stalled.Store(true)
	}
}

// limit lets every open connection forward only n more bytes from the
// server, then drops the rest (a stall at a chosen point of the stream).
func (p *stProxy) limit(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.pairs {
		c.budget.Store(n)
		c.limited.Store(true)
	}
}

// exhausted reports whether a limited connection has forwarded all it
// was allowed to.
func (p *stProxy) exhausted() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.pairs {
		if c.limited.Load() && c.budget.Load() <= 0 {
			return true
		}
	}
	return false
}

// closeAll closes every open connection (as a server that died does).
func (p *stProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.pairs {
		c.close()
	}
}

// retarget forwards new connections to addr, and closes the open ones
// (a virtual IP moved to another server).
func (p *stProxy) retarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
	p.closeAll()
}

func (p *stProxy) dsn() string { return "mysql://root@" + p.l.Addr().String() }

// stDumpThreads returns the ids of the server's binlog dump threads.
func stDumpThreads(t testing.TB, srv *testserver.Server) []string {
	t.Helper()
	var ids []string
	for _, r := range srv.QueryStrings(t, "SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND LIKE 'Binlog Dump%'") {
		ids = append(ids, *r[0])
	}
	return ids
}
