package kafka

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/binlogcdc/binlogcdc/sink/envelope"
)

// Record header names.
const (
	HeaderFile   = "binlogcdc.file"
	HeaderOffset = "binlogcdc.offset"
	HeaderRow    = "binlogcdc.row"
	HeaderGTID   = "binlogcdc.gtid"
)

// Defaults.
const (
	DefaultTopicPrefix        = "binlogcdc"
	DefaultTopic              = "{prefix}.{db}.{table}"
	DefaultReplica            = "binlogcdc"
	DefaultMaxBufferedRecords = 10000
	DefaultMaxBufferedBytes   = 64 << 20
	DefaultTransactionTimeout = time.Minute
	DefaultCloseTimeout       = 30 * time.Second
)

// Options configure a Sink. Only Brokers is required.
type Options struct {
	// Brokers are the seed brokers, host:port.
	Brokers []string

	// TopicPrefix is {prefix} in Topic, and the prefix of the
	// schema-changes and checkpoints topics (default DefaultTopicPrefix).
	TopicPrefix string
	// Topic is the template of a table's topic, with {prefix}, {db} and
	// {table} (default DefaultTopic). Characters of db and table names
	// that Kafka does not allow in topic names ([a-zA-Z0-9._-]) become '_'.
	Topic string

	// Tombstones adds a record with a null value after each delete (and,
	// for an update that changed the primary key, for the old key).
	Tombstones bool

	// TLS enables TLS with this configuration; nil means plaintext.
	TLS *tls.Config
	// SASL authenticates with this mechanism; nil means none.
	SASL sasl.Mechanism

	// ExactlyOnce publishes each source transaction in one Kafka
	// transaction, together with its resume point (see Resume).
	ExactlyOnce bool
	// Replica names this publisher (default DefaultReplica): it is the
	// Kafka transactional.id and the key of its resume point in the
	// checkpoints topic. Two publishers running with the same name fence
	// each other.
	Replica string
	// TransactionTimeout bounds one Kafka transaction (default
	// DefaultTransactionTimeout; at most the brokers'
	// transaction.max.timeout.ms).
	TransactionTimeout time.Duration

	// FlushEachCommit makes Commit wait until the transaction's records
	// are acknowledged (at-least-once; with ExactlyOnce it always does).
	// Without it, call Flush before checkpointing.
	FlushEachCommit bool

	// MaxBufferedRecords and MaxBufferedBytes bound what waits in memory
	// for the brokers (defaults DefaultMaxBufferedRecords and
	// DefaultMaxBufferedBytes); when full, Write blocks until the brokers
	// catch up.
	MaxBufferedRecords, MaxBufferedBytes int
	// MaxMessageBytes is the largest record batch sent (0: franz-go's
	// default of 1000012 bytes, Kafka's default max.message.bytes). A
	// record larger than this fails with an *Error.
	MaxMessageBytes int
	// DeliveryTimeout fails a record that could not be delivered for this
	// long (0: retry until it is, or until the context ends).
	DeliveryTimeout time.Duration
	// CloseTimeout bounds how long Close waits for the last records
	// (default DefaultCloseTimeout).
	CloseTimeout time.Duration

	// Server identifies the source in saved resume points ("host:port").
	Server string
	// Logf reports broker outages and recoveries (nil: silent).
	Logf func(format string, args ...any)

	// Format encodes the record values and keys in another JSON shape
	// (sink/envelope: debezium, maxwell, canal) instead of binlogcdc's
	// own (nil). A format whose records wait for the transaction's end
	// (maxwell: xid, commit) holds a transaction's records until Commit.
	Format envelope.Encoder

	// ClientOpts are appended to the franz-go client options (tests).
	ClientOpts []kgo.Opt
}

// withDefaults fills the zero values in.
func (o Options) withDefaults() Options {
	if o.TopicPrefix == "" {
		o.TopicPrefix = DefaultTopicPrefix
	}
	if o.Topic == "" {
		o.Topic = DefaultTopic
	}
	if o.Replica == "" {
		o.Replica = DefaultReplica
	}
	if o.TransactionTimeout <= 0 {
		o.TransactionTimeout = DefaultTransactionTimeout
	}
	if o.MaxBufferedRecords <= 0 {
		o.MaxBufferedRecords = DefaultMaxBufferedRecords
	}
	if o.MaxBufferedBytes <= 0 {
		o.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
	return o
}

// Validate reports settings that cannot work.
func (o Options) Validate() error {
	o = o.withDefaults()
	if len(o.Brokers) == 0 {
		return errors.New("kafka: no brokers given")
	}
	for _, b := range o.Brokers {
		if b == "" {
			return errors.New("kafka: an empty broker address")
		}
	}
	if err := validTopic(o.TopicPrefix); err != nil {
		return fmt.Errorf("kafka: topic prefix: %w", err)
	}
	if _, err := parseTemplate(o.Topic, o.TopicPrefix); err != nil {
		return err
	}
	if o.MaxMessageBytes != 0 && (o.MaxMessageBytes < 512 || o.MaxMessageBytes > 1<<30) {
		return fmt.Errorf("kafka: max message bytes %d is out of range [512, 1GiB]", o.MaxMessageBytes)
	}
	if o.ExactlyOnce && o.Replica == "" {
		return errors.New("kafka: exactly-once needs a replica name")
	}
	return nil
}

// SchemaTopic is the topic of DDL records: "<prefix>.schema-changes", or
// the one the Format names (Debezium's schema change topic is its
// topic.prefix itself).
func (o Options) SchemaTopic() string {
	prefix := o.withDefaults().TopicPrefix
	if f, ok := o.Format.(envelope.SchemaTopicNamer); ok {
		return f.SchemaTopic(prefix)
	}
	return prefix + ".schema-changes"
}

// CheckpointTopic is the topic of resume points (with ExactlyOnce).
func (o Options) CheckpointTopic() string { return o.withDefaults().TopicPrefix + ".checkpoints" }
