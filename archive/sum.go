package archive

// The checksum of each complete file in the manifest. New files get
// XXH3-64 by default (Config.Hash ""): it runs at memory speed, where
// SHA-256 was most of a catch-up's CPU. With --hash sha256 the manifest
// keeps the SHA-256 in the "sha256" field, as manifests had it before
// (and as sha256sum prints it). Any other algorithm's sum is written as
// "sum": "ALGO:HEX". A reader verifies whichever algorithm a file
// records: a bare "sha256" is SHA-256.

import (
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"

	"crypto/sha256"

	"github.com/zeebo/xxh3"
)

// Hash algorithms of the manifest (Config.Hash, --hash).
const (
	HashXXH3   = "xxh3-64"
	HashSHA256 = "sha256"
)

// CheckHash reports whether algo is a hash algorithm the archiver writes
// ("" is the default, XXH3-64).
func CheckHash(algo string) error {
	switch algo {
	case "", HashXXH3, HashSHA256:
		return nil
	}
	return fmt.Errorf("--hash %q: want xxh3-64 (the default) or sha256", algo)
}

// hashAlgo is the algorithm new sums of cfg use.
func (c *Config) hashAlgo() string {
	if c.Hash == "" {
		return HashXXH3
	}
	return c.Hash
}

// newHash returns a hash of algo, or nil when algo is unknown.
func newHash(algo string) hash.Hash {
	switch algo {
	case HashXXH3:
		return xxh3.New()
	case HashSHA256:
		return sha256.New()
	}
	return nil
}

// hashName is the algorithm's name in messages.
func hashName(algo string) string {
	switch algo {
	case HashXXH3:
		return "XXH3-64"
	case HashSHA256:
		return "SHA-256"
	}
	return algo
}

// digest is a running checksum with its algorithm.
type digest struct {
	algo string
	hash.Hash
}

func newDigest(algo string) digest { return digest{algo, newHash(algo)} }

// sum is the checksum as the manifest holds it: "ALGO:HEX".
func (d digest) sum() string { return d.algo + ":" + hex.EncodeToString(d.Sum(nil)) }

// splitSum splits "ALGO:HEX"; a bare HEX is SHA-256.
func splitSum(s string) (algo, hexSum string) {
	if a, h, ok := strings.Cut(s, ":"); ok {
		return a, h
	}
	return HashSHA256, s
}

// plainSum is the binlog's checksum ("ALGO:HEX", "" when there is none):
// the "sum" field, or the "sha256" one.
func (e *FileEntry) plainSum() string {
	if e.Sum != "" {
		return e.Sum
	}
	if e.SHA256 != "" {
		return HashSHA256 + ":" + e.SHA256
	}
	return ""
}

// storedSum is the stored (compressed) file's checksum, likewise.
func (e *FileEntry) storedSum() string {
	if e.StoredSum != "" {
		return e.StoredSum
	}
	if e.StoredSHA256 != "" {
		return HashSHA256 + ":" + e.StoredSHA256
	}
	return ""
}

// asStored is the checksum of the file as it is in DIR.
func (e *FileEntry) asStored() string {
	if e.Stored != "" {
		return e.storedSum()
	}
	return e.plainSum()
}

// setSums sets the sums of the binlog (plain) and of the stored file
// (stored; "" leaves it): SHA-256 in the "sha256" fields, others in
// "sum".
func (e *FileEntry) setSums(plain, stored string) {
	if plain != "" {
		e.SHA256, e.Sum = "", ""
		if a, h := splitSum(plain); a == HashSHA256 {
			e.SHA256 = h
		} else {
			e.Sum = plain
		}
	}
	if stored != "" {
		e.StoredSHA256, e.StoredSum = "", ""
		if a, h := splitSum(stored); a == HashSHA256 {
			e.StoredSHA256 = h
		} else {
			e.StoredSum = stored
		}
	}
}

// sumReader hashes r with the algorithm of want ("ALGO:HEX"): it
// returns the checksum found ("ALGO:HEX") and the bytes read.
func sumReader(r io.Reader, want string) (string, int64, error) {
	algo, _ := splitSum(want)
	h := newHash(algo)
	if h == nil {
		return "", 0, &Error{Msg: fmt.Sprintf("the archive's manifest names the hash algorithm %q, which this binlogcdc does not know", algo),
			Hint: "use the binlogcdc that wrote the archive"}
	}
	// Through a 1 MiB buffer (a bare Reader: os.File's WriteTo would
	// copy 32 KiB at a time).
	n, err := io.CopyBuffer(h, struct{ io.Reader }{r}, make([]byte, 1<<20))
	return digest{algo, h}.sum(), n, err
}

// sumFile is sumReader over the file at path, as stored.
func sumFile(path, want string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	got, _, err := sumReader(f, want)
	return got, err
}

// sameSum reports whether got and want are one checksum (a bare hex
// SHA-256 and "sha256:HEX" are the same).
func sameSum(got, want string) bool {
	ga, gh := splitSum(got)
	wa, wh := splitSum(want)
	return ga == wa && strings.EqualFold(gh, wh)
}

// sumMismatch says what differs: "its XXH3-64 is …, the manifest says …".
func sumMismatch(got, want string) string {
	algo, gh := splitSum(got)
	_, wh := splitSum(want)
	return fmt.Sprintf("its %s is %s, the manifest says %s", hashName(algo), gh, wh)
}
