package binlog

import (
	"bytes"
	"encoding/hex"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// The commands as the protocol documents them (and as go-mysql's
// BinlogSyncer wrote them), after 4 bytes of room for the packet header.
func TestDumpCommands(t *testing.T) {
	got := dumpCommand(0x01020304, dumpSendAnnotateRows, "binlog.000042", 0x1234)
	want := append([]byte{0, 0, 0, 0, mysql.COM_BINLOG_DUMP, 0x34, 0x12, 0, 0, 2, 0, 4, 3, 2, 1}, "binlog.000042"...)
	if !bytes.Equal(got, want) {
		t.Errorf("COM_BINLOG_DUMP:\n got %s\nwant %s", hex.EncodeToString(got), hex.EncodeToString(want))
	}

	set, err := mysql.ParseGTIDSet(mysql.MySQLFlavor, "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5")
	if err != nil {
		t.Fatal(err)
	}
	enc := set.Encode()
	got = dumpGTIDCommand(7, enc)
	want = []byte{0, 0, 0, 0, mysql.COM_BINLOG_DUMP_GTID,
		0, 0, // flags
		7, 0, 0, 0, // server id
		0, 0, 0, 0, // file name length, no name
		4, 0, 0, 0, 0, 0, 0, 0, // offset
		byte(len(enc)), 0, 0, 0}
	want = append(want, enc...)
	if !bytes.Equal(got, want) {
		t.Errorf("COM_BINLOG_DUMP_GTID:\n got %s\nwant %s", hex.EncodeToString(got), hex.EncodeToString(want))
	}
	// The set's encoding: one SID, its UUID, one interval [1, 6).
	wantSet, _ := hex.DecodeString("0100000000000000" + "3e11fa4771ca11e19e33c80aa9429562" + "0100000000000000" + "0100000000000000" + "0600000000000000")
	if !bytes.Equal(enc, wantSet) {
		t.Errorf("GTID set encoding:\n got %x\nwant %x", enc, wantSet)
	}

	reg := registerReplica(LiveConfig{ServerID: 9, User: "cdc", Port: 3306})
	if reg[4] != mysql.COM_REGISTER_SLAVE || !bytes.Equal(reg[5:9], []byte{9, 0, 0, 0}) {
		t.Errorf("COM_REGISTER_SLAVE starts %x", reg[:9])
	}
	host := int(reg[9])
	rest := reg[10+host:]
	wantRest := []byte{3, 'c', 'd', 'c', 0, 0xea, 0x0c, 0, 0, 0, 0, 0, 0, 0, 0}
	if !bytes.Equal(rest, wantRest) {
		t.Errorf("COM_REGISTER_SLAVE after the host name: %x, want %x", rest, wantRest)
	}
}

func TestNewUUID(t *testing.T) {
	u, err := newUUID()
	if err != nil {
		t.Fatal(err)
	}
	if len(u) != 36 || u[8] != '-' || u[13] != '-' || u[14] != '4' || u[18] != '-' || u[23] != '-' {
		t.Errorf("uuid %q", u)
	}
}
