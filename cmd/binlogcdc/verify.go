package main

import (
	"context"
	"fmt"
	"io"

	"github.com/binlogcdc/binlogcdc"
	"github.com/spf13/pflag"
)

const verifyUsage = `Usage:
  binlogcdc verify --source mysql://user@host:port --to mysql://user@backup:port/ [flags]

Compares every table of the source with the target that binlogcdc replayed
into (read/stream --to, --format sql, recover --to). Each side is read in
one consistent snapshot; a source that changes meanwhile is reported with
the snapshot's binlog position.

Definitions: every column attribute that changes what is stored or how it
compares (position, type, character set, collation, nullability, default,
generated or not and its expression, INVISIBLE, AUTO_INCREMENT, ON UPDATE)
and the primary and unique keys; a difference makes the table differ.
Differences that change no data (engine, row format, comments, int(11)
against int, the AUTO_INCREMENT counter, other indexes) are listed, and
make the table differ only with --strict-schema.

Rows: every row of both sides is read once (binary protocol: stored
numbers, exact text of DECIMAL and temporal values, string bytes with
their lengths, ENUM/SET numbers) and the SHA-256 of each is summed; a
false "equal" needs a collision of two 64-bit sums (at most 2^-128 per
table). CHECKSUM TABLE is not used. When the rows differ, hashes computed
on the servers per primary-key range name them: changed, missing on the
target, extra on the target. Tables without a primary key are compared as
multisets of rows; system-versioned tables with their history. The system
databases and binlogcdc's own tables are left out.

Prints one line per table and the differing rows; exits 0 when every
table is equal, 1 when one differs or cannot be read, or the comparison
failed.

Flags:
`

func runVerifyArgs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o binlogcdc.VerifyOptions
	f, err := parseFlags("verify", verifyUsage, args, stderr, func(f *pflag.FlagSet) {
		o.Conn.AddFlags(f)
		f.MarkHidden("server-id") // verify does not replicate
		f.StringVar(&o.Target.To, "to", "", "the copy to compare: `mysql://user@host:port/` (port 3306 when left out)")
		f.StringVar(&o.Target.ToPasswordFile, "to-password-file", "", "read the --to password from `FILE` (first line); else the DSN's password")
		f.StringVar(&o.Target.ToSSLMode, "to-ssl-mode", "preferred", "TLS to the --to server: disabled, preferred, required, verify-ca or verify-identity")
		f.StringVar(&o.Target.ToSSLCA, "to-ssl-ca", "", "CA certificate `FILE` (PEM) for --to-ssl-mode verify-ca / verify-identity")
		f.StringArrayVar(&o.Tables, "tables", nil, "only tables matching `db.table` (globs: shop.*, *.orders); repeatable")
		f.StringArrayVar(&o.ExcludeTables, "exclude-tables", nil, "skip tables matching `db.table` (globs); repeatable; wins over --tables")
		f.IntVar(&o.MaxRows, "max-rows", 100, "name at most `N` differing rows per table")
		f.BoolVar(&o.StrictSchema, "strict-schema", false, "a definition difference that changes no data (engine, row format, comments, int(11) against int, AUTO_INCREMENT counter, indexes that are not keys) makes the table differ too")
		f.BoolVar(&o.HashRows, "hash-rows", false, "no effect: every row is always hashed (kept for old scripts)")
		f.MarkHidden("hash-rows")
	})
	if err != nil {
		return err
	}
	if f.NArg() > 0 {
		return usageError{Msg: fmt.Sprintf("verify takes no arguments (got %q)", f.Arg(0)), Hint: "binlogcdc verify --source mysql://user@db1:3306 --to mysql://user@backup:3306/"}
	}
	return binlogcdc.Verify(ctx, o, stdout)
}
