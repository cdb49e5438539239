package lease

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// renewTimePath is the field a holder writes on every renewal.
var renewTimePath = fieldpath.MakePathOrDie("spec", "renewTime")

// renewedAt is when the API server stored the lease's last renewal: the
// time of the managedFields entry that owns spec.renewTime. The server
// sets that time, by its clock, whenever the entry's manager changes a
// field, and every renewal changes renewTime (client-go's leader election
// renews with an Update, recorded under its field manager). Should several
// entries own it (appliers of the same value), the latest counts: a lease
// is rather taken as valid too long than too short.
func renewedAt(l *coordinationv1.Lease) (time.Time, bool) {
	var latest time.Time
	found := false
	for _, e := range l.ManagedFields {
		if e.Time == nil || e.FieldsV1 == nil {
			continue
		}
		var owned fieldpath.Set
		if err := owned.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
			continue // an entry we cannot read says nothing about renewTime
		}
		if owned.Has(renewTimePath) && (!found || e.Time.After(latest)) {
			latest, found = e.Time.Time, true
		}
	}
	return latest, found
}

// serverNow reads the API server's clock, to the second: the Date header of
// its answer to GET /version (every answer carries one, whatever its
// status). client-go's typed clients do not show response headers, so this
// one request goes straight through cs's http.Client, with its TLS and
// credentials.
func serverNow(ctx context.Context, cs kubernetes.Interface) (time.Time, error) {
	rc, ok := cs.CoordinationV1().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil {
		return time.Time{}, fmt.Errorf("read the API server's clock: the client (%T) does not reach an API server", cs)
	}
	hc := rc.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	u := rc.Get().AbsPath("/version").URL()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the API server's clock: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the API server's clock: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16)) // only the header matters
	_ = resp.Body.Close()
	date := resp.Header.Get("Date")
	now, err := http.ParseTime(date)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the API server's clock: GET %s answered %s without a valid Date header (%q)", u.Path, resp.Status, date)
	}
	return now, nil
}
