package backup

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
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

// Encoded is a snapshot as Save writes it: the checksum of its JSON, that
// JSON compressed, and its counts. Encoding a platform's CRDs takes tens
// of milliseconds; a snapshot known before its backup's turn (a new run's
// first, read while the run is created) is encoded meanwhile.
type Encoded struct {
	sha256          string
	packed          []byte
	objects, absent int
	runUID          string
}

// Encode encodes s as Save would. s must not change afterwards.
func Encode(s *Snapshot) (*Encoded, error) {
	raw, packed, err := encode(s)
	if err != nil {
		return nil, err
	}
	objects, absent := s.Counts()
	return &Encoded{sha256: sha256Hex(raw), packed: packed, objects: objects, absent: absent, runUID: s.RunUID}, nil
}

// RunUID is the run the snapshot was encoded for (Snapshot.RunUID).
func (e *Encoded) RunUID() string { return e.runUID }

// Ahead is a snapshot encoded before the run it backs up is known: all
// of it but the run's UID, which For adds. A new run's first snapshot is
// read while the run's record is being created, and encoding it then
// instead of once the record exists takes the encoding (tens of
// milliseconds on a platform's CRDs) off the wait before the first
// change.
//
// The snapshot's JSON ends with its runUID (the struct's last field), so
// the encoding stops just before it: For hashes the rest on from the
// saved SHA-256 state, and compresses it as a gzip member of its own.
// Members read as one stream (RFC 1952, 2.2; Go's readers, and gzip's,
// do), so what loads is byte for byte Encode's JSON of the snapshot with
// that RunUID.
type Ahead struct {
	hashState       []byte // SHA-256 state after the JSON up to the runUID
	packed          []byte // that JSON compressed
	objects, absent int
}

// EncodeAhead encodes s but for its RunUID. s must not change afterwards.
func EncodeAhead(s *Snapshot) (*Ahead, error) {
	entries := Snapshot{Entries: s.Entries}
	raw, err := json.Marshal(&entries) // {"entries":[...]}
	if err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	head := raw[:len(raw)-1] // open: For closes it
	h := sha256.New()
	h.Write(head)
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	packed, err := chunks.Pack(head)
	if err != nil {
		return nil, fmt.Errorf("compress snapshot: %w", err)
	}
	objects, absent := s.Counts()
	return &Ahead{hashState: state, packed: packed, objects: objects, absent: absent}, nil
}

// For is the snapshot encoded with RunUID uid, as Encode would have it.
func (a *Ahead) For(uid string) (*Encoded, error) {
	tail := []byte("}")
	if uid != "" {
		quoted, err := json.Marshal(uid)
		if err != nil {
			return nil, fmt.Errorf("encode snapshot: %w", err)
		}
		tail = fmt.Appendf(nil, `,"runUID":%s}`, quoted)
	}
	h := sha256.New()
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(a.hashState); err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	h.Write(tail)
	packedTail, err := chunks.Pack(tail)
	if err != nil {
		return nil, fmt.Errorf("compress snapshot: %w", err)
	}
	packed := make([]byte, 0, len(a.packed)+len(packedTail))
	packed = append(append(packed, a.packed...), packedTail...)
	return &Encoded{sha256: hex.EncodeToString(h.Sum(nil)), packed: packed, objects: a.objects, absent: a.absent, runUID: uid}, nil
}
