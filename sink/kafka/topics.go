package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/binlogcdc/binlogcdc/change"
)

// template is a parsed topic template: literal parts and placeholders.
type template struct {
	parts []tpart
}

type tpart struct {
	lit string
	ph  byte // 0: literal; 'd': {db}; 't': {table}
}

// parseTemplate parses tmpl, substituting {prefix} at once.
func parseTemplate(tmpl, prefix string) (*template, error) {
	t := &template{}
	rest := tmpl
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			t.parts = append(t.parts, tpart{lit: rest})
			break
		}
		if i > 0 {
			t.parts = append(t.parts, tpart{lit: rest[:i]})
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("kafka: topic template %q: unclosed {", tmpl)
		}
		switch name := rest[i+1 : i+j]; name {
		case "prefix":
			t.parts = append(t.parts, tpart{lit: prefix})
		case "db":
			t.parts = append(t.parts, tpart{ph: 'd'})
		case "table":
			t.parts = append(t.parts, tpart{ph: 't'})
		default:
			return nil, fmt.Errorf("kafka: topic template %q: unknown placeholder {%s} (want {prefix}, {db}, {table})", tmpl, name)
		}
		rest = rest[i+j+1:]
	}
	if err := validTopic(t.expand("db", "table")); err != nil {
		return nil, fmt.Errorf("kafka: topic template %q: %w", tmpl, err)
	}
	return t, nil
}

// expand returns the topic of db.table.
func (t *template) expand(db, table string) string {
	var b strings.Builder
	for _, p := range t.parts {
		switch p.ph {
		case 'd':
			b.WriteString(SanitizeTopicPart(db))
		case 't':
			b.WriteString(SanitizeTopicPart(table))
		default:
			b.WriteString(p.lit)
		}
	}
	return b.String()
}

// SanitizeTopicPart replaces each character that Kafka does not allow in
// topic names (anything but ASCII letters, digits, '.', '_' and '-') by
// '_'.
func SanitizeTopicPart(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if !topicChar(s[i]) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && topicChar(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func topicChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// validTopic checks Kafka's rules for topic names.
func validTopic(t string) error {
	switch {
	case t == "":
		return errors.New("empty topic name")
	case t == "." || t == "..":
		return fmt.Errorf("%q is not a valid topic name", t)
	case len(t) > 249:
		return fmt.Errorf("topic name %.40q… is %d characters long (Kafka allows 249)", t, len(t))
	}
	for i := 0; i < len(t); i++ {
		if !topicChar(t[i]) {
			return fmt.Errorf("topic name %q has %q (Kafka allows [a-zA-Z0-9._-])", t, t[i])
		}
	}
	return nil
}

// topicSpec is how a topic is created when it does not exist.
type topicSpec struct {
	partitions int32             // -1: the broker's default
	configs    map[string]string // e.g. cleanup.policy
}

// topicFor returns c's topic, making sure it exists.
func (s *Sink) topicFor(ctx context.Context, c *change.Change) (string, error) {
	var topic string
	spec := topicSpec{partitions: -1}
	if c.Op == change.DDL {
		// One partition keeps the schema history in order.
		topic, spec.partitions = s.opts.SchemaTopic(), 1
	} else {
		n := tableName{c.Table.DB, c.Table.Name}
		var ok bool
		if topic, ok = s.topics[n]; !ok {
			topic = s.tmpl.expand(n.db, n.table)
			s.topics[n] = topic
		}
	}
	if _, ok := s.ready[topic]; ok {
		return topic, nil
	}
	if err := s.ensureTopic(ctx, topic, spec); err != nil {
		e := &Error{Topic: topic, HasPos: true, Pos: c.Pos, Row: c.RowIndex, Err: err}
		var ce *createError
		if errors.As(err, &ce) || errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, kerr.ClusterAuthorizationFailed) {
			e.Hint = "create the topic beforehand, or let the Kafka user create topics (CREATE on the cluster or the topic)"
		}
		if c.Table != nil {
			e.DB, e.Table = c.Table.DB, c.Table.Name
		}
		if errors.Is(err, context.Canceled) {
			return "", err
		}
		return "", s.setFailure(e)
	}
	return topic, nil
}

// ensureTopic looks topic up and creates it when it does not exist,
// retrying while the brokers are unreachable.
func (s *Sink) ensureTopic(ctx context.Context, topic string, spec topicSpec) error {
	if err := validTopic(topic); err != nil {
		return err
	}
	err := s.retry(ctx, "looking up topic "+topic, func(ctx context.Context) error {
		exists, err := s.topicExists(ctx, topic)
		if err != nil || exists {
			return err
		}
		return s.createTopic(ctx, topic, spec)
	})
	if err == nil {
		s.ready[topic] = true
	}
	return err
}

// topicExists asks the brokers whether topic exists (without asking them
// to create it).
func (s *Sink) topicExists(ctx context.Context, topic string) (bool, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = false
	resp, err := req.RequestWith(ctx, s.cl)
	if err != nil {
		return false, err
	}
	if len(resp.Topics) != 1 {
		return false, fmt.Errorf("metadata response with %d topics", len(resp.Topics))
	}
	t := resp.Topics[0]
	switch err := kerr.ErrorForCode(t.ErrorCode); {
	case err == nil:
		return len(t.Partitions) > 0, nil
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		return false, nil
	default:
		return false, err
	}
}

// createTopic creates topic with the brokers' default replication.
func (s *Sink) createTopic(ctx context.Context, topic string, spec topicSpec) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions = spec.partitions
	rt.ReplicationFactor = -1
	for k, v := range spec.configs {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		rt.Configs = append(rt.Configs, c)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, s.cl)
	if err != nil {
		return err
	}
	if len(resp.Topics) != 1 {
		return fmt.Errorf("create topics response with %d topics", len(resp.Topics))
	}
	t := resp.Topics[0]
	err = kerr.ErrorForCode(t.ErrorCode)
	if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
		return nil
	}
	ce := &createError{err: err}
	if t.ErrorMessage != nil {
		ce.msg = *t.ErrorMessage
	}
	return ce
}

// createError is a CreateTopics refusal.
type createError struct {
	err error
	msg string // the broker's explanation, if any
}

func (e *createError) Error() string {
	if e.msg != "" {
		return "cannot create the topic: " + e.err.Error() + ": " + e.msg
	}
	return "cannot create the topic: " + e.err.Error()
}

func (e *createError) Unwrap() error { return e.err }
