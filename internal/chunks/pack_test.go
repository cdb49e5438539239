package chunks

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"strings"
	"testing"
)

func TestSplitKeepsEveryByteInOrder(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 11, 95} {
		b := bytes.Repeat([]byte("x"), n)
		pieces := Split(b, 10)
		if len(pieces) == 0 {
			t.Fatalf("%d bytes: no piece; an empty blob needs one to carry its checksums", n)
		}
		var joined []byte
		for _, p := range pieces {
			if len(p) > 10 {
				t.Fatalf("%d bytes: a piece of %d", n, len(p))
			}
			joined = append(joined, p...)
		}
		if !bytes.Equal(joined, b) {
			t.Fatalf("%d bytes: pieces join to %d bytes", n, len(joined))
		}
	}
}

func TestPackUnpack(t *testing.T) {
	raw := []byte(strings.Repeat("kind: CustomResourceDefinition\n", 1000))
	packed, err := Pack(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(packed) >= len(raw)/10 {
		t.Errorf("packed %d bytes of repetitive text into %d", len(raw), len(packed))
	}
	back, err := Unpack(packed)
	if err != nil || !bytes.Equal(back, raw) {
		t.Fatalf("Unpack: %v", err)
	}
	if _, err := Unpack([]byte("not gzip")); err == nil {
		t.Error("Unpack of garbage: no error")
	}
}

// Blobs written before Pack moved to klauspost's gzip (backups and
// sources of runs started by an earlier Upshift) still unpack, and what
// Pack writes now reads with the standard library: the format is gzip.
func TestPackIsPlainGzipBothWays(t *testing.T) {
	raw := []byte(strings.Repeat("apiVersion: apiextensions.k8s.io/v1\n", 500))
	var old bytes.Buffer
	zw := stdgzip.NewWriter(&old)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if back, err := Unpack(old.Bytes()); err != nil || !bytes.Equal(back, raw) {
		t.Fatalf("Unpack of a compress/gzip blob: %v", err)
	}
	packed, err := Pack(raw)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := stdgzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		t.Fatalf("compress/gzip reads Pack's output: %v", err)
	}
	if back, err := io.ReadAll(zr); err != nil || !bytes.Equal(back, raw) {
		t.Fatalf("compress/gzip reads Pack's output: %v", err)
	}
}
