package server

import (
	"encoding/json"
	"strings"
	"testing"
)

// The document lists every route of the table, with its method, and
// marshals; every operation has a unique id and a success response.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	s := &Server{}
	doc := s.openAPI()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(b, &parsed); err != nil {
		t.Fatal(err)
	}
	if parsed.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", parsed.OpenAPI)
	}
	ids := map[string]string{}
	for _, rt := range s.routes() {
		op, ok := parsed.Paths[rt.path][strings.ToLower(rt.method)]
		if !ok {
			t.Errorf("%s %s is served but not documented", rt.method, rt.path)
			continue
		}
		id, _ := op["operationId"].(string)
		if other, dup := ids[id]; dup {
			t.Errorf("operationId %s of %s %s is also %s's", id, rt.method, rt.path, other)
		}
		ids[id] = rt.path
		if _, ok := op["responses"].(map[string]any); !ok {
			t.Errorf("%s %s has no responses", rt.method, rt.path)
		}
	}
	if !strings.Contains(string(b), `"UpgradeRequest"`) || !strings.Contains(string(b), `"targetVersion"`) {
		t.Errorf("the request schemas are missing: %.300s", b)
	}
}
