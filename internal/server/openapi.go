package server

import (
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"
)

// openAPI builds the OpenAPI 3.1 document from the route table: paths,
// methods, access, and the bodies' JSON schemas reflected from the same
// Go types the handlers encode (OpenAPI 3.1 schemas are JSON Schema
// 2020-12, what the reflector writes). servers is /api's parent, as
// embedded-cluster's document says.
func (s *Server) openAPI() map[string]any {
	r := &jsonschema.Reflector{DoNotReference: false, ExpandedStruct: true, AllowAdditionalProperties: true}
	schemas := map[string]any{}
	ref := func(v any) map[string]any {
		if v == nil {
			return nil
		}
		t := reflect.TypeOf(v)
		name := t.Name()
		if name == "" {
			name = "Anonymous" + strconv.Itoa(len(schemas))
		}
		if t.PkgPath() != "" && !strings.HasSuffix(t.PkgPath(), "/server") {
			name = t.PkgPath()[strings.LastIndex(t.PkgPath(), "/")+1:] + "." + name
		}
		sc := r.Reflect(v)
		for k, d := range sc.Definitions {
			schemas[k] = d
		}
		sc.Definitions = nil
		sc.Version = ""
		schemas[name] = sc
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	errorBody := map[string]any{"application/json": map[string]any{"schema": ref(APIError{})}}
	paths := map[string]any{}
	for _, rt := range s.routes() {
		op := map[string]any{"summary": rt.summary, "operationId": operationID(rt)}
		code := rt.status
		if code == 0 {
			code = http.StatusOK
		}
		ct := "application/json"
		if rt.contentType != "" && rt.method == "GET" {
			ct = rt.contentType
		}
		responses := map[string]any{strconv.Itoa(code): map[string]any{"description": http.StatusText(code), "content": map[string]any{ct: map[string]any{"schema": ref(rt.response)}}}}
		for _, c := range errorCodes(rt) {
			responses[strconv.Itoa(c)] = map[string]any{"description": http.StatusText(c), "content": errorBody}
		}
		op["responses"] = responses
		if rt.request != nil {
			rct := "application/json"
			if rt.method == "POST" && rt.contentType != "" {
				rct = rt.contentType
			}
			op["requestBody"] = map[string]any{"content": map[string]any{rct: map[string]any{"schema": ref(rt.request)}}}
		}
		if rt.access == open {
			op["security"] = []any{}
		}
		if strings.Contains(rt.path, "{name}") {
			op["parameters"] = []any{map[string]any{"name": "name", "in": "path", "required": true, "schema": map[string]any{"type": "string"}, "description": "the run's name"}}
		}
		item, _ := paths[rt.path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[rt.path] = item
		}
		item[strings.ToLower(rt.method)] = op
	}
	return map[string]any{
		"openapi":  "3.1.0",
		"info":     map[string]any{"title": "Upshift API", "version": "v1alpha1", "description": "See docs/api.md."},
		"servers":  []any{map[string]any{"url": "/"}},
		"paths":    paths,
		"security": []any{map[string]any{"bearer": []any{}}},
		"components": map[string]any{
			"schemas":         schemas,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}},
		},
	}
}

// errorCodes are the error answers a route can give.
func errorCodes(rt route) []int {
	var codes []int
	if rt.access != open {
		codes = append(codes, http.StatusUnauthorized)
	}
	if rt.access == act {
		codes = append(codes, http.StatusForbidden, http.StatusConflict)
	}
	if rt.request != nil || rt.method == "POST" {
		codes = append(codes, http.StatusBadRequest)
	}
	if strings.Contains(rt.path, "{name}") {
		codes = append(codes, http.StatusNotFound)
	}
	if rt.path == "/api/auth/login" {
		codes = append(codes, http.StatusUnauthorized, http.StatusTooManyRequests)
	}
	return codes
}

// operationID names a route's operation: its method and path in words.
func operationID(rt route) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(rt.method))
	for _, part := range strings.FieldsFunc(rt.path, func(r rune) bool { return r == '/' || r == '-' || r == '.' }) {
		part = strings.Trim(part, "{}")
		if part == "api" || part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

var (
	openAPIOnce sync.Once
	openAPIDoc  map[string]any
)

func (s *Server) handleOpenAPI(w http.ResponseWriter, _ *http.Request) {
	openAPIOnce.Do(func() { openAPIDoc = s.openAPI() })
	writeJSON(w, http.StatusOK, openAPIDoc)
}
