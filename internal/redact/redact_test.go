package redact

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestURLHidesCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"https://127.0.0.1:9000/healthz":              "https://127.0.0.1:9000/healthz",
		"https://admin:s3cret@127.0.0.1/healthz":      "https://xxxxx@127.0.0.1/healthz",
		"https://127.0.0.1/healthz?token=abc&x=1":     "https://127.0.0.1/healthz?xxxxx",
		"https://user@127.0.0.1/h?access_token=t0ken": "https://xxxxx@127.0.0.1/h?xxxxx",
		"oci://robot:s3cret@registry.example.com/c":   "oci://xxxxx@registry.example.com/c",
		"http://127.0.0.1:8080/charts":                "http://127.0.0.1:8080/charts",
		"127.0.0.1:9000/healthz":                      "127.0.0.1:9000/healthz",
		"ftp://u:p@a b/x?t=s3cret":                    "ftp://xxxxx@a b/x?xxxxx",
		"u:p@127.0.0.1:9000/h?t=s3cret":               "xxxxx@127.0.0.1:9000/h?xxxxx",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEnvValuesHidesLiteralValuesOnly(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"kind": "CronJob",
		"spec": map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "env": []any{
				map[string]any{"name": "TOKEN", "value": "s3cr3t"},
				map[string]any{"name": "FROM", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "db", "key": "password"}}},
			}}},
		}}}}},
	}}
	out := EnvValues(u)
	b, _ := json.Marshal(out.Object)
	if strings.Contains(string(b), "s3cr3t") || !strings.Contains(string(b), "redacted 6 bytes") || !strings.Contains(string(b), `"key":"password"`) {
		t.Errorf("EnvValues = %s", b)
	}
	if orig, _ := json.Marshal(u.Object); !strings.Contains(string(orig), "s3cr3t") {
		t.Error("EnvValues changed its input")
	}
}
