package binlogcdc_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/binlogcdc/binlogcdc"
	"github.com/binlogcdc/binlogcdc/sink/jsonl"
)

// Placeholders the examples show; example_server_test.go points them at
// a private server to run the examples.
var (
	exampleSource               = "mysql://repl@db1:3306"
	exampleCheckpoint           = "/var/lib/myapp/orders.checkpoint"
	exampleOut        io.Writer = os.Stdout
)

// Read decodes binlog files into JSON lines, as 'binlogcdc read' does.
func ExampleRead() {
	o := binlogcdc.DefaultReadOptions()
	o.Tables = []string{"shop.customers"}
	o.StopPosition = "shop.binlog:1792" // before the transaction that starts there
	err := binlogcdc.Read(context.Background(), o, []string{"testdata/shop.binlog"}, os.Stdout, io.Discard)
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// {"op":"insert","db":"shop","table":"customers","pk":["id"],"after":{"id":1,"email":"ana@example.com","name":"Ana Müller","tier":"gold","tags":["vip"],"created":"2024-06-15 12:34:56.123456"},"ts":"2026-11-30T10:55:48Z","pos":{"file":"shop.binlog","offset":1651,"row":0},"gtid":"0-1-4"}
	// {"op":"insert","db":"shop","table":"customers","pk":["id"],"after":{"id":2,"email":"bo@example.com","name":"Bø","tier":"basic","tags":["new","wholesale"],"created":"2024-06-16 08:00:00.000000"},"ts":"2026-11-30T10:55:48Z","pos":{"file":"shop.binlog","offset":1651,"row":1},"gtid":"0-1-4"}
}

// ReadTo hands each committed transaction of binlog files to a handler
// instead (any sink.Sink works too).
func ExampleReadTo() {
	h := binlogcdc.HandlerFunc(func(ctx context.Context, tx *binlogcdc.Tx) error {
		for _, c := range tx.Changes {
			fmt.Printf("%s %s.%s, transaction %s\n", c.Op, c.Table.DB, c.Table.Name, tx.End.GTID)
		}
		return nil
	})
	o := binlogcdc.DefaultReadOptions()
	o.Tables = []string{"shop.customers"}
	err := binlogcdc.ReadTo(context.Background(), o, []string{"testdata/shop.binlog"}, binlogcdc.NewHandlerSink(h), nil)
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// insert shop.customers, transaction 0-1-4
	// insert shop.customers, transaction 0-1-4
	// update shop.customers, transaction 0-1-5
	// update shop.customers, transaction 0-1-7
}

// A Stream follows a server and hands each committed transaction to a
// handler; the checkpoint file keeps its place across restarts, and
// SIGINT/SIGTERM stop it after the transaction under way.
func ExampleStream() {
	o := binlogcdc.DefaultStreamOptions()
	o.Conn.Source = exampleSource // the password: Conn.PasswordFile, or MYSQL_PWD
	o.Checkpoint = exampleCheckpoint
	o.From = "earliest" // where the first run starts
	o.Tables = []string{"shop.*"}

	s := &binlogcdc.Stream{Options: o, Log: os.Stderr}
	s.Handler = binlogcdc.HandlerFunc(func(ctx context.Context, tx *binlogcdc.Tx) error {
		for _, c := range tx.Changes {
			fmt.Fprintf(exampleOut, "%s %s.%s at %s:%d\n", c.Op, c.Table.DB, c.Table.Name, c.Pos.File, c.Pos.Offset)
		}
		return nil // acknowledged: the checkpoint moves past tx
	})

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(stop)
	go func() {
		<-stop
		s.Stop()
	}()
	if err := s.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

// Any sink.Sink can receive the stream instead of a handler: here the
// JSON lines sink, each transaction flushed before its checkpoint.
func ExampleStream_sink() {
	o := binlogcdc.DefaultStreamOptions()
	o.Conn.Source = exampleSource
	o.Checkpoint = exampleCheckpoint
	o.From = "earliest"
	s := &binlogcdc.Stream{Options: o, Log: os.Stderr}
	s.Sink = jsonl.New(exampleOut, jsonl.Options{FlushEachCommit: true})

	// Cancelling ends Run at once: what was not yet committed to the
	// sink is delivered again by the next run.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	if err := s.Run(ctx); err != nil && ctx.Err() == nil {
		log.Fatal(err)
	}
}
