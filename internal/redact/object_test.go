package redact

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const secretYAML = `
apiVersion: v1
kind: Secret
metadata:
  name: creds
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"stringData":{"token":"hunter2-token"}}'
data: {password: "czNjcjN0LXZhbHVl"}
stringData: {token: hunter2-token}
`

func TestObject(t *testing.T) {
	secret := obj(t, secretYAML)
	orig := secret.DeepCopy()
	r := Object(secret)
	shown := mustJSON(t, r)
	for _, leak := range []string{"czNjcjN0LXZhbHVl", "s3cr3t", "hunter2"} {
		if strings.Contains(shown, leak) {
			t.Errorf("Object shows %q: %s", leak, shown)
		}
	}
	if got := r.Object["data"].(map[string]any)["password"]; got != "<redacted 12 bytes>" {
		t.Errorf("data.password = %v, want <redacted 12 bytes>", got)
	}
	if got := r.Object["stringData"].(map[string]any)["token"]; got != "<redacted 13 bytes>" {
		t.Errorf("stringData.token = %v, want <redacted 13 bytes>", got)
	}
	if !reflect.DeepEqual(secret, orig) {
		t.Error("Object changed its argument")
	}

	cm := obj(t, `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {k: visible}}`)
	if got := Object(cm); !reflect.DeepEqual(got, cm) || got == cm {
		t.Errorf("Object(ConfigMap) = %v, want an equal copy", got)
	}
	if Object(nil) != nil {
		t.Error("Object(nil) != nil")
	}
}

// Pair marks a value changed to another of the same length as changed on
// both sides, an unchanged one as equal, and shows neither.
func TestPair(t *testing.T) {
	before := obj(t, secretYAML)
	after := before.DeepCopy()
	after.Object["data"].(map[string]any)["password"] = "czNjcjN0LXZhbHVm" // same length, other value
	after.Object["data"].(map[string]any)["added"] = "bmV3"
	after.SetAnnotations(map[string]string{lastApplied: `{"stringData":{"token":"hunter3-token"}}`})
	orig := before.DeepCopy()

	b, a := Pair(before, after)
	for _, c := range []struct {
		u         *unstructured.Unstructured
		path      []string
		want      string
		whichSide string
	}{
		{b, []string{"data", "password"}, "<redacted 12 bytes (before)>", "before"},
		{a, []string{"data", "password"}, "<redacted 12 bytes (after)>", "after"},
		{b, []string{"stringData", "token"}, "<redacted 13 bytes>", "before"},
		{a, []string{"stringData", "token"}, "<redacted 13 bytes>", "after"},
		{a, []string{"data", "added"}, "<redacted 3 bytes>", "after"},
		{b, []string{"metadata", "annotations", lastApplied}, "<redacted 40 bytes (before)>", "before"},
		{a, []string{"metadata", "annotations", lastApplied}, "<redacted 40 bytes (after)>", "after"},
	} {
		got, _, _ := unstructured.NestedString(c.u.Object, c.path...)
		if got != c.want {
			t.Errorf("%s %s = %q, want %q", c.whichSide, strings.Join(c.path, "."), got, c.want)
		}
	}
	for _, leak := range []string{"czNjcjN0LXZhbHV", "hunter", "bmV3"} {
		if s := mustJSON(t, b) + mustJSON(t, a); strings.Contains(s, leak) {
			t.Errorf("Pair shows %q: %s", leak, s)
		}
	}
	if !reflect.DeepEqual(before, orig) {
		t.Error("Pair changed its argument")
	}

	created, gone := Pair(nil, before)
	if created != nil || mustJSON(t, gone) != mustJSON(t, Object(before)) {
		t.Errorf("Pair(nil, secret) = %v, %v; want nil and Object(secret)", created, gone)
	}
}
