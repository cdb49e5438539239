package crd

import (
	"strings"
	"testing"
)

func TestStampIsIdempotentAndFollowsTheContent(t *testing.T) {
	gen := []byte("---\nmetadata:\n  annotations:\n    controller-gen.kubebuilder.io/version: v0.19.0\n  name: x\nspec: {a: 1}\n")
	once, err := Stamp(gen)
	if err != nil {
		t.Fatal(err)
	}
	twice, err := Stamp(once)
	if err != nil {
		t.Fatal(err)
	}
	if string(once) != string(twice) {
		t.Errorf("stamping twice changed the file:\n%s\n%s", once, twice)
	}
	if !strings.Contains(string(once), "    controller-gen.kubebuilder.io/version: v0.19.0\n    "+AnnotationDigest+": sha256:") {
		t.Errorf("digest not after controller-gen's annotation:\n%s", once)
	}
	if stamped(once) != Digest(gen) || Digest(once) != Digest(gen) {
		t.Errorf("the digest of a stamped file is not its content's")
	}
	other, _ := Stamp([]byte(strings.Replace(string(gen), "a: 1", "a: 2", 1)))
	if stamped(other) == stamped(once) {
		t.Error("two contents, one digest")
	}
	if _, err := Stamp([]byte("kind: X\n")); err == nil {
		t.Error("stamped a file that is not controller-gen's output")
	}
}
