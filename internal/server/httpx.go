package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runstore"
	"github.com/upshift-dev/upshift/internal/server/wizard"
)

// maxBody bounds a request body: a plan with inline sources fits well.
const maxBody = 4 << 20

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v)
}

// apiError is an error as its APIError, with the status the error's
// kind says; every message is redacted.
func apiError(err error) *APIError {
	var ae *APIError
	var conflict *wizard.ConflictError
	switch {
	case errors.As(err, &ae):
		out := *ae
		out.Message = redact.Text(out.Message)
		out.Errors = make([]APIError, len(ae.Errors))
		for i, e := range ae.Errors {
			e.Message = redact.Text(e.Message)
			out.Errors[i] = e
		}
		return &out
	case errors.As(err, &conflict), errors.Is(err, errStateChanged), errors.Is(err, errBusy):
		return &APIError{StatusCode: http.StatusConflict, Message: redact.Text(err.Error())}
	case errors.Is(err, runstore.ErrNotFound):
		return &APIError{StatusCode: http.StatusNotFound, Message: redact.Text(err.Error())}
	}
	return &APIError{StatusCode: http.StatusInternalServerError, Message: redact.Text(err.Error())}
}

func writeError(w http.ResponseWriter, err error) {
	ae := apiError(err)
	writeJSON(w, ae.StatusCode, ae)
}

// badRequest is a 400 naming the body field at fault.
func badRequest(field, format string, a ...any) *APIError {
	return &APIError{StatusCode: http.StatusBadRequest, Field: field, Message: fmt.Sprintf(format, a...)}
}

// decode reads a JSON body into v, refusing unknown fields (a typo must
// not be silently ignored); an empty body leaves v as is.
func decode(r *http.Request, v any) error {
	body := http.MaxBytesReader(nil, r.Body, maxBody)
	var tooLarge *http.MaxBytesError
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err == nil:
		return nil
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooLarge):
		return &APIError{StatusCode: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("the body is larger than %d bytes", maxBody)}
	case errors.As(err, &typ):
		return badRequest(typ.Field, "%s: want a %s, not a JSON %s", typ.Field, typ.Type, typ.Value)
	case errors.As(err, &syntax):
		return badRequest("", "the body is not JSON (at byte %d): %v", syntax.Offset, err)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return badRequest(f, "unknown field %q: see docs/api.md for the body's fields", f)
	}
	return badRequest("", "read the body: %v", err)
}

// errBusy: something else drives the cluster (409).
var errBusy = errors.New("busy")

// The HTTP server's timeouts. A request's headers must come within 10 s
// and the whole request (its body: a plan upload is at most a few MiB)
// within 30 s, so slow clients cannot hold connections; an idle
// keep-alive connection closes after 2 minutes. No WriteTimeout: the
// events stream is one long response, and ends at its token's expiry.
// ReadTimeout does not cut it: net/http lifts the read deadline once a
// request's body is read (TestLongResponseOutlivesReadTimeout).
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	idleTimeout       = 2 * time.Minute
)

// HTTPServer serves h with the timeouts above.
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout, IdleTimeout: idleTimeout}
}
