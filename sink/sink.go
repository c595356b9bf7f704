// Package sink defines where changes go. Each output lives in its own
// subpackage (sink/jsonl, …), so heavy dependencies stay out of builds
// that do not need them.
package sink

import (
	"context"

	"github.com/binlogcdc/binlogcdc/change"
)

// Sink receives committed transactions.
//
// Calling protocol: for each source transaction, Write is called for each
// of its changes in order, then Commit once. When Commit returns nil the
// transaction is as durable as the sink promises (each sink documents its
// guarantee), and only then may the caller checkpoint tx.Next. Rollback
// drops the changes written since the last Commit (the source failed
// mid-transaction and will resend it). Close ends the stream; changes
// written since the last Commit are discarded, never half-delivered.
//
// The *change.Change passed to Write, and the values it points to, are
// only valid during the call: a sink that keeps them must copy.
type Sink interface {
	Write(ctx context.Context, c *change.Change) error
	Commit(ctx context.Context, tx change.TxEnd) error
	Rollback(ctx context.Context) error
	Close(ctx context.Context) error
}

// BatchWriter is a Sink that also takes the changes of one rows event at
// once: WriteBatch is Write of each of cs in order, stopping at the first
// error, and returns how many were written. A sink whose Write takes a
// lock takes it once for them. The same validity rule holds: cs and its
// values are only valid during the call.
type BatchWriter interface {
	WriteBatch(ctx context.Context, cs []change.Change) (int, error)
}

// UTF8Checker is a Sink that checks text as it encodes it (sink/jsonl with
// its own JSON), or that passes its bytes on for the target to check
// (sink/mysql, sink/sqltext): the decoder leaves text unchecked for it
// (change.UncheckedText), so that text that is not UTF-8 to Go (MariaDB's
// utf8mb4 stores surrogates) reaches it as the binlog holds it, never as
// U+FFFD. A sink that wraps another says what the one it wraps says.
type UTF8Checker interface{ ChecksUTF8() bool }

// ChecksUTF8 reports whether s is a UTF8Checker that says so.
func ChecksUTF8(s Sink) bool {
	u, ok := s.(UTF8Checker)
	return ok && u.ChecksUTF8()
}
