package preview

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func object(kind string, data map[string]any, rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": kind,
		"metadata": map[string]any{
			"name": "x", "namespace": "ns", "resourceVersion": rv, "uid": "u-" + rv,
			"managedFields": []any{map[string]any{"manager": "m"}},
		},
		"data": data,
	}}
	return u
}

// The diff shows the change and none of the server's bookkeeping; a
// Secret's values never appear, only that they changed.
func TestDiff(t *testing.T) {
	before := object("ConfigMap", map[string]any{"a": "1", "b": "2"}, "10")
	after := object("ConfigMap", map[string]any{"a": "1", "b": "3"}, "11")
	d, err := Diff(before, after)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--- live", "+++ planned", "-  b: \"2\"", "+  b: \"3\""} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	for _, noise := range []string{"resourceVersion", "uid", "managedFields"} {
		if strings.Contains(d, noise) {
			t.Errorf("diff shows %s:\n%s", noise, d)
		}
	}

	same, err := Diff(before, object("ConfigMap", map[string]any{"a": "1", "b": "2"}, "12"))
	if err != nil || same != "" {
		t.Errorf("equal but for bookkeeping: diff %q, %v", same, err)
	}

	sb := object("Secret", map[string]any{"password": "czNjcmV0"}, "1") // s3cret
	sa := object("Secret", map[string]any{"password": "bjN3LXMzY3JldA=="}, "2")
	d, err = Diff(sb, sa)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"czNjcmV0", "bjN3LXMzY3JldA==", "s3cret"} {
		if strings.Contains(d, secret) {
			t.Errorf("diff leaks a Secret value:\n%s", d)
		}
	}
	if d == "" {
		t.Error("a changed Secret value shows no change")
	}

	created, err := Diff(nil, after)
	if err != nil || !strings.Contains(created, "+kind: ConfigMap") {
		t.Errorf("create diff = %q, %v", created, err)
	}
}

// A Secret value changed to another of the same length is a change: the
// diff names the key, marks both sides, and shows neither value. An
// unchanged value shows no diff.
func TestDiffSecretSameLength(t *testing.T) {
	before := object("Secret", map[string]any{"password": "czNjcjN0LWE=", "user": "YWRtaW4="}, "1") // s3cr3t-a, admin
	after := object("Secret", map[string]any{"password": "czNjcjN0LWI=", "user": "YWRtaW4="}, "2")  // s3cr3t-b, admin
	d, err := Diff(before, after)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-  password: <redacted 8 bytes (before)>", "+  password: <redacted 8 bytes (after)>", "   user: <redacted 5 bytes>"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	for _, secret := range []string{"czNjcjN0LWE=", "czNjcjN0LWI=", "YWRtaW4=", "s3cr3t", "admin"} {
		if strings.Contains(d, secret) {
			t.Errorf("diff leaks %q:\n%s", secret, d)
		}
	}
	same, err := Diff(before, object("Secret", map[string]any{"password": "czNjcjN0LWE=", "user": "YWRtaW4="}, "3"))
	if err != nil || same != "" {
		t.Errorf("an unchanged Secret: diff %q, %v; want none", same, err)
	}
}
