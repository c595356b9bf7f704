package binlog

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/zstd"

	"github.com/binlogcdc/binlogcdc/change"
)

// events reads every event of src: its positions, and the error that
// ended the read (nil at a clean end).
func events(t *testing.T, src *FileSource) ([]change.Position, error) {
	t.Helper()
	defer src.Close()
	var pos []change.Position
	for {
		ev, err := src.Next(context.Background())
		if err == io.EOF {
			return pos, nil
		}
		if err != nil {
			return pos, err
		}
		pos = append(pos, ev.Pos)
	}
}

// TestOpenPartsStream: a part read through its Open (an object in a
// store), plain or zstd, gives the events the file gives, from a start
// offset too; a stream that fails half way ends the read with its error,
// naming the object.
func TestOpenPartsStream(t *testing.T) {
	path := filepath.Join("..", "testdata", "shop.binlog")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	packed := enc.EncodeAll(data, nil)
	src, err := OpenParts([]Part{{Path: path, Name: "binlog.000001"}}, change.Position{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := events(t, src)
	if err != nil || len(want) < 4 {
		t.Fatalf("%d events, %v", len(want), err)
	}
	for _, body := range [][]byte{data, packed} {
		open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		src, err := OpenParts([]Part{{Path: "s3://b/binlog.000001", Name: "binlog.000001", Open: open}}, change.Position{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := events(t, src)
		if err != nil || len(got) != len(want) || got[len(got)-1] != want[len(want)-1] {
			t.Fatalf("%d events (%v), want %d", len(got), err, len(want))
		}
		start := want[len(want)/2]
		src, _ = OpenParts([]Part{{Path: "s3://b/binlog.000001", Name: "binlog.000001", Open: open}}, start)
		if got, err := events(t, src); err != nil || len(got) == 0 || got[0].Offset > start.Offset || got[len(got)-1] != want[len(want)-1] {
			t.Errorf("from %v: %v (%v)", start, got, err)
		}
	}
	fail := func() (io.ReadCloser, error) {
		return io.NopCloser(io.MultiReader(bytes.NewReader(data[:len(data)/2]), iotest.ErrReader(errors.New("connection reset")))), nil
	}
	src, _ = OpenParts([]Part{{Path: "s3://b/binlog.000001", Name: "binlog.000001", Open: fail}}, change.Position{})
	_, err = events(t, src)
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("a failed stream: %v", err)
	}
	src, _ = OpenParts([]Part{{Path: "s3://b/binlog.000001", Name: "binlog.000001", Open: func() (io.ReadCloser, error) { return nil, errors.New("no such object") }}}, change.Position{})
	if _, err := events(t, src); err == nil || !strings.Contains(err.Error(), "s3://b/binlog.000001: no such object") {
		t.Errorf("a failed open: %v", err)
	}
}
