package kafka

// The schema history topic (with ExactlyOnce; docs/schema-history.md).
//
// The stream's schema history (package schemahist, a JSON document) is
// kept in the compacted topic "<prefix>.schema-history", one partition,
// written in the Kafka transaction of the resume point whenever it
// changed. It may be larger than a record may be, so it is cut into
// parts of at most historyPartBytes: part i of n is the record with key
// "REPLICA/i", its value the bytes of the part, and the headers
// binlogcdc.schema_history.sha256 (of the whole document, in hex) and
// binlogcdc.schema_history.parts (n). When a history needs fewer parts
// than the one before, the transaction also writes tombstones for the
// keys it no longer uses, so compaction keeps one copy of the latest.
//
// The resume point names its history by the same SHA-256
// (checkpoint.Checkpoint.SchemaHistory). Resume reads the topic back,
// read_committed, up to its high watermark, keeps the latest record of
// each of the replica's keys, and puts the parts named by the resume
// point together; a history that is not complete, or not the one named,
// is not used (SchemaHistory says why).

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Headers of a schema history part.
const (
	HeaderHistorySHA256 = "binlogcdc.schema_history.sha256"
	HeaderHistoryParts  = "binlogcdc.schema_history.parts"
)

// HistoryTopic is the topic of the schema history (with ExactlyOnce).
func (o Options) HistoryTopic() string { return o.withDefaults().TopicPrefix + ".schema-history" }

// historyOverhead is the room a part leaves in a record batch for the
// rest: the batch's and the record's headers, the key and the headers.
const historyOverhead = 1024

// maxHistoryParts bounds the parts of one history (a million parts of a
// megabyte: a terabyte), so a damaged header cannot ask for more.
const maxHistoryParts = 1 << 20

// historyPartBytes is the most bytes of the history one record holds:
// a record batch of MaxMessageBytes holds one part whole.
func (o Options) historyPartBytes() int {
	limit := o.MaxMessageBytes
	if limit == 0 {
		limit = 1000012
	}
	return max(limit-historyOverhead-len(o.Replica), 64)
}

// historyHash identifies a history's content (the resume point's
// schema_history).
func historyHash(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// historyRecords cuts data into the records of topic for replica, parts
// of at most partBytes, followed by tombstones for the parts from the
// count of data's up to old (the parts the topic holds from before).
func historyRecords(topic, replica string, data []byte, partBytes, old int) []*kgo.Record {
	n := historyParts(len(data), partBytes)
	hash := []byte(historyHash(data))
	count := []byte(strconv.Itoa(n))
	recs := make([]*kgo.Record, 0, max(n, old))
	for i := range n {
		part := data[i*partBytes : min((i+1)*partBytes, len(data))]
		recs = append(recs, &kgo.Record{Topic: topic, Key: historyKey(replica, i), Value: append([]byte{}, part...),
			Headers: []kgo.RecordHeader{{Key: HeaderHistorySHA256, Value: hash}, {Key: HeaderHistoryParts, Value: count}}})
	}
	for i := n; i < old; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Key: historyKey(replica, i)})
	}
	return recs
}

// historyParts is the count of parts of a history of size bytes.
func historyParts(size, partBytes int) int { return max((size+partBytes-1)/partBytes, 1) }

func historyKey(replica string, i int) []byte {
	return strconv.AppendInt([]byte(replica+"/"), int64(i), 10)
}

// historyPart is one record of the history topic.
type historyPart struct {
	replica string
	index   int
	hash    string // "" : a tombstone
	count   int
	data    []byte
}

// parseHistoryRecord reads a record of the history topic: its key
// REPLICA/INDEX, and, unless value is nil (a tombstone), the headers.
func parseHistoryRecord(key, value []byte, headers []kgo.RecordHeader) (historyPart, error) {
	var p historyPart
	slash := strings.LastIndexByte(string(key), '/')
	if slash < 0 {
		return p, fmt.Errorf("key %.100q is not REPLICA/PART", key)
	}
	p.replica = string(key[:slash])
	i, err := strconv.Atoi(string(key[slash+1:]))
	if err != nil || i < 0 || i >= maxHistoryParts || strconv.Itoa(i) != string(key[slash+1:]) {
		return p, fmt.Errorf("key %.100q: the part is not a number below %d", key, maxHistoryParts)
	}
	p.index = i
	if value == nil {
		return p, nil
	}
	var hash, count string
	for _, h := range headers {
		switch h.Key {
		case HeaderHistorySHA256:
			hash = string(h.Value)
		case HeaderHistoryParts:
			count = string(h.Value)
		}
	}
	if len(hash) != 2*sha256.Size || strings.Trim(hash, "0123456789abcdef") != "" {
		return p, fmt.Errorf("key %.100q: header %s is %.100q, not a SHA-256 in hex", key, HeaderHistorySHA256, hash)
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 || n > maxHistoryParts || i >= n {
		return p, fmt.Errorf("key %.100q: header %s is %.20q, not a count of parts above %d", key, HeaderHistoryParts, count, i)
	}
	p.hash, p.count, p.data = hash, n, value
	return p, nil
}

// historyReader keeps the latest record of each part of one replica's
// history, as the topic is read in order.
type historyReader struct {
	replica string
	parts   map[int]historyPart
	keys    int // the parts the topic holds, tombstones aside: 1 + the highest index seen
}

// add takes the record at offset; other replicas' records are left out.
func (h *historyReader) add(key, value []byte, headers []kgo.RecordHeader) error {
	p, err := parseHistoryRecord(key, value, headers)
	if err != nil {
		if slash := strings.LastIndexByte(string(key), '/'); slash < 0 || string(key[:slash]) != h.replica {
			return nil // not one of ours
		}
		return err
	}
	if p.replica != h.replica {
		return nil
	}
	if h.parts == nil {
		h.parts = map[int]historyPart{}
	}
	if p.hash == "" {
		delete(h.parts, p.index)
		return nil
	}
	h.parts[p.index] = p
	h.keys = max(h.keys, p.index+1)
	return nil
}

// errHistoryMismatch says the topic does not hold the history named.
var errHistoryMismatch = errors.New("the schema history is not the one the resume point names")

// assemble puts together the history whose hash is want. An incomplete
// history, or another one, is errHistoryMismatch, wrapped with why.
func (h *historyReader) assemble(want string) ([]byte, error) {
	if len(h.parts) == 0 {
		return nil, fmt.Errorf("%w: the topic holds none for this replica", errHistoryMismatch)
	}
	first, ok := h.parts[0]
	if !ok || first.hash != want {
		return nil, fmt.Errorf("%w: the topic holds another one", errHistoryMismatch)
	}
	size := 0
	for i := range first.count {
		p, ok := h.parts[i]
		if !ok || p.hash != want || p.count != first.count {
			return nil, fmt.Errorf("%w: part %d of %d is missing", errHistoryMismatch, i, first.count)
		}
		size += len(p.data)
	}
	data := make([]byte, 0, size)
	for i := range first.count {
		data = append(data, h.parts[i].data...)
	}
	if historyHash(data) != want {
		return nil, fmt.Errorf("%w: its parts put together have another SHA-256", errHistoryMismatch)
	}
	return data, nil
}
