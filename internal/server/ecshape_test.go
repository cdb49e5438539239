package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/catalog"
)

// The app preflights answer embedded-cluster's required fields with
// arrays, never null: while running (the record holds no result yet), and
// from a record an older server saved with nulls and no strict field.
func TestAppPreflightsAnswerHasNoNull(t *testing.T) {
	now := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	var old AppPreflights
	if err := json.Unmarshal([]byte(`{"output": {"pass": [{"title": "p", "message": ""}], "warn": null, "fail": [{"title": "f", "message": ""}]},
		"status": {"state": "Failed", "description": "", "lastUpdated": "2026-11-24T08:00:00Z"}}`), &old); err != nil {
		t.Fatal(err)
	}
	old.Output.Fail[0].Strict = true
	for _, tc := range []struct {
		name      string
		rec       *record
		titles    string
		hasStrict bool
	}{
		{"never run", &record{LastUpdated: now}, "", false},
		{"running", &record{AppPreflights: &AppPreflights{Status: Status{State: StateRunning, LastUpdated: now}}}, "", false},
		{"saved by an older server", &record{AppPreflights: &old}, "f,p", true},
	} {
		got := appPreflights(tc.rec)
		b, _ := json.Marshal(got)
		if strings.Contains(string(b), "null") {
			t.Errorf("%s: %s", tc.name, b)
		}
		for _, field := range []string{`"titles":`, `"hasStrictAppPreflightFailures":`, `"strict":`} {
			if field == `"strict":` && tc.titles == "" {
				continue
			}
			if !strings.Contains(string(b), field) {
				t.Errorf("%s: no %s in %s", tc.name, field, b)
			}
		}
		if strings.Join(got.Titles, ",") != tc.titles || got.HasStrictAppPreflightFailures != tc.hasStrict || got.Status.LastUpdated.IsZero() {
			t.Errorf("%s: titles %q, hasStrict %v, lastUpdated %s", tc.name, got.Titles, got.HasStrictAppPreflightFailures, got.Status.LastUpdated)
		}
	}
}

// A request without targetVersion (embedded-cluster's) reaches --target,
// else the catalog's newest release, whatever the releases' order.
func TestDefaultTarget(t *testing.T) {
	cat := &catalog.Catalog{Where: "test", ReleaseCatalog: &catalog.ReleaseCatalog{Spec: catalog.Spec{
		Releases: []catalog.Release{{Version: "1.0.0"}, {Version: "v1.10.0"}, {Version: "1.9.3"}}}}}
	for target, want := range map[string]string{"": "1.10.0", "1.9.3": "1.9.3"} {
		s := &Server{cfg: Config{Target: target}}
		v, err := s.defaultTarget(cat)
		if err != nil || v.String() != want {
			t.Errorf("--target %q: %v, %v; want %s", target, v, err, want)
		}
	}
	s := &Server{}
	if _, err := s.defaultTarget(&catalog.Catalog{Where: "empty", ReleaseCatalog: &catalog.ReleaseCatalog{}}); err == nil || !strings.Contains(err.Error(), "targetVersion") {
		t.Errorf("a catalog without releases: %v", err)
	}
}
