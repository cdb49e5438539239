package analysis

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"k8s.io/client-go/util/jsonpath"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/egress"
	"github.com/upshift-dev/upshift/internal/redact"
)

// maxWebAnswer bounds what a web provider's answer may weigh: it is
// decoded in the controller's memory.
const maxWebAnswer = 1 << 20

// web measures with a GET of a URL that answers JSON.
type web struct {
	spec   v1alpha1.WebMetric
	path   *jsonpath.JSONPath // nil: the whole answer
	client *http.Client
}

func newWeb(spec v1alpha1.WebMetric, policy egress.Policy) (*web, error) {
	w := &web{spec: spec, client: policy.Client(defaultQueryTimeout)}
	if spec.Timeout != nil && spec.Timeout.Duration > 0 {
		w.client.Timeout = spec.Timeout.Duration
	}
	if spec.JSONPath != "" {
		w.path = jsonpath.New("metric")
		if err := w.path.Parse(spec.JSONPath); err != nil {
			return nil, fmt.Errorf("jsonPath %q: %w", spec.JSONPath, err)
		}
	}
	return w, nil
}

// Measure GETs the URL; an answer that is not 2xx, not JSON or without
// what JSONPath selects is an error. With statusCode, the status is the
// value, whatever it is.
func (w *web) Measure(ctx context.Context, _ time.Time) (any, error) {
	shown := redact.URL(w.spec.URL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, w.spec.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v", shown, redact.URLIn(err.Error(), w.spec.URL))
	}
	req.Header.Set("Accept", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %s", shown, redact.URLIn(err.Error(), w.spec.URL))
	}
	defer resp.Body.Close()
	if w.spec.StatusCode {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxWebAnswer)) // lets the connection be reused
		return float64(resp.StatusCode), nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxWebAnswer+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("GET %s: read the answer: %v", shown, err)
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("GET %s answered %s", shown, resp.Status)
	case len(body) > maxWebAnswer:
		return nil, fmt.Errorf("GET %s answered more than %d bytes", shown, maxWebAnswer)
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("GET %s answered no JSON: %v", shown, err)
	}
	if w.path == nil {
		return doc, nil
	}
	found, err := w.path.FindResults(doc)
	if err != nil || len(found) == 0 || len(found[0]) == 0 {
		return nil, fmt.Errorf("GET %s: jsonPath %s selects nothing in the answer", shown, w.spec.JSONPath)
	}
	if len(found[0]) == 1 {
		return found[0][0].Interface(), nil
	}
	out := make([]any, len(found[0]))
	for i, v := range found[0] {
		out[i] = v.Interface()
	}
	return out, nil
}
