// Package binlogcdc reads MySQL and MariaDB binary logs and turns each
// row change into a named, typed record (change.Change), using only the
// binlog's own metadata (binlog_row_metadata=FULL). It is what the
// binlogcdc command runs: the command only parses flags and calls it,
// so a Go program gets the same results and guarantees.
//
// # Entry points
//
//   - Stream follows a server as a replica, as 'binlogcdc stream' does:
//     checkpoints, reconnects, the checks that refuse a checkpoint of
//     another server history (failover), the snapshot and its resume,
//     prepared XA transactions held until their commit. Its Handler (or
//     Sink) receives each committed transaction.
//   - Read decodes binlog files, or a server's binlogs up to their end,
//     as 'binlogcdc read' does; ReadTo hands their transactions to a
//     program's sink, or handler (NewHandlerSink), instead.
//   - Recover and Verify are 'binlogcdc recover' and 'binlogcdc verify'.
//
// The options (StreamOptions, ReadOptions and the ones they hold) have
// one field per command-line flag; their help (binlogcdc stream --help)
// and the README say what each does. Their AddFlags methods bind them to
// a pflag.FlagSet, for a program that offers the same flags, and
// CheckFlags checks them as the command does (Run and Read call it
// themselves when the options were set in code). A mistake in them is a
// UsageError, found before anything connects or is written.
//
// # The handler contract
//
// With Options.Checkpoint set to a file, a Stream keeps its place there.
// Then:
//
//   - Delivery: Handler.HandleTx is called once per committed
//     transaction that holds a selected change, with all of its changes,
//     in commit order, never concurrently. A transaction the server
//     rolled back, or one cut by a lost connection, is never delivered
//     (the stream reconnects and delivers it whole). A prepared XA
//     transaction is delivered at its XA COMMIT.
//   - Acknowledging: returning nil acknowledges the transaction, and
//     the checkpoint may then move past it: right away by default, or at
//     most every Options.CheckpointInterval. So make the transaction's
//     effect durable (or hand it to something that is) before returning
//     nil; acknowledging work still in flight loses it on a crash.
//   - Errors: when HandleTx returns an error, the stream stops: Run
//     returns that error (errors.Is and errors.As see it) and the
//     checkpoint stays before the transaction. The next Run delivers it
//     again, first. A failure to write the checkpoint itself ends Run
//     with a *checkpoint.WriteError.
//   - After a crash (kill -9, power loss): the next Run with the same
//     checkpoint delivers again, in the same order and with the same
//     positions, the transactions after the last saved checkpoint. These
//     are at most the transactions acknowledged since it was saved: with
//     the default CheckpointInterval of 0, at most the last one. Delivery
//     is therefore at least once. For exactly once, store tx.End.Next
//     with the transaction's effect, atomically (in the same database
//     transaction, or, for a file, a size and position saved after the
//     data is synced, as the example in the e2e tests does), and skip a
//     transaction whose End.Next is not after the stored one
//     (change.Position.Compare). Positions increase in commit order on
//     one server; after a failover to a replica the checkpoint resumes by
//     GTID, and tx.End.GTID identifies a transaction across servers.
//   - Stop and cancellation: Stop finishes the open transaction (its
//     handler call returns), saves the checkpoint and makes Run return
//     nil. Cancelling ctx ends Run at once with ctx's error: a
//     transaction whose handler call did not return is not acknowledged.
//
// Without Options.Checkpoint the stream starts where the start options
// say on each Run and nothing is delivered again.
//
// Only one process may use a checkpoint file at a time (it is locked).
package binlogcdc
