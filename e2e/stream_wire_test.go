package e2e

// The replication read loop of binlog/live.go and packet.go against a real
// server: events over 16 MiB, which the server sends in several packets;
// a server killed while it sends one; heartbeats of an idle server; TLS.

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/binlogcdc/binlogcdc/internal/testserver"
)

// wireBigRows makes rows events of ~20 MiB (two packets), ~34 MiB and,
// with the UPDATE's before and after images, ~40 MiB (three packets).
func wireBigRows(t *testing.T, srv *testserver.Server) {
	t.Helper()
	srv.Exec(t,
		"INSERT INTO wb.t VALUES (1, 1, REPEAT('ab', 10 << 20))",
		"INSERT INTO wb.t VALUES (2, 1, REPEAT('cd', 17 << 20))",
		"UPDATE wb.t SET n = 2 WHERE id = 1",
		"INSERT INTO wb.t VALUES (3, 1, 'small')",
	)
}

// TestStreamMultiPacketEvents: stream and read --source give what reading
// the files gives for rows events of 20, 34 and 40 MiB.
func TestStreamMultiPacketEvents(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	srv.Exec(t, "CREATE DATABASE wb", "CREATE TABLE wb.t (id INT PRIMARY KEY, n INT, b LONGBLOB)")
	wireBigRows(t, srv)
	g := stLastGTID(t, srv)
	want := stRead(t, srv)

	out := filepath.Join(dir, "out.jsonl")
	r := stStart(t, dir, "s", nil, "--source", srv.DSN(), "--from", "earliest", "-o", out)
	stPoll(t, 2*time.Minute, r, "transaction "+g, func() bool { return stHasGTID(out, g) })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d; stderr:\n%s", code, r.errText())
	}
	got, _ := os.ReadFile(out)
	stSameOutput(t, "stream of 20-40 MiB rows events", got, want)

	remote, errs, code := runCLI(t, nil, "read", "--source", srv.DSN(), "--from", "earliest")
	if code != 0 {
		t.Fatalf("read --source: exit %d: %s", code, errs)
	}
	stSameOutput(t, "read --source of 20-40 MiB rows events", remote, want)
	if n := bytes.Count(got, []byte("\n")); n != 4 {
		t.Errorf("%d lines, want 4", n)
	}
}

// TestStreamServerKilledMidEvent: the server is killed while the stream
// has received 18 MiB of a 20 MiB rows event (in its second packet). The
// stream prints none of that transaction, reconnects once the server is
// back, and prints it once: its output equals reading the files.
func TestStreamServerKilledMidEvent(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	srv.Exec(t, "CREATE DATABASE wb", "CREATE TABLE wb.t (id INT PRIMARY KEY, n INT, b LONGBLOB)",
		"INSERT INTO wb.t VALUES (0, 0, 'first')")
	g0 := stLastGTID(t, srv)
	px := stStartProxy(t, srv.Addr())
	out, cp := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "cp.json")
	r := stStart(t, dir, "s", nil, "--source", px.dsn(), "--from", "earliest", "--checkpoint", cp, "-o", out, "--heartbeat", "1s")
	stPoll(t, time.Minute, r, "the first transaction", func() bool { return stHasGTID(out, g0) && len(stDumpThreads(t, srv)) == 1 })

	px.limit(18 << 20)
	srv.Exec(t, "INSERT INTO wb.t VALUES (1, 1, REPEAT('ab', 10 << 20))")
	g1 := stLastGTID(t, srv)
	stPoll(t, time.Minute, r, "18 MiB of the event to reach binlogcdc", px.exhausted)
	srv.Kill(t)
	px.closeAll()
	stPoll(t, time.Minute, r, "a reconnect attempt", func() bool { return strings.Contains(r.errText(), "reconnecting at") })
	if stHasGTID(out, g1) {
		t.Fatalf("transaction %s printed before the server came back", g1)
	}
	srv.Restart(t)
	srv.Exec(t, "INSERT INTO wb.t VALUES (2, 2, 'after')")
	g2 := stLastGTID(t, srv)
	stPoll(t, 2*time.Minute, r, "transaction "+g2, func() bool { return stHasGTID(out, g2) })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d; stderr:\n%s", code, r.errText())
	}
	got, _ := os.ReadFile(out)
	stSameOutput(t, "stream across a server killed mid-event", got, stRead(t, srv))
	if !strings.Contains(r.errText(), "inside the event at") && !strings.Contains(r.errText(), "closed the connection") {
		t.Errorf("stderr does not say the connection was cut:\n%s", r.errText())
	}
}

// TestStreamIdleHeartbeats: on an idle server the stream receives the
// server's heartbeats (--heartbeat 1s) and keeps its connection: the read
// timeout (3 s) never fires while they come.
func TestStreamIdleHeartbeats(t *testing.T) {
	t.Parallel()
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	srv.Exec(t, "CREATE DATABASE hb", "CREATE TABLE hb.t (id INT PRIMARY KEY)", "INSERT INTO hb.t VALUES (1)")
	g := stLastGTID(t, srv)
	out := filepath.Join(dir, "out.jsonl")
	r := stStart(t, dir, "s", nil, "--source", srv.DSN(), "--from", "earliest", "-o", out,
		"--heartbeat", "1s", "--metrics-addr", "127.0.0.1:0")
	stPoll(t, time.Minute, r, "transaction "+g, func() bool { return stHasGTID(out, g) })
	m := metricsAddrRE.FindStringSubmatch(r.errText())
	if m == nil {
		t.Fatalf("no metrics address on stderr:\n%s", r.errText())
	}
	events := func() float64 { _, body := mtGet(m[1], "/metrics"); return mtValue(body, "binlogcdc_events_total") }
	// Nothing is written: every event from here on is a heartbeat. Ten
	// of them span about 10 s: more than three read timeouts.
	base := events()
	stPoll(t, time.Minute, r, "10 heartbeats", func() bool { return events() >= base+10 })
	_, body := mtGet(m[1], "/metrics")
	if v := mtValue(body, "binlogcdc_reconnects_total"); v != 0 {
		t.Errorf("binlogcdc_reconnects_total = %v on an idle server, want 0; stderr:\n%s", v, r.errText())
	}
	if v := mtValue(body, "binlogcdc_source_lag_seconds"); v != 0 {
		t.Errorf("binlogcdc_source_lag_seconds = %v after heartbeats, want 0", v)
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d; stderr:\n%s", code, r.errText())
	}
	if strings.Contains(r.errText(), "reconnecting") {
		t.Errorf("the stream reconnected on an idle server:\n%s", r.errText())
	}
}

// TestStreamTLS: the dump runs over TLS (a user that REQUIRE SSL, so a
// plain-text connection is refused), with events of 20-40 MiB split
// across TLS records and packets: stream and read --source give what
// reading the files gives.
func TestStreamTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, key, cert := wireCerts(t, dir)
	srv := testserver.Start(t, testserver.Options{ExtraArgs: []string{"--ssl-ca=" + ca, "--ssl-cert=" + cert, "--ssl-key=" + key}})
	const pw = "tls-pw-1"
	srv.Exec(t,
		"CREATE USER 'tlsu'@'127.0.0.1' IDENTIFIED BY '"+pw+"' REQUIRE SSL",
		"GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'tlsu'@'127.0.0.1'",
		"CREATE DATABASE wb", "CREATE TABLE wb.t (id INT PRIMARY KEY, n INT, b LONGBLOB)")
	wireBigRows(t, srv)
	g := stLastGTID(t, srv)
	want := stRead(t, srv)
	dsn := "mysql://tlsu:" + pw + "@" + srv.Addr()

	if _, errs, code := runCLI(t, nil, "read", "--source", dsn, "--ssl-mode", "disabled", "--from", "earliest"); code == 0 {
		t.Fatalf("read --source --ssl-mode disabled: exit 0 with a user that REQUIRE SSL; stderr:\n%s", errs)
	}
	out := filepath.Join(dir, "out.jsonl")
	r := stStart(t, dir, "s", nil, "--source", dsn, "--ssl-mode", "verify-ca", "--ssl-ca", ca, "--from", "earliest", "-o", out)
	stPoll(t, 2*time.Minute, r, "transaction "+g, func() bool { return stHasGTID(out, g) })
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("SIGTERM: exit code %d; stderr:\n%s", code, r.errText())
	}
	got, _ := os.ReadFile(out)
	stSameOutput(t, "stream over TLS", got, want)
	remote, errs, code := runCLI(t, nil, "read", "--source", dsn, "--ssl-mode", "verify-ca", "--ssl-ca", ca, "--from", "earliest")
	if code != 0 {
		t.Fatalf("read --source over TLS: exit %d: %s", code, errs)
	}
	stSameOutput(t, "read --source over TLS", remote, want)
}

// wireCerts writes a CA and a server certificate for 127.0.0.1 signed by
// it into dir; it returns the CA's, the server key's and the server
// certificate's file names.
func wireCerts(t *testing.T, dir string) (ca, key, cert string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "binlogcdc test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, key, cert = filepath.Join(dir, "ca.pem"), filepath.Join(dir, "server-key.pem"), filepath.Join(dir, "server-cert.pem")
	for name, b := range map[string]*pem.Block{ca: {Type: "CERTIFICATE", Bytes: caDER},
		key: {Type: "PRIVATE KEY", Bytes: keyDER}, cert: {Type: "CERTIFICATE", Bytes: srvDER}} {
		if err := os.WriteFile(name, pem.EncodeToMemory(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ca, key, cert
}
