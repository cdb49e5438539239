package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/fuzzcheck"
)

// FuzzRequestBodies decodes API request bodies as the handlers do, into
// each body type the API takes as JSON. A refused body is a 400 (or 413)
// *APIError with a message, naming a field only when it is one of the
// body's; a login body's password is never repeated in it; an accepted
// body, encoded again, decodes to the same request.
func FuzzRequestBodies(f *testing.F) {
	f.Add([]byte(`{"targetVersion":"1.1.0","catalog":"examples/demo","values":{"airgap":"true"},"allowDowngrade":true}`), uint8(0))
	f.Add([]byte(`{"ignoreAppPreflights":true}`), uint8(1))
	f.Add([]byte(`{"step":"approve-2"}`), uint8(2))
	f.Add([]byte(`{"password":"correct horse battery staple"}`), uint8(3))
	f.Add([]byte(`{"targetVersion":1}`), uint8(0))
	f.Add([]byte(`{"stepp":"x"}`), uint8(2))
	f.Add([]byte(``), uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, kind uint8) {
		if len(body) > 64<<10 {
			return
		}
		defer fuzzcheck.Within("an API body's decode", body)()
		bodies := []func() any{
			func() any { return &UpgradeRequest{} }, func() any { return &AppUpgradeRequest{} },
			func() any { return &ApproveRequest{} }, func() any { return &LoginRequest{} },
		}
		newBody := bodies[int(kind)%len(bodies)]
		v := newBody()
		err := decode(httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)), v)
		if err != nil {
			checkRefusal(t, err, body, v)
			return
		}
		again, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("an accepted %T does not encode: %v", v, err)
		}
		v2 := newBody()
		if err := decode(httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(again)), v2); err != nil {
			t.Fatalf("an accepted %T, encoded (%s), is refused: %v", v, again, err)
		}
		if !reflect.DeepEqual(v, v2) {
			t.Fatalf("decode, encode, decode changed the %T: %s", v, again)
		}
	})
}

func checkRefusal(t *testing.T, err error, body []byte, v any) {
	t.Helper()
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("a refused body is %T (%v), not an *APIError", err, err)
	}
	if ae.StatusCode != http.StatusBadRequest && ae.StatusCode != http.StatusRequestEntityTooLarge || ae.Message == "" {
		t.Fatalf("a refused body answers %d %q", ae.StatusCode, ae.Message)
	}
	if ae.Field != "" && !knownField(reflect.TypeOf(v).Elem(), ae.Field) && !strings.Contains(ae.Message, "unknown field") {
		t.Fatalf("the refusal names a field %q the %T does not have: %s", ae.Field, v, ae.Message)
	}
	if _, login := v.(*LoginRequest); login {
		var pw struct {
			Password string `json:"password"`
		}
		if json.Unmarshal(body, &pw) == nil && len(pw.Password) >= 8 && strings.Contains(ae.Message, pw.Password) {
			t.Fatalf("a refused login repeats its password: %s", ae.Message)
		}
	}
}

// knownField: name is a JSON field of t, or a path into one (values.x).
func knownField(t reflect.Type, name string) bool {
	first, _, _ := strings.Cut(name, ".")
	for i := 0; i < t.NumField(); i++ {
		tag, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if tag == first {
			return true
		}
	}
	return false
}
