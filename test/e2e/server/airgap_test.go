package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/airgap/airgaptest"
)

const (
	airgapProcess = "/api/linux/upgrade/airgap/process"
	airgapStatus  = "/api/linux/upgrade/airgap/status"
)

// An airgap server (--airgap-bundle, a real registry on 127.0.0.1 over
// TLS) refuses the infrastructure phase (409) until its bundle is
// processed. A bundle with a corrupt blob fails naming it, and nothing
// is pushed; processing again is allowed. A server killed mid-processing
// processes on start; then every image, index and chart of the bundle is
// in the registry with the bundle's digest, and the host preflights and
// the upgrade start. Every answer is validated against embedded-cluster's
// document.
func TestAirgapProcessing(t *testing.T) {
	t.Parallel()
	doc := requireECDocument(t)
	f := newAirgapFixture(t)
	e, reg, good := f.e, f.reg, f.good
	processCorrupt(t, e.serve(f.brokenFlags()...), doc, reg, f.victim)

	// As if a server was killed while processing: the next drives it on.
	setWizardState(t, e, "AirgapProcessing")
	s := e.serve(f.goodFlags()...)
	c := newECClient(t, s, doc)
	c.token = s.login(adminPassword)
	st := c.waitFor(airgapStatus, "the processing's end", func(st ecStatus) bool { return st.Status.State != "Running" })
	if st.Status.State != "Succeeded" || !strings.Contains(s.log.String(), "driving on") {
		t.Fatalf("processing on after a restart: %+v\nserver log:\n%s", st, s.log)
	}
	var ag struct{ Logs string }
	c.call(http.StatusOK, "GET", airgapStatus, nil, &ag)
	if !strings.Contains(ag.Logs, "[airgap] pushed embedded-cluster/coredns:1.12.0 (1/4)") {
		t.Errorf("airgap logs: %q", ag.Logs)
	}
	for ref, want := range good.Digests {
		if got := reg.Digest(t, "mirror/"+ref); got != want {
			t.Errorf("%s in the registry: %q, want the bundle's %s", ref, got, want)
		}
	}
	if st := wizardState(s, c.token); st.State != "AirgapProcessed" || !st.IsAirgap {
		t.Errorf("the state once processed: %+v", st)
	}
	c.call(http.StatusOK, "POST", airgapProcess, nil, &st) // again: the pushes are idempotent
	if st = c.waitFor(airgapStatus, "the processing's end", func(st ecStatus) bool { return st.Status.State != "Running" }); st.Status.State != "Succeeded" {
		t.Fatalf("processing again: %+v\nserver log:\n%s", st, s.log)
	}
	c.call(http.StatusOK, "POST", hostPreRun, nil, nil)
	c.call(http.StatusOK, "POST", infraUpgrade, map[string]bool{"ignoreHostPreflights": false}, &st)
	if st.Status.State != "Running" {
		t.Errorf("the start once processed: %+v", st)
	}
	for _, op := range []string{"GET " + airgapStatus, "POST " + airgapProcess} {
		if !c.answered[op] {
			t.Errorf("%s answered no validated success", op)
		}
	}
}

// airgapFixture is an airgap server's world: a TLS registry on
// 127.0.0.1, the package's platform, and two bundles: broken (its blob
// victim corrupt, pushed under broken/) and good (pushed under mirror/).
type airgapFixture struct {
	e            *env
	reg          *airgaptest.Registry
	catalog, dir string
	broken, good *airgaptest.Bundle
	victim       string
}

func newAirgapFixture(t *testing.T) *airgapFixture {
	f := &airgapFixture{reg: airgaptest.StartRegistry(t), e: newEnv(t), dir: t.TempDir()}
	_, f.catalog, _ = f.e.platform()
	f.broken = airgaptest.Layout(t, "embedded-cluster/coredns:1.12.0")
	f.victim = corruptLayer(t, f.broken)
	f.good = airgaptest.Layout(t, "embedded-cluster/coredns:1.12.0", "embedded-cluster/pause:3.10")
	return f
}

func (f *airgapFixture) flags(bundle, prefix string) []string {
	return []string{"--catalog", f.catalog, "--airgap-bundle", bundle, "--airgap-registry", f.reg.Addr + "/" + prefix, "--airgap-registry-ca-file", f.reg.CAFile}
}

// brokenFlags and goodFlags serve the broken and the good bundle.
func (f *airgapFixture) brokenFlags() []string {
	return f.flags(f.broken.Pack(f.e.t, filepath.Join(f.dir, "broken.tar")), "broken")
}

func (f *airgapFixture) goodFlags() []string {
	return f.flags(f.good.Pack(f.e.t, filepath.Join(f.dir, "good.tar.gz")), "mirror")
}

// processCorrupt: an airgap server refuses the infrastructure phase (409
// naming airgap/process) before processing, a viewer may not process,
// and a bundle whose blob victim is corrupt fails naming it, twice
// (processing again is allowed), with nothing pushed.
func processCorrupt(t *testing.T, s *server, doc *ecDocument, reg *airgaptest.Registry, victim string) {
	t.Helper()
	c := newECClient(t, s, doc)
	c.token = s.login(adminPassword)
	if st := wizardState(s, c.token); !st.IsAirgap || st.State != "New" {
		t.Errorf("the state of an airgap server: %+v, want isAirgap at New", st)
	}
	var st ecStatus
	c.call(http.StatusOK, "GET", airgapStatus, nil, &st)
	if st.Status.State != "Pending" {
		t.Errorf("airgap status before processing: %+v", st)
	}
	var refused apiError
	c.call(http.StatusConflict, "POST", infraUpgrade, map[string]bool{"ignoreHostPreflights": false}, &refused)
	c.call(http.StatusConflict, "POST", hostPreRun, nil, &refused)
	if !strings.Contains(refused.Message, "POST "+airgapProcess) {
		t.Errorf("the host preflights before processing: %+v, want a 409 naming %s", refused, airgapProcess)
	}
	viewer := newECClient(t, s, doc)
	viewer.token = s.login(viewerPassword)
	viewer.call(http.StatusForbidden, "POST", airgapProcess, nil, nil)
	for range 2 { // processing again after a failure is allowed
		c.call(http.StatusOK, "POST", airgapProcess, nil, &st)
		st = c.waitFor(airgapStatus, "the processing's end", func(st ecStatus) bool { return st.Status.State != "Running" })
		if st.Status.State != "Failed" || !strings.Contains(st.Status.Description, victim+" is corrupt") {
			t.Fatalf("processing a bundle whose blob %s is corrupt: %+v\nserver log:\n%s", victim, st, s.log)
		}
	}
	if repos := reg.Repositories(t); len(repos) != 0 {
		t.Errorf("a corrupt bundle pushed %q, want nothing", repos)
	}
	c.call(http.StatusConflict, "POST", infraUpgrade, map[string]bool{"ignoreHostPreflights": false}, nil)
	s.kill()
}

// corruptLayer overwrites a layer blob of the layout and returns its digest.
func corruptLayer(t *testing.T, b *airgaptest.Bundle) string {
	t.Helper()
	for digest, path := range b.Blobs(t) {
		if data, _ := os.ReadFile(path); !strings.HasPrefix(string(data), "{") { // a layer: not a manifest or config
			if err := os.WriteFile(path, []byte("not what was hashed"), 0o600); err != nil {
				t.Fatal(err)
			}
			return digest
		}
	}
	t.Fatal("the layout has no layer")
	return ""
}

type wizardStateAnswer struct {
	State    string `json:"state"`
	IsAirgap bool   `json:"isAirgap"`
}

func wizardState(s *server, token string) wizardStateAnswer {
	var st wizardStateAnswer
	s.must(http.StatusOK, "GET", "/api/linux/upgrade/state", token, nil, &st)
	return st
}

// setWizardState writes the wizard's state in its ConfigMap, as a server
// stopped in it would have left it.
func setWizardState(t *testing.T, e *env, state string) {
	t.Helper()
	cm, err := e.cs.CoreV1().ConfigMaps(e.runsNS).Get(e.ctx, "upshift-serve-state", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := map[string]any{}
	if err := json.Unmarshal([]byte(cm.Data["state.json"]), &rec); err != nil {
		t.Fatal(err)
	}
	rec["state"] = state
	b, _ := json.Marshal(rec)
	cm.Data["state.json"] = string(b)
	if _, err := e.cs.CoreV1().ConfigMaps(e.runsNS).Update(e.ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
