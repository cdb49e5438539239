package chunks

import (
	"bytes"
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
