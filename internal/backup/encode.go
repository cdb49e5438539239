package backup

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
)

// chunkSize bounds the bytes of one Secret, safely under the API server's
// 1 MiB limit on a Secret's data (and etcd's request limit once base64
// and metadata are added).
const chunkSize = 900 << 10

// maxSnapshotBytes bounds what a decompressed snapshot may grow to, so a
// tampered chunk cannot exhaust memory.
const maxSnapshotBytes = 1 << 30

// encode turns a snapshot into its JSON (what the checksum covers) and
// that JSON gzip-compressed (what the Secrets hold).
func encode(s *Snapshot) (raw, packed []byte, err error) {
	raw, err = json.Marshal(s)
	if err != nil {
		return nil, nil, fmt.Errorf("encode snapshot: %w", err)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, nil, fmt.Errorf("compress snapshot: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, nil, fmt.Errorf("compress snapshot: %w", err)
	}
	return raw, buf.Bytes(), nil
}

// gunzip undoes encode's compression.
func gunzip(packed []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxSnapshotBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxSnapshotBytes {
		return nil, fmt.Errorf("larger than %d bytes once decompressed", maxSnapshotBytes)
	}
	return raw, nil
}

// split cuts b into pieces of at most size bytes; there is always at least
// one piece, so an empty input still has a Secret to carry its checksums.
func split(b []byte, size int) [][]byte {
	chunks := [][]byte{}
	for len(b) > size {
		chunks = append(chunks, b[:size])
		b = b[size:]
	}
	return append(chunks, b)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
