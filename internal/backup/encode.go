package backup

import (
	"encoding/json"
	"fmt"

	"github.com/upshift-dev/upshift/internal/chunks"
)

// Backups are cut, compressed and checksummed as every blob Upshift keeps
// in the cluster is (internal/chunks): chunks under 1 MiB, gzip, SHA-256.
var (
	gunzip    = chunks.Unpack
	split     = chunks.Split
	sha256Hex = chunks.SHA256Hex
)

const chunkSize = chunks.Size

// encode turns a snapshot into its JSON (what the checksum covers) and
// that JSON gzip-compressed (what the Secrets hold).
func encode(s *Snapshot) (raw, packed []byte, err error) {
	raw, err = json.Marshal(s)
	if err != nil {
		return nil, nil, fmt.Errorf("encode snapshot: %w", err)
	}
	packed, err = chunks.Pack(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("compress snapshot: %w", err)
	}
	return raw, packed, nil
}

// encoded is a snapshot as Save writes it: the checksum of its JSON, that
// JSON compressed, and its counts.
type encoded struct {
	sha256          string
	packed          []byte
	objects, absent int
}

// encodeSnapshot encodes s as Save writes it.
func encodeSnapshot(s *Snapshot) (*encoded, error) {
	raw, packed, err := encode(s)
	if err != nil {
		return nil, err
	}
	objects, absent := s.Counts()
	return &encoded{sha256: sha256Hex(raw), packed: packed, objects: objects, absent: absent}, nil
}
