package chunks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	// klauspost's gzip writes the same format as compress/gzip at about
	// 3.7 times its speed (a 1.5 MB snapshot of 28 CRDs: 9.6 ms against
	// 35 ms, 6% larger), and a stage's backup is packed on the run's
	// critical path, between its reads and its first write.
	"github.com/klauspost/compress/gzip"
)

// Size bounds the bytes of one chunk, safely under the API server's 1 MiB
// limit on a Secret's data (and etcd's request limit once base64 and
// metadata are added).
const Size = 900 << 10

// maxUnpacked bounds what a blob may grow to once decompressed, so a
// tampered chunk cannot exhaust memory.
const maxUnpacked = 1 << 30

// Pack gzip-compresses raw.
func Pack(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	return buf.Bytes(), nil
}

// Unpack undoes Pack.
func Unpack(packed []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxUnpacked+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxUnpacked {
		return nil, fmt.Errorf("larger than %d bytes once decompressed", maxUnpacked)
	}
	return raw, nil
}

// Split cuts b into pieces of at most size bytes; there is always at least
// one piece, so an empty blob still has a Secret to carry its checksums.
func Split(b []byte, size int) [][]byte {
	pieces := [][]byte{}
	for len(b) > size {
		pieces = append(pieces, b[:size])
		b = b[size:]
	}
	return append(pieces, b)
}

// SHA256Hex is the hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
