package binlogcdc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/binlogcdc/binlogcdc/binlog"
)

// ConnOptions are the flags that say how to reach a server.
type ConnOptions struct {
	Source       string // --source
	PasswordFile string // --password-file
	SSLMode      string // --ssl-mode
	SSLCA        string // --ssl-ca
	SSLCert      string // --ssl-cert
	SSLKey       string // --ssl-key
	ServerID     uint32 // --server-id
}

// AddFlags binds the connection flags.
func (o *ConnOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Source, "source", "", "server to read from: `mysql://user@host:port` (port 3306 when left out; a password in the DSN works but shows in ps; prefer --password-file or MYSQL_PWD)")
	f.StringVar(&o.PasswordFile, "password-file", "", "read the password from `FILE` (first line)")
	f.StringVar(&o.SSLMode, "ssl-mode", "preferred", "TLS: disabled, preferred, required, verify-ca or verify-identity")
	f.StringVar(&o.SSLCA, "ssl-ca", "", "CA certificate `FILE` (PEM) for verify-ca / verify-identity")
	f.StringVar(&o.SSLCert, "ssl-cert", "", "client certificate `FILE` (PEM)")
	f.StringVar(&o.SSLKey, "ssl-key", "", "client key `FILE` (PEM)")
	f.Uint32Var(&o.ServerID, "server-id", 0, "replica server_id to use (default: derived from the host name, the source and the checkpoint path, --to target or process, in 1073741824..2147483647)")
}

// LiveConfig builds the connection settings. seed makes the default
// server id stable across restarts of the same stream.
func (o *ConnOptions) LiveConfig(seed string) (binlog.LiveConfig, error) {
	var cfg binlog.LiveConfig
	if o.Source == "" {
		return cfg, UsageError{Msg: "--source is required", Hint: "--source mysql://repl@db1:3306"}
	}
	u, err := url.Parse(o.Source)
	if err != nil || u.Scheme != "mysql" || u.Host == "" {
		return cfg, UsageError{Msg: "--source: not a DSN of the form mysql://user@host:port", Hint: "--source mysql://repl@db1:3306"}
	}
	cfg.Host = u.Hostname()
	cfg.Port = 3306
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return cfg, UsageError{Msg: "--source: bad port " + p, Hint: "--source mysql://repl@db1:3306"}
		}
		cfg.Port = uint16(n)
	}
	cfg.User = u.User.Username()
	if cfg.User == "" {
		return cfg, UsageError{Msg: "--source: no user", Hint: "--source mysql://repl@db1:3306"}
	}
	switch {
	case o.PasswordFile != "":
		data, err := os.ReadFile(o.PasswordFile)
		if err != nil {
			return cfg, fmt.Errorf("--password-file: %w", err)
		}
		line, _, _ := strings.Cut(string(data), "\n")
		cfg.Password = binlog.Secret(strings.TrimRight(line, "\r"))
	case os.Getenv("MYSQL_PWD") != "":
		cfg.Password = binlog.Secret(os.Getenv("MYSQL_PWD"))
	default:
		if p, ok := u.User.Password(); ok {
			cfg.Password = binlog.Secret(p)
		}
	}
	if cfg.TLS, err = o.tlsConfig(cfg.Host); err != nil {
		return cfg, err
	}
	cfg.ServerID = o.ServerID
	if cfg.ServerID == 0 {
		h := fnv.New32a()
		host, _ := os.Hostname()
		h.Write([]byte(host + "\x00" + seed + "\x00" + o.Source))
		cfg.ServerID = 1<<30 | h.Sum32()&(1<<30-1)
	}
	return cfg, nil
}

// Preflight checks the server cfg points at (binlog.Preflight) and sets
// cfg's flavor. With --ssl-mode preferred, a server without TLS is used
// without it.
func (o *ConnOptions) Preflight(ctx context.Context, cfg *binlog.LiveConfig) (*binlog.ServerInfo, error) {
	return o.PreflightWith(ctx, cfg, binlog.Preflight)
}

// PreflightWith is Preflight with another check (binlog.PreflightRaw).
func (o *ConnOptions) PreflightWith(ctx context.Context, cfg *binlog.LiveConfig, check func(context.Context, binlog.LiveConfig) (*binlog.ServerInfo, error)) (*binlog.ServerInfo, error) {
	if strings.EqualFold(o.SSLMode, "preferred") && cfg.TLS != nil {
		if conn, err := binlog.Connect(ctx, *cfg); err != nil && strings.Contains(err.Error(), "does not support TLS") {
			cfg.TLS = nil
		} else if err == nil {
			conn.Close()
		}
	}
	info, err := check(ctx, *cfg)
	if err != nil {
		return nil, err
	}
	cfg.Flavor = info.Flavor
	return info, nil
}

// RedactedSource is the DSN without its password, for messages.
func (o *ConnOptions) RedactedSource() string {
	u, err := url.Parse(o.Source)
	if err != nil {
		return "(unparsable DSN)"
	}
	if u.User == nil {
		return u.String()
	}
	user := url.User(u.User.Username()).String()
	if _, ok := u.User.Password(); ok {
		user += ":****" // not u.Redacted()'s xxxxx, nor url's %2A escapes
	}
	u.User = nil
	return u.Scheme + "://" + user + "@" + strings.TrimPrefix(u.String(), u.Scheme+"://")
}

func (o *ConnOptions) tlsConfig(host string) (*tls.Config, error) {
	mode := strings.ToLower(o.SSLMode)
	if mode == "disabled" {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	switch mode {
	case "preferred", "required":
		// Encrypt without checking the certificate, like the mysql client.
		// "preferred" falls back to plain text when the server has no TLS:
		// go-mysql tries TLS only when the server offers it.
		cfg.InsecureSkipVerify = true
	case "verify-ca", "verify-identity":
		if o.SSLCA == "" {
			return nil, UsageError{Msg: "--ssl-mode " + mode + " needs --ssl-ca", Hint: "--ssl-ca /etc/mysql/ca.pem"}
		}
	default:
		return nil, UsageError{Msg: "--ssl-mode: unknown mode " + o.SSLMode, Hint: "disabled, preferred, required, verify-ca or verify-identity"}
	}
	if o.SSLCA != "" {
		pem, err := os.ReadFile(o.SSLCA)
		if err != nil {
			return nil, fmt.Errorf("--ssl-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ssl-ca: %s holds no PEM certificate", o.SSLCA)
		}
		cfg.RootCAs = pool
		if mode == "verify-ca" {
			// Check the chain but not the host name.
			cfg.InsecureSkipVerify = true
			cfg.VerifyPeerCertificate = verifyChainOnly(pool)
		}
	}
	if o.SSLCert != "" || o.SSLKey != "" {
		cert, err := tls.LoadX509KeyPair(o.SSLCert, o.SSLKey)
		if err != nil {
			return nil, fmt.Errorf("--ssl-cert/--ssl-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

func verifyChainOnly(pool *x509.CertPool) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return fmt.Errorf("server sent no certificate")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, r := range raw {
			c, err := x509.ParseCertificate(r)
			if err != nil {
				return err
			}
			certs[i] = c
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		_, err := certs[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter})
		return err
	}
}
