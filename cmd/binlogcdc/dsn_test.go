package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testPW = "S3cret-pw-4e7b"

func TestDSNParse(t *testing.T) {
	t.Setenv("MYSQL_PWD", "")
	for _, c := range []struct {
		dsn, host, user string
		port            uint16
	}{
		{"mysql://repl@db1:3307", "db1", "repl", 3307},
		{"mysql://repl@db1", "db1", "repl", 3306},
		{"mysql://repl@10.0.0.7:3306/", "10.0.0.7", "repl", 3306},
		{"mysql://repl@[::1]:3308", "::1", "repl", 3308},
		{"mysql://r%40pl@db1", "db1", "r@pl", 3306},
	} {
		o := ConnOptions{Source: c.dsn, SSLMode: "disabled"}
		cfg, err := o.LiveConfig("")
		if err != nil {
			t.Errorf("%s: %v", c.dsn, err)
			continue
		}
		if cfg.Host != c.host || cfg.Port != c.port || cfg.User != c.user || cfg.Password != "" || cfg.TLS != nil {
			t.Errorf("%s: host %q port %d user %q password set %v TLS %v; want %q %d %q", c.dsn, cfg.Host, cfg.Port, cfg.User, cfg.Password != "", cfg.TLS != nil, c.host, c.port, c.user)
		}
	}
}

func TestDSNErrors(t *testing.T) {
	t.Setenv("MYSQL_PWD", "")
	for _, dsn := range []string{
		"",
		"db1:3306",
		"postgres://repl:" + testPW + "@db1",
		"mysql://db1:3306",
		"mysql://:" + testPW + "@db1:3306",
		"mysql://repl:" + testPW + "@db1:99999",
		"mysql://repl:" + testPW + "@db1:port",
		"mysql://repl:" + testPW + "@",
		"mysql://repl:" + testPW + " x@db1",
	} {
		o := ConnOptions{Source: dsn, SSLMode: "disabled"}
		_, err := o.LiveConfig("")
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: error %v, want a usage error", dsn, err)
			continue
		}
		if strings.Contains(ue.Msg+ue.Hint, testPW) {
			t.Errorf("%q: the message shows the password: %s / %s", dsn, ue.Msg, ue.Hint)
		}
		if !strings.Contains(ue.Msg, "--source") {
			t.Errorf("%q: message %q does not name --source", dsn, ue.Msg)
		}
	}
}

func TestPasswordSources(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pw")
	os.WriteFile(file, []byte("from-file\r\nsecond line\n"), 0o600)
	noNewline := filepath.Join(dir, "pw2")
	os.WriteFile(noNewline, []byte("bare"), 0o600)
	for _, c := range []struct {
		name, dsn, env, file, want string
	}{
		{"none", "mysql://u@h", "", "", ""},
		{"DSN", "mysql://u:dsn%40pw@h", "", "", "dsn@pw"},
		{"empty DSN password", "mysql://u:@h", "", "", ""},
		{"MYSQL_PWD", "mysql://u@h", "from-env", "", "from-env"},
		{"MYSQL_PWD over the DSN", "mysql://u:dsn@h", "from-env", "", "from-env"},
		{"file over both, first line, no CR", "mysql://u:dsn@h", "from-env", file, "from-file"},
		{"file without newline", "mysql://u@h", "", noNewline, "bare"},
	} {
		t.Setenv("MYSQL_PWD", c.env)
		o := ConnOptions{Source: c.dsn, PasswordFile: c.file, SSLMode: "disabled"}
		cfg, err := o.LiveConfig("")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if string(cfg.Password) != c.want {
			t.Errorf("%s: password %q, want %q", c.name, string(cfg.Password), c.want)
		}
	}

	t.Setenv("MYSQL_PWD", "")
	o := ConnOptions{Source: "mysql://u@h", PasswordFile: filepath.Join(dir, "missing"), SSLMode: "disabled"}
	if _, err := o.LiveConfig(""); err == nil || !strings.Contains(err.Error(), "--password-file") {
		t.Errorf("missing password file: %v, want an error naming --password-file", err)
	}
}

func TestPasswordNeverPrinted(t *testing.T) {
	t.Setenv("MYSQL_PWD", "")
	o := ConnOptions{Source: "mysql://repl:" + testPW + "@db1:3306", SSLMode: "required"}
	cfg, err := o.LiveConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if string(cfg.Password) != testPW {
		t.Fatalf("password %q", string(cfg.Password))
	}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(f, cfg); strings.Contains(s, testPW) {
			t.Errorf("Sprintf(%q, cfg) shows the password: %s", f, s)
		}
	}
	if s := fmt.Sprint(cfg.Password); s != "****" {
		t.Errorf("Secret prints as %q", s)
	}
	if s := o.RedactedSource(); strings.Contains(s, testPW) {
		t.Errorf("redactedSource = %q", s)
	}
}

func TestRedactedSource(t *testing.T) {
	for dsn, want := range map[string]string{
		"mysql://repl:" + testPW + "@db1:3306":     "mysql://repl:****@db1:3306",
		"mysql://repl@db1:3306":                    "mysql://repl@db1:3306",
		"mysql://repl:@db1":                        "mysql://repl:****@db1",
		"mysql://r%40pl:p%3Aw%2F@db1?tls=x":        "mysql://r%40pl:****@db1?tls=x",
		"mysql://db1:3306":                         "mysql://db1:3306",
		"mysql://repl:" + testPW + "@[::1]:3306/x": "mysql://repl:****@[::1]:3306/x",
		"mysql://repl:" + testPW + " x@db1":        "(unparsable DSN)",
	} {
		o := ConnOptions{Source: dsn}
		if got := o.RedactedSource(); got != want {
			t.Errorf("redactedSource(%q) = %q, want %q", dsn, got, want)
		}
	}
}

func TestServerIDDefault(t *testing.T) {
	t.Setenv("MYSQL_PWD", "")
	id := func(source, seed string, explicit uint32) uint32 {
		t.Helper()
		o := ConnOptions{Source: source, SSLMode: "disabled", ServerID: explicit}
		cfg, err := o.LiveConfig(seed)
		if err != nil {
			t.Fatal(err)
		}
		return cfg.ServerID
	}
	a := id("mysql://u@db1", "/var/lib/cdc/cp.json", 0)
	if a < 1<<30 || a > 1<<31-1 {
		t.Errorf("default server id %d is outside 1073741824..2147483647", a)
	}
	if b := id("mysql://u@db1", "/var/lib/cdc/cp.json", 0); b != a {
		t.Errorf("default server id not stable: %d, then %d", a, b)
	}
	if b := id("mysql://u@db1", "/var/lib/cdc/other.json", 0); b == a {
		t.Errorf("two checkpoints share default server id %d", a)
	}
	if b := id("mysql://u@db2", "/var/lib/cdc/cp.json", 0); b == a {
		t.Errorf("two sources share default server id %d", a)
	}
	if b := id("mysql://u@db1", "/var/lib/cdc/cp.json", 77); b != 77 {
		t.Errorf("--server-id 77 gave %d", b)
	}
}

func TestSSLMode(t *testing.T) {
	t.Setenv("MYSQL_PWD", "")
	dir := t.TempDir()
	caCert, caKey, caPEM := testCA(t)
	caFile := filepath.Join(dir, "ca.pem")
	os.WriteFile(caFile, caPEM, 0o644)
	junk := filepath.Join(dir, "junk.pem")
	os.WriteFile(junk, []byte("not a certificate\n"), 0o644)

	cfg := func(mode, ca string) (*tls.Config, error) {
		o := ConnOptions{Source: "mysql://u@db1.example:3306", SSLMode: mode, SSLCA: ca}
		c, err := o.LiveConfig("")
		return c.TLS, err
	}
	if c, err := cfg("disabled", ""); err != nil || c != nil {
		t.Errorf("disabled: %v, %v; want no TLS", c, err)
	}
	for _, mode := range []string{"preferred", "required", "REQUIRED", "Preferred"} {
		c, err := cfg(mode, "")
		if err != nil || c == nil || !c.InsecureSkipVerify || c.ServerName != "db1.example" || c.MinVersion != tls.VersionTLS12 {
			t.Errorf("%s: %+v, %v; want TLS without verification", mode, c, err)
		}
	}
	for _, mode := range []string{"bogus", "verify_ca", "on"} {
		_, err := cfg(mode, "")
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(ue.Msg, "--ssl-mode") {
			t.Errorf("%s: %v, want a usage error naming --ssl-mode", mode, err)
		}
	}
	for _, mode := range []string{"verify-ca", "verify-identity"} {
		_, err := cfg(mode, "")
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(ue.Msg, "--ssl-ca") {
			t.Errorf("%s without --ssl-ca: %v, want a usage error naming --ssl-ca", mode, err)
		}
		if _, err := cfg(mode, filepath.Join(dir, "missing.pem")); err == nil || !strings.Contains(err.Error(), "--ssl-ca") {
			t.Errorf("%s with a missing CA file: %v", mode, err)
		}
		if _, err := cfg(mode, junk); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
			t.Errorf("%s with a CA file without a certificate: %v", mode, err)
		}
	}

	// verify-identity: Go's own verification, with the CA and host name.
	c, err := cfg("verify-identity", caFile)
	if err != nil || c.InsecureSkipVerify || c.RootCAs == nil || c.ServerName != "db1.example" {
		t.Errorf("verify-identity: %+v, %v", c, err)
	}
	// verify-ca: the chain is checked, the host name is not.
	c, err = cfg("verify-ca", caFile)
	if err != nil || !c.InsecureSkipVerify || c.VerifyPeerCertificate == nil {
		t.Fatalf("verify-ca: %+v, %v", c, err)
	}
	good := testLeaf(t, caCert, caKey, "some-other-name")
	if err := c.VerifyPeerCertificate([][]byte{good}, nil); err != nil {
		t.Errorf("verify-ca rejects a certificate from the CA for another host name: %v", err)
	}
	otherCA, otherKey, _ := testCA(t)
	if err := c.VerifyPeerCertificate([][]byte{testLeaf(t, otherCA, otherKey, "db1.example")}, nil); err == nil {
		t.Error("verify-ca accepts a certificate from another CA")
	}
	if err := c.VerifyPeerCertificate(nil, nil); err == nil {
		t.Error("verify-ca accepts no certificate")
	}

	o := ConnOptions{Source: "mysql://u@db1", SSLMode: "required", SSLCert: filepath.Join(dir, "missing.pem")}
	if _, err := o.LiveConfig(""); err == nil || !strings.Contains(err.Error(), "--ssl-cert") {
		t.Errorf("client certificate without a key: %v", err)
	}
}

func testCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func testLeaf(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, host string) []byte {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// Usage errors in the stream flags are reported before connecting (the
// source here does not exist), with exit code 2.
func TestStreamUsageErrors(t *testing.T) {
	t.Setenv("MYSQL_PWD", "")
	src := "mysql://u:" + testPW + "@127.0.0.1:1"
	for _, args := range [][]string{
		{"stream"},
		{"stream", "--source", src, "extra"},
		{"stream", "--source", src, "--from", "yesterday"},
		{"stream", "--source", src, "--start-position", "binlog.000001"},
		{"stream", "--source", src, "--start-position", "binlog.000001:x"},
		{"stream", "--source", src, "--heartbeat", "0s"},
		{"stream", "--source", src, "--ssl-mode", "bogus"},
		{"stream", "--source", src, "--tables", "nodot"},
		{"stream", "--source", src, "--no-such-flag"},
	} {
		var out, errb strings.Builder
		if code := run(args, &out, &errb); code != exitUsage {
			t.Errorf("%q: exit %d, want %d; stderr: %s", args, code, exitUsage, errb.String())
		}
		if out.Len() != 0 || strings.Contains(errb.String(), testPW) || !strings.Contains(errb.String(), "hint: ") {
			t.Errorf("%q: stdout %q, stderr %q: want a hint and no password", args, out.String(), errb.String())
		}
	}
	var out, errb strings.Builder
	if code := run([]string{"stream", "--help", "--source", src}, &out, &errb); code != exitOK {
		t.Errorf("--help: exit %d", code)
	}
	if s := out.String() + errb.String(); !strings.Contains(s, "--heartbeat") || strings.Contains(s, testPW) {
		t.Errorf("--help output: %s", s)
	}
}
