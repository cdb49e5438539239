package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestPlanPreviewThroughTheAPI: an uploaded plan is validated, checked
// and previewed with its diffs; a malformed one and one that names local
// files are refused with every problem and its field; nothing changes.
func TestPlanPreviewThroughTheAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns, catalog, _ := e.platform()
	s := e.serve("--catalog", catalog)
	admin := s.login(adminPassword) // a preview is an admin's: the server reads the plan's sources with its access
	post := func(body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", s.url+"/api/plans/preview", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+admin)
		req.Header.Set("Content-Type", "application/yaml")
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return resp.StatusCode, out
	}
	good := strings.ReplaceAll(`apiVersion: upshift.dev/v1alpha1
kind: UpgradePlan
metadata: {name: preview}
spec:
  version: "1.0.1"
  stages:
  - name: config
    steps:
    - name: version
      manifests:
        inline: |
          apiVersion: v1
          kind: ConfigMap
          metadata: {name: web-version, namespace: NS}
          data: {version: "1.0.1"}
`, "NS", ns)
	code, out := post(good)
	b, _ := json.Marshal(out)
	if code != http.StatusOK || !strings.Contains(string(b), `"action":"update"`) || !strings.Contains(string(b), "1.0.1") {
		t.Errorf("preview of a good plan: %d %s", code, b)
	}
	if v := e.version(ns); v != "1.0.0" {
		t.Errorf("a preview changed the platform to %s", v)
	}
	code, out = post(strings.Replace(good, "manifests:", "manifest:", 1))
	b, _ = json.Marshal(out)
	if code != http.StatusBadRequest || !strings.Contains(string(b), "manifest") {
		t.Errorf("a plan with an unknown field: %d %s", code, b)
	}
	local := strings.Replace(good, "manifests:\n        inline: |", "manifests:\n        path: manifests/", 1)
	local = local[:strings.Index(local, "path: manifests/")+len("path: manifests/")] + "\n"
	code, out = post(local)
	b, _ = json.Marshal(out)
	if code != http.StatusBadRequest || !strings.Contains(string(b), "spec.stages[0].steps[0].manifests.path") {
		t.Errorf("a plan naming a local directory: %d %s", code, b)
	}
}
