package binlogcdc

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/binlogcdc/binlogcdc/pipeline"
	"github.com/binlogcdc/binlogcdc/verify"
)

// VerifyOptions are the flags of 'binlogcdc verify'.
type VerifyOptions struct {
	Conn          ConnOptions   // --source and its connection flags
	Target        ReplayOptions // --to, --to-password-file, --to-ssl-mode, --to-ssl-ca (the other fields are unused)
	Tables        []string      // --tables
	ExcludeTables []string      // --exclude-tables
	MaxRows       int           // --max-rows
	HashRows      bool          // --hash-rows (no effect)
	StrictSchema  bool          // --strict-schema
}

// Verify compares every selected table of o.Conn's server with o.Target.To,
// as 'binlogcdc verify' does: the report goes to stdout, and an error
// says how many tables differ (nil: all equal).
func Verify(ctx context.Context, o VerifyOptions, stdout io.Writer) error {
	if o.Target.To == "" {
		return UsageError{Msg: "--to is required: the copy to compare with --source", Hint: "--to mysql://user@backup:3306/"}
	}
	filter, err := pipeline.NewFilter(o.Tables, o.ExcludeTables)
	if err != nil {
		return UsageError{Msg: err.Error(), Hint: "--tables shop.orders --tables 'shop.*'"}
	}
	live, err := o.Conn.LiveConfig("verify")
	if err != nil {
		return err
	}
	dst, err := o.Target.TargetConfig()
	if err != nil {
		return err
	}
	srcConn, err := verify.Dial(ctx, verify.Config{Addr: net.JoinHostPort(live.Host, strconv.Itoa(int(live.Port))),
		User: live.User, Password: string(live.Password), TLS: live.TLS, TLSPreferred: o.Conn.SSLMode == "preferred"})
	if err != nil {
		return fmt.Errorf("--source %s: %w", o.Conn.RedactedSource(), err)
	}
	defer srcConn.Close()
	dstConn, err := verify.Dial(ctx, verify.Config{Addr: dst.Addr, User: dst.User, Password: dst.Password, TLS: dst.TLS, TLSPreferred: dst.TLSPreferred})
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	defer dstConn.Close()
	// A signal ends the queries under way: closing the connections is
	// the only way go-mysql has.
	stop := context.AfterFunc(ctx, func() { srcConn.Close(); dstConn.Close() })
	defer stop()
	rep, err := verify.Run(ctx, srcConn, dstConn, verify.Options{Select: filter.Table, MaxRows: o.MaxRows, StrictSchema: o.StrictSchema})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("verify: %w", err)
	}
	rep.Write(stdout)
	if n := len(rep.Differing()); n > 0 {
		return fmt.Errorf("verify: %d of %d tables differ (listed on stdout)", n, len(rep.Tables))
	}
	return nil
}
