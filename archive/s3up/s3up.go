// Package s3up uploads archived binlog files to S3 or an S3-compatible
// store (binlogcdc archive --upload s3://bucket/prefix), through
// minio-go. Credentials come only from the environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; or
// MINIO_ACCESS_KEY, MINIO_SECRET_KEY) or the AWS credentials file
// (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, AWS_PROFILE), never
// from arguments, and are never printed.
package s3up

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Target is a bucket and a key prefix.
type Target struct {
	c              *minio.Client
	Bucket, Prefix string
	URL            string // for messages: s3://bucket/prefix
}

// ParseURL splits s3://bucket/prefix.
func ParseURL(s string) (bucket, prefix string, err error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("%q: want s3://bucket/prefix", s)
	}
	prefix = strings.Trim(u.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	return u.Host, prefix, nil
}

// New connects to the store at endpoint (a URL, http:// or https://;
// "": AWS S3) for the target s3url. Nothing is sent yet.
func New(s3url, endpoint string) (*Target, error) {
	bucket, prefix, err := ParseURL(s3url)
	if err != nil {
		return nil, err
	}
	host, secure, lookup := "s3.amazonaws.com", true, minio.BucketLookupAuto
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil {
			return nil, fmt.Errorf("--upload-endpoint %q: want http://host:port or https://host:port", endpoint)
		}
		host, secure, lookup = u.Host, u.Scheme == "https", minio.BucketLookupPath
	}
	creds := credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{}, &credentials.EnvMinio{}, &credentials.FileAWSCredentials{},
	})
	c, err := minio.New(host, &minio.Options{Creds: creds, Secure: secure, BucketLookup: lookup, Region: os.Getenv("AWS_REGION"),
		MaxRetries: 3}) // then the archiver tries again later (archive/worker.go)
	if err != nil {
		return nil, err
	}
	return &Target{c: c, Bucket: bucket, Prefix: prefix, URL: "s3://" + bucket + "/" + prefix}, nil
}

// Put uploads the file at path as prefix+key in one PUT with its MD5
// (Content-MD5: the store refuses a body that arrived otherwise), then
// checks the stored object's size and ETag (the MD5 of a one-part
// upload). A binlog file is at most 1 GiB, well under S3's 5 GiB for one
// PUT.
func (t *Target) Put(ctx context.Context, key, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return t.PutSection(ctx, key, f, 0, fi.Size())
}

// PutSection uploads n bytes of f from off as prefix+key, as Put does.
func (t *Target) PutSection(ctx context.Context, key string, f io.ReaderAt, off, n int64) error {
	h := md5.New()
	size, err := io.Copy(h, io.NewSectionReader(f, off, n))
	if err != nil {
		return err
	}
	if size != n {
		return fmt.Errorf("read %d bytes to upload, not %d", size, n)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	name := t.Prefix + key
	_, err = t.c.PutObject(ctx, t.Bucket, name, io.NewSectionReader(f, off, n), size, minio.PutObjectOptions{
		ContentType: "application/octet-stream", SendContentMd5: true, DisableMultipart: true,
	})
	if err != nil {
		return fmt.Errorf("upload to s3://%s/%s: %w", t.Bucket, name, err)
	}
	st, err := t.c.StatObject(ctx, t.Bucket, name, minio.StatObjectOptions{})
	if err != nil {
		return fmt.Errorf("check s3://%s/%s after the upload: %w", t.Bucket, name, err)
	}
	if st.Size != size || strings.Trim(st.ETag, `"`) != sum {
		return fmt.Errorf("s3://%s/%s holds %d bytes of ETag %s after the upload, not %d of MD5 %s", t.Bucket, name, st.Size, st.ETag, size, sum)
	}
	return nil
}

// Remove removes every object under prefix+keyPrefix and returns how
// many there were.
func (t *Target) Remove(ctx context.Context, keyPrefix string) (int, error) {
	n := 0
	for obj := range t.c.ListObjects(ctx, t.Bucket, minio.ListObjectsOptions{Prefix: t.Prefix + keyPrefix, Recursive: true}) {
		if obj.Err != nil {
			return n, fmt.Errorf("list s3://%s/%s*: %w", t.Bucket, t.Prefix+keyPrefix, obj.Err)
		}
		if err := t.c.RemoveObject(ctx, t.Bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
			return n, fmt.Errorf("remove s3://%s/%s: %w", t.Bucket, obj.Key, err)
		}
		n++
	}
	return n, nil
}
