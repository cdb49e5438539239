package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ecDocumentFile is embedded-cluster's own OpenAPI document (v2.17.1),
// kept beside the project, never in it: the tests read it where it is.
const ecDocumentFile = "../shared/data/embedded-cluster/swagger-2.17.1.json"

// ecDocURL names the document for the validator; nothing is fetched
// (it is added as a resource), so no $ref leaves the document.
const ecDocURL = "https://embedded-cluster.invalid/swagger-2.17.1.json"

// ecDocument is embedded-cluster's OpenAPI 3.1 document with a JSON
// Schema 2020-12 validator (OpenAPI 3.1's schema dialect): an answer is
// validated against the schema its route and status code name in the
// document, the $refs resolved into its components by the validator.
type ecDocument struct {
	path     string
	doc      map[string]any
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

// loadECDocument reads the document relative to the repository's root
// (the directory of go.mod); absent, it says where it looked.
func loadECDocument() (*ecDocument, error) {
	dir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, fmt.Errorf("no go.mod above the test's directory")
		}
		dir = parent
	}
	path := filepath.Clean(filepath.Join(dir, ecDocumentFile))
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	doc, ok := raw.(map[string]any)
	if !ok || doc["openapi"] != "3.1.0" {
		return nil, fmt.Errorf("%s is not an OpenAPI 3.1.0 document", path)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(ecDocURL, raw); err != nil {
		return nil, err
	}
	return &ecDocument{path: path, doc: doc, compiler: c, compiled: map[string]*jsonschema.Schema{}}, nil
}

// requireECDocument skips the test when the document is absent.
func requireECDocument(t *testing.T) *ecDocument {
	t.Helper()
	d, err := loadECDocument()
	if os.IsNotExist(err) {
		t.Skipf("embedded-cluster's OpenAPI document is absent (%v): put swagger-2.17.1.json at %s, relative to the repository's root, to check the API against it", err, ecDocumentFile)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// operation is the document's operation of an Upshift path (/api/...:
// the document's servers are /api); nil when it defines none.
func (d *ecDocument) operation(method, path string) map[string]any {
	item, _ := d.doc["paths"].(map[string]any)[strings.TrimPrefix(path, "/api")].(map[string]any)
	op, _ := item[strings.ToLower(method)].(map[string]any)
	return op
}

// pointer is the JSON pointer of the operation's part, each token escaped.
func pointer(tokens ...string) string {
	r := strings.NewReplacer("~", "~0", "/", "~1")
	var b strings.Builder
	for _, tok := range tokens {
		b.WriteString("/" + r.Replace(tok))
	}
	return b.String()
}

// schema compiles (once) the schema at a pointer into the document.
func (d *ecDocument) schema(ptr string) (*jsonschema.Schema, error) {
	if s, ok := d.compiled[ptr]; ok {
		return s, nil
	}
	s, err := d.compiler.Compile(ecDocURL + "#" + ptr)
	if err != nil {
		return nil, fmt.Errorf("compile %s of %s: %w", ptr, d.path, err)
	}
	d.compiled[ptr] = s
	return s, nil
}

// responseSchema is the pointer of the schema of an answer: the one the
// operation gives for the code, or types.APIError for an error code it
// does not list (every error of embedded-cluster's API is one; the
// second result says the code is not the document's).
func (d *ecDocument) responseSchema(method, path string, code int) (string, bool, error) {
	op := d.operation(method, path)
	if op == nil {
		return "", false, fmt.Errorf("%s %s: embedded-cluster's document defines no such operation", method, path)
	}
	ecPath := strings.TrimPrefix(path, "/api")
	if resp, ok := op["responses"].(map[string]any)[strconv.Itoa(code)].(map[string]any); ok {
		if _, ok := resp["content"].(map[string]any)["application/json"]; ok {
			return pointer("paths", ecPath, strings.ToLower(method), "responses", strconv.Itoa(code), "content", "application/json", "schema"), true, nil
		}
	}
	if code >= 400 {
		return pointer("components", "schemas", "types.APIError"), false, nil
	}
	return "", false, fmt.Errorf("%s %s answered %d, a success embedded-cluster's document does not define for it", method, path, code)
}

// validateResponse validates an answer's body against its schema.
func (d *ecDocument) validateResponse(method, path string, code int, body []byte) error {
	ptr, _, err := d.responseSchema(method, path, code)
	if err != nil {
		return err
	}
	return d.validate(ptr, body)
}

// validateRequest validates a request body against the operation's
// named request schema: the document's body is oneOf [{type: object},
// {$ref: types.X}], which no object passes (it matches both branches),
// so the $ref branch is what embedded-cluster's client sends.
func (d *ecDocument) validateRequest(method, path string, body []byte) error {
	op := d.operation(method, path)
	rb, _ := op["requestBody"].(map[string]any)
	if rb == nil {
		return fmt.Errorf("%s %s: embedded-cluster's document defines no request body", method, path)
	}
	schema, _ := rb["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	base := []string{"paths", strings.TrimPrefix(path, "/api"), strings.ToLower(method), "requestBody", "content", "application/json", "schema"}
	ptr := pointer(base...)
	if branches, ok := schema["oneOf"].([]any); ok {
		for i, b := range branches {
			if m, _ := b.(map[string]any); m["$ref"] != nil {
				ptr = pointer(append(base, "oneOf", strconv.Itoa(i))...)
			}
		}
	}
	return d.validate(ptr, body)
}

func (d *ecDocument) validate(ptr string, body []byte) error {
	s, err := d.schema(ptr)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON (%v): %s", err, body)
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("does not match embedded-cluster's %s: %v\nbody: %s", ptr, err, body)
	}
	return nil
}

// sharedRoutes are the operations ("METHOD /api/path") both Upshift's
// document (its served routes) and embedded-cluster's define.
func (d *ecDocument) sharedRoutes(upshift map[string]map[string]any) []string {
	var out []string
	for path, item := range upshift {
		for method := range item {
			if d.operation(method, path) != nil {
				out = append(out, strings.ToUpper(method)+" "+path)
			}
		}
	}
	sort.Strings(out)
	return out
}

// The validator bites: what Upshift answered before it followed
// embedded-cluster's types (null arrays, no titles, no strict) and an
// error without a message are refused; EC's own shapes pass. No cluster.
func TestECDocumentRefusesWhatAClientCannotRead(t *testing.T) {
	d := requireECDocument(t)
	const run = "/api/linux/upgrade/app-preflights/run"
	status := `"status": {"state": "Running", "description": "Running app preflights", "lastUpdated": "2026-01-01T00:00:00Z"}`
	for _, tc := range []struct {
		method, path string
		code         int
		body         string
		ok           bool
	}{
		{"POST", run, 200, `{"output": {"pass": null, "warn": null, "fail": null}, ` + status + `, "allowIgnoreAppPreflights": false}`, false},
		{"POST", run, 200, `{"titles": [], "output": {"pass": [{"title": "t", "message": "m"}], "warn": [], "fail": []}, ` + status + `, "allowIgnoreAppPreflights": false, "hasStrictAppPreflightFailures": false}`, false},
		{"POST", run, 200, `{"titles": ["t"], "output": {"pass": [{"title": "t", "message": "m", "strict": true}], "warn": [], "fail": []}, ` + status + `, "allowIgnoreAppPreflights": false, "hasStrictAppPreflightFailures": false}`, true},
		{"POST", "/api/linux/upgrade/infra/upgrade", 200, `{"components": [], "logs": "", ` + strings.Replace(status, "Running", "Stalled", 1) + `}`, false},
		{"POST", "/api/linux/upgrade/infra/upgrade", 400, `{"statusCode": 400, "field": "targetVersion"}`, false},
		{"POST", "/api/linux/upgrade/infra/upgrade", 400, `{"statusCode": 400, "message": "m", "errors": [{"message": "e"}]}`, true},
		{"GET", "/api/health", 200, `{"status": "ok"}`, true},
	} {
		err := d.validateResponse(tc.method, tc.path, tc.code, []byte(tc.body))
		if (err == nil) != tc.ok {
			t.Errorf("%s %s %d %s: valid %v, want %v (%v)", tc.method, tc.path, tc.code, tc.body, err == nil, tc.ok, err)
		}
	}
	if err := d.validateRequest("POST", "/api/linux/upgrade/infra/upgrade", []byte(`{"ignoreHostPreflights": false}`)); err != nil {
		t.Errorf("EC's own infra upgrade body: %v", err)
	}
	if err := d.validateRequest("POST", "/api/linux/upgrade/infra/upgrade", []byte(`{"targetVersion": "1.1.0"}`)); err == nil {
		t.Error("a body without ignoreHostPreflights passed: the request schema is not applied")
	}
	if _, undocumented, _ := d.responseSchema("GET", "/api/linux/upgrade/infra/status", http.StatusForbidden); undocumented {
		t.Error("403 of infra/status is said to be documented")
	}
}
