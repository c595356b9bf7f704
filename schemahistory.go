package binlogcdc

import (
	"github.com/binlogcdc/binlogcdc/checkpoint"
	"github.com/binlogcdc/binlogcdc/schemahist"
	"github.com/binlogcdc/binlogcdc/sink/kafka"
)

// streamHistory returns the stream's schema history (docs/schema-history.md):
// with --checkpoint FILE, the one saved in FILE.schema-history as of the
// checkpoint cp resumed from, and saved there with every checkpoint
// (the saver writes it, atomically, when it changed).
func streamHistory(path string, cp *checkpoint.Checkpoint, mariadb bool, saver *checkpoint.Saver, logf func(string, ...any)) (*schemahist.History, error) {
	h := schemahist.New(mariadb)
	if path == "" {
		return h, nil
	}
	data, warn, err := checkpoint.LoadHistory(path, cp)
	if err != nil {
		return nil, err
	}
	if warn != "" {
		logf("%s", warn)
	}
	if data != nil {
		if h, err = schemahist.Decode(data, path+checkpoint.HistorySuffix); err != nil {
			return nil, err
		}
	}
	saved := ^h.Gen()
	saver.SchemaHistory = func() ([]byte, bool) {
		if h.Gen() == saved {
			return nil, false
		}
		data, err := h.MarshalJSON() // not json.Marshal: it would re-scan every byte
		if err != nil {
			return nil, false // not saved: the old history stays named
		}
		saved = h.Gen()
		return data, true
	}
	return h, nil
}

// seedHistory sets the snapshot's tables in the schema history, from
// their SHOW CREATE TABLE in the snapshot: the stream's DDL goes on from
// there. A table binlogcdc cannot read follows its TABLE_MAPs, with a
// warning. The snapshot's rows then carry what the history adds to
// their table (streamSnapshot.copy).
func (s *streamSnapshot) seedHistory(h *schemahist.History, logf func(string, ...any)) {
	if s == nil {
		return
	}
	s.hist = h
	for i, t := range s.tables {
		if i >= len(s.creates) {
			break
		}
		if err := h.Seed(t.DB, t.Name, s.creates[i], s.src.Pos.Pos()); err != nil {
			logf("schema history: %v (snapshot at %s:%d); the table follows its TABLE_MAPs until it is created again", err, s.src.Pos.File, s.src.Pos.Offset)
		}
	}
}

// targetHistory, with --to mysql://, replaces *h by the history saved
// in the target's binlogcdc.schema_history (none: *h stays), and returns
// the pipeline's BeforeCommit that hands the target the history when it
// changed, saved in the transaction of the checkpoint; nil without a
// target. With --parallel, target is the parallel applier, whose saved
// history is the one of the checkpoint reading resumes from.
func targetHistory(h **schemahist.History, target historyTarget) (func(), error) {
	if target == nil {
		return nil, nil
	}
	data, err := target.SchemaHistory()
	if err != nil {
		return nil, err
	}
	return restoreHistory(h, data, "the target's binlogcdc.schema_history", target.SetSchemaHistory)
}

// historyTarget is what keeps the history on a --to mysql:// target:
// *mysqlsink.Sink or *mysqlsink.Parallel.
type historyTarget interface {
	SchemaHistory() ([]byte, error)
	SetSchemaHistory([]byte)
}

// kafkaHistory, with --to kafka://… --kafka-exactly-once, replaces *h by
// the history saved in Kafka with the resume point (topic
// PREFIX.schema-history; none: *h stays), and returns the pipeline's
// BeforeCommit that hands the sink the history when it changed, written
// in the Kafka transaction of the next resume point; nil otherwise.
func kafkaHistory(h **schemahist.History, ks *kafka.Sink, o KafkaOptions, logf func(string, ...any)) (func(), error) {
	if ks == nil || !o.ExactlyOnce {
		return nil, nil
	}
	data, warn := ks.SchemaHistory()
	if warn != "" {
		logf("%s", warn)
	}
	return restoreHistory(h, data, "the schema history in Kafka topic "+o.sinkTopicPrefix()+".schema-history", ks.SetSchemaHistory)
}

// restoreHistory replaces *h by the saved history data (nil: none, *h
// stays) and returns the BeforeCommit that hands set the history when it
// changed since (the first time, when nothing was saved).
func restoreHistory(h **schemahist.History, data []byte, where string, set func([]byte)) (func(), error) {
	if data != nil {
		hh, err := schemahist.Decode(data, where)
		if err != nil {
			return nil, err
		}
		**h = *hh
	}
	cur := *h
	saved := cur.Gen()
	if data == nil {
		saved = ^saved // save it with the first commit
	}
	return func() {
		if cur.Gen() == saved {
			return
		}
		if data, err := cur.MarshalJSON(); err == nil {
			set(data)
			saved = cur.Gen()
		}
	}, nil
}
