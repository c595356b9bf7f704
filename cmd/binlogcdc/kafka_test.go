package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/binlogcdc/binlogcdc/sink/kafka/kafkatest"
)

const shopBinlog = "../../testdata/shop.binlog"

func runCmd(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestKafkaUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"read", "--kafka-tombstones", shopBinlog}, "--kafka-tombstones needs --to kafka://BROKER"},
		{[]string{"read", "--to", "kafka://b:9092", "-o", "x.jsonl", shopBinlog}, "--output does not go with --to kafka://"},
		{[]string{"read", "--to", "kafka://b:9092", "--format", "sql", shopBinlog}, "--format sql does not go with --to kafka://"},
		{[]string{"read", "--to", "kafka://b:9092", "--on-conflict", "skip", shopBinlog}, "--on-conflict does not go with"},
		{[]string{"read", "--to", "kafka://", shopBinlog}, "want kafka://host:port"},
		{[]string{"read", "--to", "kafka://b:9092/topic", shopBinlog}, "want kafka://host:port"},
		{[]string{"read", "--to", "kafka://b:9092", "--kafka-replica-name", "x", shopBinlog}, "--kafka-replica-name needs --kafka-exactly-once"},
		{[]string{"read", "--to", "kafka://b:9092", "--kafka-sasl-user", "u", shopBinlog}, "need --kafka-sasl-mechanism"},
		{[]string{"read", "--to", "kafka://b:9092", "--kafka-sasl-mechanism", "GSSAPI", "--kafka-sasl-user", "u", "--kafka-sasl-password-file", "/dev/null", shopBinlog}, "want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"},
		{[]string{"read", "--to", "kafka://b:9092", "--kafka-topic", "{prefix}.{schema}", shopBinlog}, "unknown placeholder"},
		{[]string{"stream", "--source", "mysql://root@127.0.0.1:1", "--to", "kafka://b:9092", "--kafka-exactly-once", "--checkpoint", "cp.json"}, "keeps the resume point in Kafka"},
	} {
		code, _, stderr := runCmd(tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}

// TestKafkaRead: 'read --to kafka://' publishes one record per line of
// 'read', on the default topics.
func TestKafkaRead(t *testing.T) {
	t.Parallel()
	brokers := kafkatest.Cluster(t)
	prefix := kafkatest.Prefix(t)
	code, _, stderr := runCmd("read", "--to", "kafka://"+strings.Join(brokers, ","), "--kafka-topic-prefix", prefix, "--ddl", shopBinlog)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	_, lines, _ := runCmd("read", "--ddl", shopBinlog)
	recs := kafkatest.Consume(t, brokers, kafkatest.Topics(t, brokers, prefix+"."), false)
	checkValues(t, recs, lines)
}

// checkValues: the records' values are the lines, each once.
func checkValues(t *testing.T, recs []*kgo.Record, lines string) {
	t.Helper()
	want := map[string]int{}
	n := 0
	for _, l := range strings.Split(strings.TrimSuffix(lines, "\n"), "\n") {
		want[l]++
		n++
	}
	for _, r := range recs {
		if want[string(r.Value)] == 0 {
			t.Fatalf("record %s is not a line of read (or twice)", r.Value)
		}
		want[string(r.Value)]--
	}
	if len(recs) != n {
		t.Fatalf("%d records, want %d", len(recs), n)
	}
}

// TestKafkaSASL: SCRAM and PLAIN with a password file; a wrong password
// fails (and is not printed).
func TestKafkaSASL(t *testing.T) {
	t.Parallel()
	c := kafkatest.Fake(t, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", "app", "s3cret-pw"), kfake.Superuser("PLAIN", "plainuser", "pl41n-pw"))
	dir := t.TempDir()
	pw := func(name, pass string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(pass+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	to := "kafka://" + strings.Join(c.ListenAddrs(), ",")
	for _, tc := range []struct {
		mech, user, pass string
		ok               bool
	}{
		{"SCRAM-SHA-256", "app", "s3cret-pw", true},
		{"PLAIN", "plainuser", "pl41n-pw", true},
		{"SCRAM-SHA-256", "app", "wrong-pw-123", false},
	} {
		prefix := kafkatest.Prefix(t)
		// kfake closes the connection on a bad password (a broker answers
		// SASL_AUTHENTICATION_FAILED, which fails at once): that looks like
		// an outage, retried until --kafka-delivery-timeout.
		code, _, stderr := runCmd("read", "--to", to, "--kafka-topic-prefix", prefix, "--kafka-delivery-timeout", "3s", "--kafka-sasl-mechanism", tc.mech,
			"--kafka-sasl-user", tc.user, "--kafka-sasl-password-file", pw(tc.user+tc.pass, tc.pass), shopBinlog)
		if strings.Contains(stderr, tc.pass) {
			t.Errorf("%s: the password is on stderr: %s", tc.mech, stderr)
		}
		if tc.ok != (code == 0) {
			t.Fatalf("%s %s: exit %d: %s", tc.mech, tc.pass, code, stderr)
		}
		if !tc.ok {
			if !strings.Contains(stderr, "--kafka-sasl-* settings") || !strings.Contains(stderr, "gave up after") {
				t.Errorf("wrong password: %s", stderr)
			}
			continue
		}
		auth := kgo.SASL(scram.Auth{User: "app", Pass: "s3cret-pw"}.AsSha256Mechanism())
		if n := len(kafkatest.Consume(t, c.ListenAddrs(), kafkatest.Topics(t, c.ListenAddrs(), prefix+".", auth), false, auth)); n != 9 {
			t.Errorf("%s: %d records, want 9 (the rows of shop.binlog)", tc.mech, n)
		}
	}
}

// TestKafkaTLS: --kafka-tls-ca verifies the brokers; without the CA the
// run fails at once.
func TestKafkaTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	caPEM, serverCert := selfSigned(t)
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	c := kafkatest.Fake(t, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{serverCert}}))
	to := "kafka://" + strings.Join(c.ListenAddrs(), ",")
	prefix := kafkatest.Prefix(t)
	if code, _, stderr := runCmd("read", "--to", to, "--kafka-topic-prefix", prefix, "--kafka-tls-ca", ca, shopBinlog); code != 0 {
		t.Fatalf("with the CA: exit %d: %s", code, stderr)
	}
	start := time.Now()
	code, _, stderr := runCmd("read", "--to", to, "--kafka-topic-prefix", prefix, "--kafka-tls", shopBinlog)
	if code != exitError || !strings.Contains(stderr, "certificate") {
		t.Fatalf("without the CA: exit %d: %s", code, stderr)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("failing took %v: a bad certificate is not worth retrying", d)
	}
}

// selfSigned returns a CA certificate (PEM) and a server certificate for
// 127.0.0.1 signed by it.
func selfSigned(t *testing.T) ([]byte, tls.Certificate) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "broker"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
