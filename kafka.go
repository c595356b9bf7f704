package binlogcdc

// --to kafka://BROKER[,BROKER…] for read and stream (issue 7): publish the
// changes to Kafka (sink/kafka) instead of printing JSON lines. The --to
// flag itself is ReplayOptions.To (replay.go); KafkaOptions.take claims
// the kafka:// URLs before replay sees them.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/sink/envelope"
	"github.com/binlogcdc/binlogcdc/sink/kafka"
)

// KafkaOptions are the --kafka-* flags, shared by read and stream.
type KafkaOptions struct {
	To string // the kafka:// URL of --to; "" when not publishing to Kafka

	TopicPrefix        string        // --kafka-topic-prefix
	Topic              string        // --kafka-topic
	Tombstones         bool          // --kafka-tombstones
	ExactlyOnce        bool          // --kafka-exactly-once
	Replica            string        // --kafka-replica-name
	TransactionTimeout time.Duration // --kafka-transaction-timeout
	TLS                bool          // --kafka-tls
	TLSCA              string        // --kafka-tls-ca
	SASLMechanism      string        // --kafka-sasl-mechanism
	SASLUser           string        // --kafka-sasl-user
	SASLPasswordFile   string        // --kafka-sasl-password-file
	MaxMessageBytes    int           // --kafka-max-message-bytes
	DeliveryTimeout    time.Duration // --kafka-delivery-timeout

	// Format encodes the records in --format debezium|maxwell|canal
	// (formats.go; set by the command, nil for json).
	Format envelope.Encoder
}

// AddFlags binds the --kafka-* flags.
func (o *KafkaOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.TopicPrefix, "kafka-topic-prefix", kafka.DefaultTopicPrefix, "with --to kafka://…: {prefix} of the topic names, and of `PREFIX`.schema-changes, PREFIX.checkpoints and PREFIX.schema-history")
	f.StringVar(&o.Topic, "kafka-topic", kafka.DefaultTopic, "a table's topic: `TEMPLATE` with {prefix}, {db}, {table}")
	f.BoolVar(&o.Tombstones, "kafka-tombstones", false, "follow each delete with a tombstone (the key, a null value) for log compaction")
	f.BoolVar(&o.ExactlyOnce, "kafka-exactly-once", false, "one Kafka transaction per source transaction, with the resume point kept in Kafka (PREFIX.checkpoints; stream: its schema history in PREFIX.schema-history); consumers must read with isolation.level=read_committed")
	f.StringVar(&o.Replica, "kafka-replica-name", kafka.DefaultReplica, "with --kafka-exactly-once: this publisher's `NAME` (its transactional.id and the key of its resume point); unique per source")
	f.DurationVar(&o.TransactionTimeout, "kafka-transaction-timeout", kafka.DefaultTransactionTimeout, "with --kafka-exactly-once: the longest one source transaction may take to publish (at most the brokers' transaction.max.timeout.ms)")
	f.BoolVar(&o.TLS, "kafka-tls", false, "connect to the brokers with TLS (system CAs unless --kafka-tls-ca)")
	f.StringVar(&o.TLSCA, "kafka-tls-ca", "", "verify the brokers with the CA certificates in `FILE` (PEM); implies --kafka-tls")
	f.StringVar(&o.SASLMechanism, "kafka-sasl-mechanism", "", "SASL `MECHANISM`: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512")
	f.StringVar(&o.SASLUser, "kafka-sasl-user", "", "SASL `USER`")
	f.StringVar(&o.SASLPasswordFile, "kafka-sasl-password-file", "", "read the SASL password from `FILE` (first line)")
	f.IntVar(&o.MaxMessageBytes, "kafka-max-message-bytes", 0, "largest record batch sent, in `BYTES` (0: 1000012, Kafka's default max.message.bytes); a larger change fails the run")
	f.DurationVar(&o.DeliveryTimeout, "kafka-delivery-timeout", 0, "fail the run when a change cannot be delivered for this long (0: retry until the brokers are back)")
}

// isKafkaURL reports whether --to names Kafka brokers.
func isKafkaURL(to string) bool { return strings.HasPrefix(strings.ToLower(to), "kafka://") }

// take claims --to (*to) when it is a kafka:// URL, clearing it so that
// replay (replay.go) leaves it alone, and checks the flags that go with it.
func (o *KafkaOptions) take(f *pflag.FlagSet, to *string) error {
	bad := func(msg, hint string) error { return UsageError{Msg: msg, Hint: hint} }
	if !isKafkaURL(*to) {
		var err error
		visitChanged(f, func(fl *pflag.Flag) {
			if strings.HasPrefix(fl.Name, "kafka-") && err == nil {
				err = bad("--"+fl.Name+" needs --to kafka://BROKER", "--to kafka://broker1:9092,broker2:9092")
			}
		})
		return err
	}
	o.To, *to = *to, ""
	if _, err := parseKafkaURL(o.To); err != nil {
		return err
	}
	if flagChanged(f, "format") && f.Lookup("format").Value.String() == "sql" {
		return bad("--format sql does not go with --to kafka://…", "--format json, debezium, maxwell or canal")
	}
	for _, n := range []string{"output", "flashback", "to-password-file", "to-ssl-mode", "to-ssl-ca", "replica-name",
		"on-conflict", "ignore-missing-columns", "keep-dropped", "create-tables", "group-rows", "group-time"} {
		if flagChanged(f, n) {
			return bad("--"+n+" does not go with --to kafka://…", "drop --"+n+" (Kafka options are the --kafka-* flags)")
		}
	}
	if o.ExactlyOnce {
		if flagChanged(f, "checkpoint") {
			return bad("--kafka-exactly-once keeps the resume point in Kafka (topic "+o.sinkTopicPrefix()+".checkpoints); --checkpoint FILE is for at-least-once",
				"drop --checkpoint, or --kafka-exactly-once")
		}
	} else {
		for _, n := range []string{"kafka-replica-name", "kafka-transaction-timeout"} {
			if flagChanged(f, n) {
				return bad("--"+n+" needs --kafka-exactly-once", "--kafka-exactly-once --"+n+" …")
			}
		}
	}
	if (o.SASLUser != "" || o.SASLPasswordFile != "") && o.SASLMechanism == "" {
		return bad("--kafka-sasl-user and --kafka-sasl-password-file need --kafka-sasl-mechanism", "--kafka-sasl-mechanism SCRAM-SHA-512")
	}
	if _, err := o.sinkOptions(); err != nil {
		var ue UsageError
		if errors.As(err, &ue) {
			return err
		}
	}
	return nil
}

func (o *KafkaOptions) sinkTopicPrefix() string {
	if o.TopicPrefix == "" {
		return kafka.DefaultTopicPrefix
	}
	return o.TopicPrefix
}

// parseKafkaURL returns the brokers of kafka://host[:port][,host[:port]…]
// (port 9092 by default).
func parseKafkaURL(to string) ([]string, error) {
	hint := "--to kafka://broker1:9092,broker2:9092"
	rest := to[len("kafka://"):]
	if rest == "" || strings.ContainsAny(rest, "/?#@") {
		return nil, UsageError{Msg: fmt.Sprintf("--to %s: want kafka://host:port[,host:port…]", to), Hint: hint}
	}
	var brokers []string
	for _, b := range strings.Split(rest, ",") {
		host, port, err := net.SplitHostPort(b)
		if err != nil {
			host, port = b, "9092"
		}
		if host == "" || strings.ContainsAny(host, " []") {
			return nil, UsageError{Msg: fmt.Sprintf("--to: %q is not a broker address (host:port)", b), Hint: hint}
		}
		brokers = append(brokers, net.JoinHostPort(host, port))
	}
	return brokers, nil
}

// sinkOptions turns the flags into sink options (reading the CA and
// password files).
func (o *KafkaOptions) sinkOptions() (kafka.Options, error) {
	bad := func(msg, hint string) error { return UsageError{Msg: msg, Hint: hint} }
	brokers, err := parseKafkaURL(o.To)
	if err != nil {
		return kafka.Options{}, err
	}
	ko := kafka.Options{
		Brokers: brokers, TopicPrefix: o.TopicPrefix, Topic: o.Topic, Tombstones: o.Tombstones,
		ExactlyOnce: o.ExactlyOnce, Replica: o.Replica, TransactionTimeout: o.TransactionTimeout,
		MaxMessageBytes: o.MaxMessageBytes, DeliveryTimeout: o.DeliveryTimeout, Format: o.Format,
	}
	if err := ko.Validate(); err != nil {
		return ko, bad(err.Error(), "see 'binlogcdc read --help' for the --kafka-* flags")
	}
	if o.TLS || o.TLSCA != "" {
		ko.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
		if o.TLSCA != "" {
			pem, err := os.ReadFile(o.TLSCA)
			if err != nil {
				return ko, fmt.Errorf("--kafka-tls-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return ko, bad("--kafka-tls-ca: no PEM certificate in "+o.TLSCA, "--kafka-tls-ca /etc/kafka/ca.pem")
			}
			ko.TLS.RootCAs = pool
		}
	}
	if o.SASLMechanism != "" {
		if o.SASLUser == "" || o.SASLPasswordFile == "" {
			return ko, bad("--kafka-sasl-mechanism needs --kafka-sasl-user and --kafka-sasl-password-file", "--kafka-sasl-user app --kafka-sasl-password-file /run/secrets/kafka")
		}
		data, err := os.ReadFile(o.SASLPasswordFile)
		if err != nil {
			return ko, fmt.Errorf("--kafka-sasl-password-file: %w", err)
		}
		line, _, _ := strings.Cut(string(data), "\n")
		pass := strings.TrimRight(line, "\r")
		var m sasl.Mechanism
		switch strings.ToUpper(o.SASLMechanism) {
		case "PLAIN":
			m = plain.Auth{User: o.SASLUser, Pass: pass}.AsMechanism()
		case "SCRAM-SHA-256":
			m = scram.Auth{User: o.SASLUser, Pass: pass}.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			m = scram.Auth{User: o.SASLUser, Pass: pass}.AsSha512Mechanism()
		default:
			return ko, bad("--kafka-sasl-mechanism: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, not "+o.SASLMechanism, "--kafka-sasl-mechanism SCRAM-SHA-512")
		}
		ko.SASL = m
	}
	return ko, nil
}

// openKafkaSink opens the Kafka sink when --to names Kafka (else it
// returns nils). With --kafka-exactly-once it fences older publishers of
// the same name and returns the resume point kept in Kafka, if any: the
// run must start there. server identifies the source in resume points.
func openKafkaSink(ctx context.Context, o KafkaOptions, server string, logf func(string, ...any)) (*kafka.Sink, *checkpoint.Checkpoint, error) {
	if o.To == "" {
		return nil, nil, nil
	}
	ko, err := o.sinkOptions()
	if err != nil {
		return nil, nil, err
	}
	ko.Server, ko.Logf = server, logf
	ks, err := kafka.New(ko)
	if err != nil {
		return nil, nil, err
	}
	mode := "at-least-once"
	if o.ExactlyOnce {
		mode = "exactly-once as replica " + ko.Replica
	}
	logf("publishing to Kafka at %s (%s)", strings.Join(ko.Brokers, ","), mode)
	if !o.ExactlyOnce {
		return ks, nil, nil
	}
	cp, err := ks.Resume(ctx)
	if err != nil {
		ks.Close(ctx)
		return nil, nil, err
	}
	if cp == nil {
		logf("no resume point for replica %s in topic %s: starting from the start flags", ko.Replica, ko.CheckpointTopic())
	} else {
		logf("resuming from the resume point in topic %s at %s:%d (after %s)", ko.CheckpointTopic(), cp.File, cp.Offset, cp.LastGTID)
	}
	return ks, cp, nil
}

// forget says how to leave the resume point kept in Kafka behind, for
// hints that start over.
func (o *KafkaOptions) forget() string {
	return "use another --kafka-replica-name (the resume point of " + o.Replica + " stays in " + o.sinkTopicPrefix() + ".checkpoints)"
}

// isKafkaError reports a failure to publish (never worth reconnecting to
// the source for).
func isKafkaError(err error) bool {
	var ke *kafka.Error
	return errors.As(err, &ke)
}
