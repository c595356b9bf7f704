package kafka

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// held keeps one source transaction's records until its end, for
// formats whose records end with what only the end tells (Maxwell's xid
// and commit). Up to max bytes stay in memory; the rest goes to an
// unlinked temporary file, so a transaction of any size fits.
type held struct {
	max     int
	tempDir string

	mem      []*kgo.Record
	memBytes int

	file    *os.File // spilled records, before those in mem
	w       *bufio.Writer
	spilled int

	n         int // records held
	lastValue int // index of the last record with a value (not a tombstone), -1 if none
}

func recordSize(r *kgo.Record) int {
	n := len(r.Topic) + len(r.Key) + len(r.Value) + 64
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value) + 8
	}
	return n
}

func (h *held) add(r *kgo.Record) error {
	if h.n == 0 {
		h.lastValue = -1
	}
	if r.Value != nil {
		h.lastValue = h.n
	}
	h.n++
	if h.memBytes+recordSize(r) <= h.max && h.spilled == 0 {
		h.mem = append(h.mem, r)
		h.memBytes += recordSize(r)
		return nil
	}
	if h.file == nil {
		f, err := os.CreateTemp(h.tempDir, "binlogcdc-kafka-tx-*")
		if err != nil {
			return fmt.Errorf("kafka: a large transaction: cannot create a spill file: %w (set TMPDIR to a writable directory)", err)
		}
		os.Remove(f.Name()) // unlinked: gone when closed, even after a crash
		h.file, h.w = f, bufio.NewWriterSize(f, 256<<10)
	}
	// Spill what is in memory first, so that the file keeps the order.
	for _, m := range h.mem {
		if err := writeRecord(h.w, m); err != nil {
			return err
		}
		h.spilled++
	}
	clear(h.mem)
	h.mem, h.memBytes = h.mem[:0], 0
	if err := writeRecord(h.w, r); err != nil {
		return err
	}
	h.spilled++
	return nil
}

// each calls fn for every held record in order, last set on the last one
// with a value; then the holder is empty again.
func (h *held) each(fn func(r *kgo.Record, last bool)) error {
	defer h.reset()
	i := 0
	if h.spilled > 0 {
		if err := h.w.Flush(); err != nil {
			return fmt.Errorf("kafka: writing the spill file: %w", err)
		}
		if _, err := h.file.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("kafka: %w", err)
		}
		rd := bufio.NewReaderSize(h.file, 256<<10)
		for ; i < h.spilled; i++ {
			r, err := readRecord(rd)
			if err != nil {
				return fmt.Errorf("kafka: reading the spill file: %w", err)
			}
			fn(r, i == h.lastValue)
		}
	}
	for _, r := range h.mem {
		fn(r, i == h.lastValue)
		i++
	}
	return nil
}

// reset drops the held records.
func (h *held) reset() {
	clear(h.mem)
	h.mem, h.memBytes, h.n, h.spilled = h.mem[:0], 0, 0, 0
	if h.file != nil {
		h.file.Truncate(0)
		h.file.Seek(0, io.SeekStart)
		h.w.Reset(h.file)
	}
}

func (h *held) close() {
	h.reset()
	if h.file != nil {
		h.file.Close()
		h.file = nil
	}
}

// The spill file holds each record as length-prefixed fields: topic,
// key, value (length+1, 0 for nil), header count, then each header's key
// and value.
func writeRecord(w *bufio.Writer, r *kgo.Record) error {
	var buf [binary.MaxVarintLen64]byte
	put := func(b []byte, isNil bool) {
		n := uint64(len(b)) + 1
		if isNil {
			n = 0
		}
		w.Write(buf[:binary.PutUvarint(buf[:], n)])
		w.Write(b)
	}
	put([]byte(r.Topic), false)
	put(r.Key, r.Key == nil)
	put(r.Value, r.Value == nil)
	w.Write(buf[:binary.PutUvarint(buf[:], uint64(len(r.Headers)))])
	for _, h := range r.Headers {
		put([]byte(h.Key), false)
		put(h.Value, h.Value == nil)
	}
	if _, err := w.Write(nil); err != nil {
		return fmt.Errorf("kafka: writing the spill file: %w", err)
	}
	return nil
}

func readRecord(rd *bufio.Reader) (*kgo.Record, error) {
	get := func() ([]byte, error) {
		n, err := binary.ReadUvarint(rd)
		if err != nil || n == 0 {
			return nil, err
		}
		if n-1 > 1<<31 {
			return nil, errors.New("corrupt length")
		}
		b := make([]byte, n-1)
		_, err = io.ReadFull(rd, b)
		return b, err
	}
	topic, err := get()
	if err != nil {
		return nil, err
	}
	r := &kgo.Record{Topic: string(topic)}
	if r.Key, err = get(); err != nil {
		return nil, err
	}
	if r.Value, err = get(); err != nil {
		return nil, err
	}
	nh, err := binary.ReadUvarint(rd)
	if err != nil || nh > 1<<16 {
		return nil, fmt.Errorf("corrupt header count: %v", err)
	}
	for i := uint64(0); i < nh; i++ {
		k, err := get()
		if err != nil {
			return nil, err
		}
		v, err := get()
		if err != nil {
			return nil, err
		}
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: string(k), Value: v})
	}
	return r, nil
}

// inflight counts records whose promise has not run yet.
type inflight struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0, if someone waits
}

func (f *inflight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inflight) done() {
	f.mu.Lock()
	f.n--
	if f.n == 0 && f.zero != nil {
		close(f.zero)
		f.zero = nil
	}
	f.mu.Unlock()
}

// wait returns once no promise is outstanding, or ctx ends.
func (f *inflight) wait(ctx context.Context) error {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return nil
	}
	if f.zero == nil {
		f.zero = make(chan struct{})
	}
	ch := f.zero
	f.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
