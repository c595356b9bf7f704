package binlog

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/binlogcdc/binlogcdc/change"
)

// MariaDB's COM_BINLOG_DUMP flag asking for ANNOTATE_ROWS events.
const dumpSendAnnotateRows = 2

// dialReplica logs in to the server for a binlog dump. go-mysql does the
// handshake, authentication and TLS; it passes ctx only to the dial, so
// the connection is closed when ctx ends (ctxDialer) and each read waits
// at most cfg.ReadTimeout (readTimeoutDialer): a server that accepts but
// never answers cannot hold the caller.
func dialReplica(ctx context.Context, cfg LiveConfig) (*client.Conn, error) {
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return client.ConnectWithDialer(dctx, "", addr, cfg.User, string(cfg.Password), "",
		readTimeoutDialer(ctxDialer(ctx), cfg.ReadTimeout), func(c *client.Conn) error {
			c.SetTLSConfig(cfg.TLS)
			c.SetAttributes(map[string]string{"_client_role": "binary_log_listener"})
			return nil
		})
}

// startDump registers c as a replica and sends the dump command: from
// start, or, with set, after the GTID set. What it asks for is what
// go-mysql's BinlogSyncer asked for (in raw mode, without semi-sync):
//
//   - @master_binlog_checksum / @source_binlog_checksum: we can handle
//     checksums, so the server sends the events as its binlog holds them
//     (with their CRC32 when binlog_checksum is on; the framer checks it);
//   - the heartbeat period, in nanoseconds;
//   - MariaDB: slave capability 4 (GTID events), and for a GTID start
//     @slave_connect_state and strict mode, then COM_BINLOG_DUMP;
//   - MySQL: for a GTID start COM_BINLOG_DUMP_GTID with the encoded set.
//
// The server's answer to the dump command (events, or an error such as
// ER 1236 for a purged file) comes through the dumpReader.
func startDump(c *client.Conn, cfg LiveConfig, start change.Position, set mysql.GTIDSet) error {
	uuid, err := newUUID()
	if err != nil {
		return err
	}
	hb := cfg.Heartbeat.Nanoseconds()
	q := fmt.Sprintf("SET @master_binlog_checksum='NONE', @source_binlog_checksum='NONE', "+
		"@master_heartbeat_period=%d, @source_heartbeat_period=%d, @slave_uuid='%s', @replica_uuid='%s'", hb, hb, uuid, uuid)
	if cfg.Flavor == mysql.MariaDBFlavor {
		q += ", @mariadb_slave_capability=4"
		if set != nil {
			// ParseGTIDSet accepted it: digits, '-' and ',' only.
			q += fmt.Sprintf(", @slave_connect_state='%s', @slave_gtid_strict_mode=1", set.String())
		}
	}
	if _, err := c.Execute(q); err != nil {
		return err
	}
	c.ResetSequence()
	if err := c.WritePacket(registerReplica(cfg)); err != nil {
		return err
	}
	if _, err := c.ReadOKPacket(); err != nil {
		return err
	}
	var flags uint16
	if cfg.AnnotateRows && cfg.Flavor == mysql.MariaDBFlavor {
		flags |= dumpSendAnnotateRows
	}
	c.ResetSequence()
	switch {
	case set != nil && cfg.Flavor != mysql.MariaDBFlavor:
		return c.WritePacket(dumpGTIDCommand(cfg.ServerID, set.Encode()))
	case set != nil:
		// MariaDB: the start is @slave_connect_state; file and offset
		// are ignored.
		return c.WritePacket(dumpCommand(cfg.ServerID, flags, "", 0))
	}
	off := start.Offset
	if off < 4 {
		off = 4
	}
	return c.WritePacket(dumpCommand(cfg.ServerID, flags, start.File, uint32(off)))
}

// registerReplica is COM_REGISTER_SLAVE: our server id, this host's name
// (at most 255 bytes), the user, no password, the port; rank and source
// id 0. The first 4 bytes are room for the packet header.
func registerReplica(cfg LiveConfig) []byte {
	host, _ := os.Hostname()
	host = host[:min(len(host), 255)]
	user := cfg.User[:min(len(cfg.User), 255)]
	b := make([]byte, 4, 4+1+4+1+len(host)+1+len(user)+1+2+4+4)
	b = append(b, mysql.COM_REGISTER_SLAVE)
	b = binary.LittleEndian.AppendUint32(b, cfg.ServerID)
	b = append(b, byte(len(host)))
	b = append(b, host...)
	b = append(b, byte(len(user)))
	b = append(b, user...)
	b = append(b, 0) // password
	b = binary.LittleEndian.AppendUint16(b, cfg.Port)
	b = binary.LittleEndian.AppendUint32(b, 0) // rank
	b = binary.LittleEndian.AppendUint32(b, 0) // source id
	return b
}

// dumpCommand is COM_BINLOG_DUMP: offset, flags, our server id, file.
func dumpCommand(serverID uint32, flags uint16, file string, off uint32) []byte {
	b := make([]byte, 4, 4+1+4+2+4+len(file))
	b = append(b, mysql.COM_BINLOG_DUMP)
	b = binary.LittleEndian.AppendUint32(b, off)
	b = binary.LittleEndian.AppendUint16(b, flags)
	b = binary.LittleEndian.AppendUint32(b, serverID)
	return append(b, file...)
}

// dumpGTIDCommand is MySQL's COM_BINLOG_DUMP_GTID: flags 0, our server
// id, no file name, offset 4, and the encoded GTID set.
func dumpGTIDCommand(serverID uint32, gtids []byte) []byte {
	b := make([]byte, 4, 4+1+2+4+4+8+4+len(gtids))
	b = append(b, mysql.COM_BINLOG_DUMP_GTID)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint32(b, serverID)
	b = binary.LittleEndian.AppendUint32(b, 0) // file name length
	b = binary.LittleEndian.AppendUint64(b, 4)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(gtids)))
	return append(b, gtids...)
}

// newUUID returns a random (version 4) UUID for @slave_uuid.
func newUUID() (string, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return "", err
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := fmt.Sprintf("%x", u[:])
	return strings.Join([]string{h[:8], h[8:12], h[12:16], h[16:20], h[20:]}, "-"), nil
}
