// Package mysqlsrc is a fake MySQL replication source for tests (MySQL
// cannot run on the test machine): a server speaking MySQL's protocol
// (go-mysql's server package: handshake, queries, prepared statements,
// COM_REGISTER_SLAVE, KILL) that answers the queries binlogcdc's MySQL path
// issues with values the test sets, and serves COM_BINLOG_DUMP and
// COM_BINLOG_DUMP_GTID from the binlog files it holds (built with
// internal/mysqlsynth), as MySQL 8.0 does: an artificial ROTATE naming
// the file, its FORMAT_DESCRIPTION_EVENT when the dump starts inside it,
// the events as the file holds them (CRC32 included), the next file after
// a ROTATE, heartbeats when idle at the end. A GTID dump starts in the
// first file holding a transaction outside the replica's set (by the
// files' PREVIOUS_GTIDS) and leaves out the transactions in the set.
//
// It is not MySQL: it holds no data and runs no statements; what it
// answers is what the test gave it.
package mysqlsrc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/go-mysql-org/go-mysql/server"
)

// Options are the server's identity.
type Options struct {
	ServerID uint32
	UUID     string // @@server_uuid
	Version  string // VERSION(); "8.0.36-fake" when empty
}

// Server is a running fake source.
type Server struct {
	opts Options
	ln   net.Listener
	conf *server.Server
	mu   sync.Mutex
	cond *sync.Cond
	// files are the server's binlogs, oldest first; executed is its
	// @@gtid_executed.
	files    []*binFile
	executed string
	closed   bool
	conns    map[net.Conn]bool
	byID     map[uint32]net.Conn // for KILL
	wg       sync.WaitGroup
	unknown  []string // the queries it had no answer for
}

type binFile struct {
	name string
	data []byte
}

// Start starts a server on a free 127.0.0.1 port; the test's cleanup
// stops it. The user root logs in without a password.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Version == "" {
		opts.Version = "8.0.36-fake"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{opts: opts, ln: ln, conns: map[net.Conn]bool{}, byID: map[uint32]net.Conn{},
		conf: server.NewServer(opts.Version, mysql.DEFAULT_COLLATION_ID, mysql.AUTH_NATIVE_PASSWORD, nil, nil)}
	s.cond = sync.NewCond(&s.mu)
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.Close)
	return s
}

// DSN is the --source for binlogcdc.
func (s *Server) DSN() string { return "mysql://root@" + s.ln.Addr().String() }

// SetFile adds the binlog file name, or replaces its bytes (a file the
// server goes on writing grows).
func (s *Server) SetFile(name string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := append([]byte(nil), data...)
	for _, f := range s.files {
		if f.name == name {
			f.data = b
			s.cond.Broadcast()
			return
		}
	}
	s.files = append(s.files, &binFile{name: name, data: b})
	s.cond.Broadcast()
}

// Unknown lists the queries it had no answer for (it answered them with
// an error).
func (s *Server) Unknown() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unknown...)
}

// SetExecuted sets @@gtid_executed.
func (s *Server) SetExecuted(set string) {
	s.mu.Lock()
	s.executed = set
	s.mu.Unlock()
}

// Close stops the server and ends its connections.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.cond.Broadcast()
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.conns[nc] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(nc)
	}
}

func (s *Server) serve(nc net.Conn) {
	defer s.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	h := &handler{s: s, ctx: ctx}
	defer func() {
		cancel()
		if h.stream != nil {
			h.stream.AddErrorToStreamer(errors.New("connection closed"))
		}
		h.feeders.Wait()
		nc.Close()
		s.mu.Lock()
		delete(s.conns, nc)
		s.mu.Unlock()
	}()
	c, err := s.conf.NewConn(nc, "root", "", h)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.byID[c.ConnectionID()] = nc
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.byID, c.ConnectionID())
		s.mu.Unlock()
	}()
	for {
		if err := c.HandleCommand(); err != nil {
			return
		}
	}
}

// handler answers one connection.
type handler struct {
	server.EmptyReplicationHandler
	s       *Server
	ctx     context.Context
	stream  *replication.BinlogStreamer
	feeders sync.WaitGroup
}

func (h *handler) UseDB(string) error { return nil }

func result(names []string, row ...any) (*mysql.Result, error) {
	rows := [][]any{}
	if row != nil {
		rows = append(rows, row)
	}
	rs, err := mysql.BuildSimpleTextResultset(names, rows)
	if err != nil {
		return nil, err
	}
	return mysql.NewResult(rs), nil
}

var spaces = regexp.MustCompile(`\s+`)

// HandleQuery answers what binlogcdc asks a MySQL source.
func (h *handler) HandleQuery(q string) (*mysql.Result, error) {
	s := h.s
	s.mu.Lock()
	executed, files := s.executed, s.files
	s.mu.Unlock()
	norm := strings.ToLower(strings.TrimSpace(spaces.ReplaceAllString(q, " ")))
	switch {
	case strings.HasPrefix(norm, "set "):
		return nil, nil
	case strings.HasPrefix(norm, "kill "):
		var id uint32
		if _, err := fmt.Sscanf(strings.TrimPrefix(strings.TrimPrefix(norm, "kill "), "connection "), "%d", &id); err != nil {
			break
		}
		s.mu.Lock()
		nc, ok := s.byID[id]
		s.mu.Unlock()
		if !ok {
			return nil, mysql.NewError(mysql.ER_NO_SUCH_THREAD, fmt.Sprintf("Unknown thread id: %d", id))
		}
		nc.Close()
		return nil, nil
	case norm == "select version(), @@server_id, @@log_bin, @@binlog_format, @@binlog_row_image":
		return result([]string{"VERSION()", "@@server_id", "@@log_bin", "@@binlog_format", "@@binlog_row_image"},
			s.opts.Version, uint64(s.opts.ServerID), int64(1), "ROW", "FULL")
	case norm == "select @@binlog_row_metadata":
		return result([]string{"@@binlog_row_metadata"}, "FULL")
	case norm == "select @@server_id":
		return result([]string{"@@server_id"}, uint64(s.opts.ServerID))
	case norm == "select @@server_uuid":
		return result([]string{"@@server_uuid"}, s.opts.UUID)
	case norm == "select @@global.gtid_executed", norm == "select @@gtid_executed":
		return result([]string{"@@GLOBAL.gtid_executed"}, executed)
	case norm == "select @@gtid_mode", norm == "select @@global.gtid_mode":
		return result([]string{"@@gtid_mode"}, "ON")
	case norm == "select @@binlog_checksum", norm == "select @@global.binlog_checksum":
		return result([]string{"@@binlog_checksum"}, "CRC32")
	case norm == "select current_user()":
		return result([]string{"CURRENT_USER()"}, "root@%")
	case norm == "show binary logs":
		var rows [][]any
		for _, f := range files {
			rows = append(rows, []any{f.name, uint64(len(f.data)), "No"})
		}
		rs, err := mysql.BuildSimpleTextResultset([]string{"Log_name", "File_size", "Encrypted"}, rows)
		if err != nil {
			return nil, err
		}
		return mysql.NewResult(rs), nil
	case norm == "show binary log status", norm == "show master status":
		if len(files) == 0 {
			return result([]string{"File", "Position"})
		}
		f := files[len(files)-1]
		return result([]string{"File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB", "Executed_Gtid_Set"},
			f.name, uint64(len(f.data)), "", "", executed)
	}
	s.mu.Lock()
	s.unknown = append(s.unknown, q)
	s.mu.Unlock()
	return nil, mysql.NewError(mysql.ER_UNKNOWN_ERROR, "mysqlsrc: no answer for "+q)
}

// HandleStmtPrepare takes GTID_SUBSET(?, ?), which History.GTIDSubset
// asks.
func (h *handler) HandleStmtPrepare(q string) (int, int, any, error) {
	if strings.EqualFold(strings.TrimSpace(q), "SELECT GTID_SUBSET(?, ?)") {
		return 2, 1, "subset", nil
	}
	return 0, 0, nil, mysql.NewError(mysql.ER_UNKNOWN_ERROR, "mysqlsrc: cannot prepare "+q)
}

func (h *handler) HandleStmtExecute(ctx any, q string, args []any) (*mysql.Result, error) {
	str := func(v any) string {
		if b, ok := v.([]byte); ok {
			return string(b)
		}
		return fmt.Sprint(v)
	}
	if ctx != "subset" || len(args) != 2 {
		return nil, mysql.NewError(mysql.ER_UNKNOWN_ERROR, "mysqlsrc: cannot execute "+q)
	}
	sub, err1 := mysql.ParseMysqlGTIDSet(str(args[0]))
	set, err2 := mysql.ParseMysqlGTIDSet(str(args[1]))
	if err1 != nil || err2 != nil {
		return nil, mysql.NewError(mysql.ER_MALFORMED_GTID_SET_SPECIFICATION, "Malformed GTID set specification")
	}
	n := int64(0)
	if set.Contain(sub) {
		n = 1
	}
	rs, err := mysql.BuildSimpleBinaryResultset([]string{"GTID_SUBSET(?, ?)"}, [][]any{{n}})
	if err != nil {
		return nil, err
	}
	return mysql.NewResult(rs), nil
}

func (h *handler) HandleStmtClose(any) error { return nil }

func (h *handler) HandleRegisterSlave([]byte) error { return nil }

func (h *handler) HandleBinlogDump(pos mysql.Position) (*replication.BinlogStreamer, error) {
	return h.dump(pos.Name, int64(pos.Pos), nil)
}

func (h *handler) HandleBinlogDumpGTID(set *mysql.MysqlGTIDSet) (*replication.BinlogStreamer, error) {
	return h.dump("", 4, set)
}

// errPurged is MySQL's answer to a dump it cannot serve.
func errPurged(msg string) error {
	return mysql.NewError(mysql.ER_MASTER_FATAL_ERROR_READING_BINLOG, msg)
}

func (h *handler) dump(name string, pos int64, set *mysql.MysqlGTIDSet) (*replication.BinlogStreamer, error) {
	s := h.s
	s.mu.Lock()
	i := -1
	if set != nil {
		var err error
		if i, err = s.gtidStart(set); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	} else {
		for j, f := range s.files {
			if f.name == name {
				i = j
			}
		}
	}
	s.mu.Unlock()
	if i < 0 {
		return nil, errPurged("Could not find first log file name in binary log index file")
	}
	st := replication.NewBinlogStreamerWithChanSize(64)
	h.stream = st
	h.feeders.Add(1)
	go func() {
		defer h.feeders.Done()
		if err := h.feed(st, i, pos, set); err != nil {
			st.AddErrorToStreamer(err)
		}
	}()
	return st, nil
}

// gtidStart is the first file holding a transaction outside set: the
// last whose PREVIOUS_GTIDS set is in set. Under s.mu.
func (s *Server) gtidStart(set *mysql.MysqlGTIDSet) (int, error) {
	start := -1
	for i, f := range s.files {
		prev, err := previousSet(f.data)
		if err != nil {
			return 0, err
		}
		if !set.Contain(prev) {
			break
		}
		start = i
	}
	if start < 0 {
		return 0, errPurged("Cannot replicate because the source purged required binary logs. Replicate the missing transactions from elsewhere, or provision a new replica from backup.")
	}
	return start, nil
}

// previousSet decodes a file's PREVIOUS_GTIDS event (its second).
func previousSet(data []byte) (*mysql.MysqlGTIDSet, error) {
	if len(data) < 4+19 {
		return nil, fmt.Errorf("mysqlsrc: a file of %d bytes", len(data))
	}
	off := 4 + int(binary.LittleEndian.Uint32(data[4+9:]))
	if len(data) < off+19 || data[off+4] != byte(replication.PREVIOUS_GTIDS_EVENT) {
		return nil, fmt.Errorf("mysqlsrc: no PREVIOUS_GTIDS event at %d", off)
	}
	size := int(binary.LittleEndian.Uint32(data[off+9:]))
	return mysql.DecodeMysqlGTIDSet(data[off+19 : off+size-4])
}

// artificial is an event the server makes up for the dump: timestamp 0,
// log_pos logPos, LOG_EVENT_ARTIFICIAL_F, with a CRC32.
func (s *Server) artificial(typ replication.EventType, logPos uint32, body []byte) []byte {
	b := make([]byte, 19, 19+len(body)+4)
	b[4] = byte(typ)
	binary.LittleEndian.PutUint32(b[5:], s.opts.ServerID)
	binary.LittleEndian.PutUint32(b[9:], uint32(19+len(body)+4))
	binary.LittleEndian.PutUint32(b[13:], logPos)
	binary.LittleEndian.PutUint16(b[17:], replication.LOG_EVENT_ARTIFICIAL_F)
	b = append(b, body...)
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// feed sends file i from pos, then the files after it; at the end of the
// newest it waits for more, sending a heartbeat when nothing came for a
// while. With set, the transactions in it are left out.
func (h *handler) feed(st *replication.BinlogStreamer, i int, pos int64, set *mysql.MysqlGTIDSet) error {
	s := h.s
	send := func(raw []byte) error {
		return st.AddEventToStreamer(&replication.BinlogEvent{RawData: raw})
	}
	for {
		s.mu.Lock()
		f := s.files[i]
		data := f.data
		s.mu.Unlock()
		rot := binary.LittleEndian.AppendUint64(nil, uint64(pos))
		if err := send(s.artificial(replication.ROTATE_EVENT, 0, append(rot, f.name...))); err != nil {
			return err
		}
		if pos > 4 {
			// The file's FORMAT_DESCRIPTION_EVENT, log_pos 0: not a
			// real event of the stream.
			size := int(binary.LittleEndian.Uint32(data[4+9:]))
			fde := append([]byte(nil), data[4:4+size-4]...)
			binary.LittleEndian.PutUint32(fde[13:], 0)
			fde[17] &^= 1
			if err := send(binary.LittleEndian.AppendUint32(fde, crc32.ChecksumIEEE(fde))); err != nil {
				return err
			}
		}
		skipping := false
		for {
			if int(pos)+19 > len(data) {
				s.mu.Lock()
				for len(f.data) == len(data) && i == len(s.files)-1 && !s.closed && h.ctx.Err() == nil {
					s.mu.Unlock()
					if err := send(s.artificial(replication.HEARTBEAT_EVENT, uint32(pos), []byte(f.name))); err != nil {
						return err
					}
					s.mu.Lock()
					waitFor(s.cond, 50*time.Millisecond)
				}
				data = f.data
				more := i < len(s.files)-1
				done := s.closed || h.ctx.Err() != nil
				s.mu.Unlock()
				if done {
					return errors.New("closed")
				}
				if int(pos)+19 > len(data) {
					if !more {
						continue
					}
					i, pos = i+1, 4
					break
				}
			}
			size := int(binary.LittleEndian.Uint32(data[pos+9:]))
			if int(pos)+size > len(data) {
				// A torn tail: wait for the rest.
				s.mu.Lock()
				waitFor(s.cond, 50*time.Millisecond)
				data = f.data
				s.mu.Unlock()
				continue
			}
			raw := data[pos : int(pos)+size]
			pos += int64(size)
			typ := replication.EventType(raw[4])
			if set != nil && typ == replication.GTID_EVENT {
				skipping = set.Contain(oneGTID(raw))
			}
			if skipping && typ != replication.ROTATE_EVENT {
				continue
			}
			if err := send(raw); err != nil {
				return err
			}
			if typ == replication.ROTATE_EVENT {
				i, pos = i+1, 4
				s.mu.Lock()
				for i >= len(s.files) && !s.closed && h.ctx.Err() == nil {
					waitFor(s.cond, 50*time.Millisecond)
				}
				s.mu.Unlock()
				break
			}
		}
	}
}

// oneGTID is the set of a GTID_LOG_EVENT's transaction.
func oneGTID(raw []byte) *mysql.MysqlGTIDSet {
	set := mysql.NewMysqlGTIDSet()
	body := raw[19:]
	if len(body) < 25 {
		return &set
	}
	var u [16]byte
	copy(u[:], body[1:17])
	set.AddGTID(u, int64(binary.LittleEndian.Uint64(body[17:])))
	return &set
}

// waitFor waits on c (its lock held) until a broadcast or d passed.
func waitFor(c *sync.Cond, d time.Duration) {
	t := time.AfterFunc(d, c.Broadcast)
	c.Wait()
	t.Stop()
}
