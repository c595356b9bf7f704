package s3up

// Reading an archive from the store it was uploaded to (binlogcdc read
// s3://bucket/prefix): the archive.Store the planner reads through. An
// object is read as a stream; the second read of a file (the first
// checks its checksum, before anything of it is output) asks for the
// object seen the first time (If-Match its ETag), so that what is output
// is what was checked, even if the object was replaced in between.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"

	"github.com/binlogcdc/binlogcdc/archive"
)

// maxManifest bounds the size of a manifest read from the store (a
// manifest lists a file in about 600 bytes: 64 MiB is 100,000 files).
const maxManifest = 64 << 20

// Reader is an archive in a store, for archive.PlanReadStore.
type Reader struct {
	t     *Target
	mu    sync.Mutex
	etags map[string]string // by key: the object as first read
}

var _ archive.Store = (*Reader)(nil)

// NewReader connects to the store at endpoint ("": AWS S3) to read the
// archive at s3url. Nothing is sent yet.
func NewReader(s3url, endpoint string) (*Reader, error) {
	t, err := New(s3url, endpoint)
	if err != nil {
		return nil, err
	}
	return &Reader{t: t, etags: map[string]string{}}, nil
}

func (r *Reader) String() string { return r.t.URL }

func (r *Reader) Local() bool { return false }

func (r *Reader) Path(name string) string { return "s3://" + r.t.Bucket + "/" + r.t.Prefix + name }

// ReadFile reads the (small) object name whole. A missing one in a
// bucket that is not there says so (a GET answers both alike).
func (r *Reader) ReadFile(ctx context.Context, name string) ([]byte, error) {
	rc, err := r.Open(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		if ok, berr := r.t.c.BucketExists(ctx, r.t.Bucket); berr == nil && !ok {
			return nil, r.noBucket(name)
		}
	}
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxManifest+1))
	if err != nil {
		return nil, r.err("read", name, err)
	}
	if len(b) > maxManifest {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a manifest of binlogcdc", r.Path(name), maxManifest)
	}
	return b, nil
}

// List lists the objects directly under sub.
func (r *Reader) List(ctx context.Context, sub string) (map[string]bool, error) {
	prefix := r.t.Prefix
	if sub != "" {
		prefix += sub + "/"
	}
	names := map[string]bool{}
	for obj := range r.t.c.ListObjects(ctx, r.t.Bucket, minio.ListObjectsOptions{Prefix: prefix}) {
		if obj.Err != nil {
			return nil, r.err("list", sub+"/", obj.Err)
		}
		name := strings.TrimPrefix(obj.Key, prefix)
		if name != "" && !strings.Contains(name, "/") {
			names[name] = true
		}
	}
	return names, nil
}

// Open opens the object name; the request is sent here, so that a
// missing object is an error of Open, not of the first Read.
func (r *Reader) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	key := r.t.Prefix + name
	var opts minio.GetObjectOptions
	r.mu.Lock()
	etag, seen := r.etags[key]
	r.mu.Unlock()
	if seen {
		if err := opts.SetMatchETag(etag); err != nil {
			return nil, err
		}
	}
	obj, err := r.t.c.GetObject(ctx, r.t.Bucket, key, opts)
	if err != nil {
		return nil, r.err("read", name, err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		if seen && minio.ToErrorResponse(err).Code == "PreconditionFailed" {
			return nil, fmt.Errorf("%s was replaced since it was checked (ETag %s): nothing of it was read; read again", r.Path(name), etag)
		}
		return nil, r.err("read", name, err)
	}
	if seen && st.ETag != etag {
		// A store that ignores If-Match (some S3-compatible ones do).
		obj.Close()
		return nil, fmt.Errorf("%s was replaced since it was checked (ETag %s, then %s): nothing of it was read; read again", r.Path(name), etag, st.ETag)
	}
	if !seen {
		r.mu.Lock()
		r.etags[key] = st.ETag
		r.mu.Unlock()
	}
	return obj, nil
}

// err words a store's error; a missing object or bucket wraps
// fs.ErrNotExist.
func (r *Reader) err(op, name string, err error) error {
	switch minio.ToErrorResponse(err).Code {
	case "NoSuchKey":
		return fmt.Errorf("%s: no such object: %w", r.Path(name), fs.ErrNotExist)
	case "NoSuchBucket":
		return r.noBucket(name)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return &archive.Error{Msg: fmt.Sprintf("cannot %s %s: %v", op, r.Path(name), err),
		Hint: "check the store's address (--s3-endpoint; AWS S3 without it), the network, and the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or MINIO_*, ~/.aws/credentials, AWS_REGION)"}
}

func (r *Reader) noBucket(name string) error {
	return &archive.Error{Msg: fmt.Sprintf("%s: the bucket %s does not exist", r.Path(name), r.t.Bucket),
		Hint: "give the s3://BUCKET/PREFIX that 'binlogcdc archive --upload' sends to (and --s3-endpoint for its store)"}
}
