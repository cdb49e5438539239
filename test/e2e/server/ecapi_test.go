package server_test

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// ecClient calls the server as embedded-cluster's client would, with
// its bodies, and validates every request it sends and every answer
// against embedded-cluster's document (nil: no validation).
type ecClient struct {
	t     *testing.T
	s     *server
	doc   *ecDocument
	token string
	// answered are the operations that answered a success.
	answered map[string]bool
}

func newECClient(t *testing.T, s *server, doc *ecDocument) *ecClient {
	return &ecClient{t: t, s: s, doc: doc, answered: map[string]bool{}}
}

// call sends a request (body nil: none) with the client's token, fails
// the test unless the code is want or the answer does not match the
// document, and decodes the answer into out.
func (c *ecClient) call(want int, method, path string, body, out any) {
	c.t.Helper()
	if c.doc != nil && body != nil {
		b, _ := json.Marshal(body)
		if err := c.doc.validateRequest(method, path, b); err != nil {
			c.t.Fatalf("the test's request is not embedded-cluster's: %s %s: %v", method, path, err)
		}
	}
	code, b := c.s.call(method, path, c.token, body)
	if code != want {
		c.t.Fatalf("%s %s = %d, want %d: %s\nserver log:\n%s", method, path, code, want, b, c.s.log)
	}
	if c.doc != nil {
		if err := c.doc.validateResponse(method, path, code, b); err != nil {
			c.t.Errorf("%s %s %d: %v", method, path, code, err)
		}
		if _, documented, _ := c.doc.responseSchema(method, path, code); !documented {
			c.t.Logf("%s %s %d: embedded-cluster's document lists no %d for it; validated as its types.APIError", method, path, code, code)
		}
	}
	if code < 300 {
		c.answered[method+" "+path] = true
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// waitFor polls a status route until cond holds, each answer validated.
func (c *ecClient) waitFor(path, what string, cond func(ecStatus) bool) ecStatus {
	c.t.Helper()
	var st ecStatus
	for deadline := time.Now().Add(4 * time.Minute); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		st = ecStatus{}
		c.call(http.StatusOK, "GET", path, nil, &st)
		if cond(st) {
			return st
		}
	}
	c.t.Fatalf("%s: %s never happened; last: %+v\nserver log:\n%s", path, what, st, c.s.log)
	return st
}

// ecStatus is what the tests read of types.Infra, types.AppUpgrade and
// types.UpgradeAppPreflightsStatusResponse (plus Upshift's targetVersion).
type ecStatus struct {
	Status struct {
		State       string `json:"state"`
		Description string `json:"description"`
		LastUpdated string `json:"lastUpdated"`
	} `json:"status"`
	TargetVersion string   `json:"targetVersion"`
	Titles        []string `json:"titles"`
	Output        struct {
		Pass, Warn, Fail []struct {
			Title  string `json:"title"`
			Strict bool   `json:"strict"`
		}
	} `json:"output"`
	HasStrict bool `json:"hasStrictAppPreflightFailures"`
}

const (
	infraUpgrade  = "/api/linux/upgrade/infra/upgrade"
	infraStatus   = "/api/linux/upgrade/infra/status"
	hostPreRun    = "/api/linux/upgrade/host-preflights/run"
	hostPreStatus = "/api/linux/upgrade/host-preflights/status"
	appPreRun     = "/api/linux/upgrade/app-preflights/run"
	appPreStatus  = "/api/linux/upgrade/app-preflights/status"
	appUpgrade    = "/api/linux/upgrade/app/upgrade"
	appStatus     = "/api/linux/upgrade/app/status"
)

// TestECClientUnchanged walks an upgrade as embedded-cluster's client
// does, with its bodies only (no targetVersion: the server's target is
// the catalog's newest release), and validates every answer of every
// route both APIs define, successes and errors, against
// embedded-cluster's own OpenAPI document; lastUpdated is the server's
// start before anything happened, never Go's zero time.
func TestECClientUnchanged(t *testing.T) {
	t.Parallel()
	doc := requireECDocument(t)
	e := newEnv(t)
	ns, catalog, app := e.platform()
	before := time.Now().Add(-time.Second)
	s := e.serve("--catalog", catalog, "--app-plan", app)
	c := newECClient(t, s, doc)

	c.call(http.StatusOK, "GET", "/api/health", nil, nil)
	c.call(http.StatusUnauthorized, "POST", "/api/auth/login", map[string]string{"password": "wrong"}, nil)
	c.call(http.StatusUnauthorized, "GET", infraStatus, nil, nil)
	var login struct{ Token string }
	c.call(http.StatusOK, "POST", "/api/auth/login", map[string]string{"password": adminPassword}, &login)
	c.token = login.Token

	for _, path := range []string{infraStatus, appPreStatus, appStatus} {
		var st ecStatus
		c.call(http.StatusOK, "GET", path, nil, &st)
		at, err := time.Parse(time.RFC3339Nano, st.Status.LastUpdated)
		if err != nil || at.Before(before) || at.After(time.Now()) {
			t.Errorf("%s before anything happened: lastUpdated %q (%v), want the server's start (after %s)", path, st.Status.LastUpdated, err, before.UTC().Format(time.RFC3339))
		}
	}
	// Refusals, each an APIError the client can read.
	c.call(http.StatusConflict, "POST", appPreRun, nil, nil)
	c.call(http.StatusConflict, "POST", appUpgrade, map[string]bool{"ignoreAppPreflights": false}, nil)
	var bad apiError
	c.call(http.StatusBadRequest, "POST", infraUpgrade, map[string]bool{"ignoreHostPreflights": true}, &bad)
	if bad.Field != "ignoreHostPreflights" {
		t.Errorf("ignoreHostPreflights true: %+v", bad)
	}
	viewer := newECClient(t, s, doc)
	viewer.token = s.login(viewerPassword)
	viewer.call(http.StatusForbidden, "POST", infraUpgrade, map[string]bool{"ignoreHostPreflights": false}, nil)
	// Not an airgap server: nothing to process (400, embedded-cluster's
	// documented error), its status Pending.
	c.call(http.StatusBadRequest, "POST", airgapProcess, nil, &bad)
	if !strings.Contains(bad.Message, "no airgap bundle") {
		t.Errorf("airgap processing without a bundle: %+v", bad)
	}
	var airgap ecStatus
	if c.call(http.StatusOK, "GET", airgapStatus, nil, &airgap); airgap.Status.State != "Pending" {
		t.Errorf("airgap status without a bundle: %+v", airgap)
	}

	// The host preflights, as embedded-cluster's client runs them before
	// the infrastructure upgrade: every node of the local cluster is Ready.
	var host ecStatus
	c.call(http.StatusOK, "GET", hostPreStatus, nil, &host)
	if host.Status.State != "Pending" {
		t.Errorf("host preflights before any run: %+v", host)
	}
	c.call(http.StatusOK, "POST", hostPreRun, nil, &host)
	if host.Status.State != "Succeeded" || len(host.Output.Pass) != 3 || len(host.Output.Fail) != 0 {
		t.Errorf("host preflights: %+v, want Succeeded with three passes", host)
	}
	var started ecStatus
	c.call(http.StatusOK, "POST", infraUpgrade, map[string]bool{"ignoreHostPreflights": false}, &started)
	if started.Status.State != "Running" || started.TargetVersion != "1.2.0" || !strings.Contains(started.Status.Description, "1.2.0") {
		t.Errorf("the start without a target: %+v, want Running to 1.2.0 (the catalog's newest)", started)
	}
	c.call(http.StatusConflict, "POST", infraUpgrade, map[string]bool{"ignoreHostPreflights": false}, nil)
	done := c.waitFor(infraStatus, "the infrastructure upgrade's end", func(st ecStatus) bool { return st.Status.State != "Running" })
	if done.Status.State != "Succeeded" || done.TargetVersion != "1.2.0" || e.version(ns) != "1.2.0" {
		t.Fatalf("infrastructure upgrade: %+v, platform at %s; want Succeeded at 1.2.0\nserver log:\n%s", done, e.version(ns), s.log)
	}

	c.call(http.StatusOK, "POST", appPreRun, nil, nil)
	pre := c.waitFor(appPreStatus, "the app preflights' end", func(st ecStatus) bool { return st.Status.State != "Running" })
	checkPreflights(t, pre)
	c.call(http.StatusBadRequest, "POST", appUpgrade, map[string]bool{"ignoreAppPreflights": true}, nil)
	c.call(http.StatusOK, "POST", appUpgrade, map[string]bool{"ignoreAppPreflights": false}, nil)
	if st := c.waitFor(appStatus, "the app upgrade's end", func(st ecStatus) bool { return st.Status.State != "Running" }); st.Status.State != "Succeeded" {
		t.Errorf("app upgrade: %+v", st)
	}

	// Every route both documents define has answered a success here;
	// airgap processing's in TestAirgapProcessing (it needs a bundle).
	var ours struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	s.must(http.StatusOK, "GET", "/api/openapi.json", "", nil, &ours) // Upshift's own: what it serves
	shared := doc.sharedRoutes(ours.Paths)
	for _, op := range shared {
		if !c.answered[op] && op != "POST "+airgapProcess {
			t.Errorf("%s is served and embedded-cluster's, but this test never validated its success", op)
		}
	}
	t.Logf("validated against %s: %s", doc.path, strings.Join(shared, ", "))
}

// checkPreflights: the app plan's preflight passes (strict), the
// warning check that fails warns (not strict), titles name them all.
func checkPreflights(t *testing.T, pre ecStatus) {
	t.Helper()
	o := pre.Output
	if pre.Status.State != "Succeeded" || len(o.Fail) != 0 || len(o.Warn) != 1 || pre.HasStrict {
		t.Fatalf("app preflights: %+v, want Succeeded with one warning", pre)
	}
	if o.Warn[0].Strict || len(o.Pass) == 0 || !o.Pass[0].Strict {
		t.Errorf("strict: a warning is not, the plan's preflight is: %+v", o)
	}
	if len(pre.Titles) != len(o.Pass)+len(o.Warn) || pre.Titles[0] != o.Warn[0].Title {
		t.Errorf("titles %q: want the warning's then the passes'", pre.Titles)
	}
}

// TestECTargetFlag: with --target, embedded-cluster's start (no
// targetVersion) upgrades to that version, not the newest, and the
// status says it before and after; a --target the catalog does not have
// is a 400 that names the flag, and changes nothing.
func TestECTargetFlag(t *testing.T) {
	t.Parallel()
	doc, err := loadECDocument() // the answers are validated when it is there
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	e := newEnv(t)
	ns, catalog, _ := e.platform()
	wrong := e.serve("--catalog", catalog, "--target", "9.9.9")
	c := newECClient(t, wrong, doc)
	c.token = wrong.login(adminPassword)
	var bad apiError
	c.call(http.StatusBadRequest, "POST", infraUpgrade, map[string]bool{"ignoreHostPreflights": false}, &bad)
	if bad.Field != "targetVersion" || !strings.Contains(bad.Message, "--target 9.9.9") {
		t.Errorf("--target 9.9.9: %+v, want a 400 naming the flag", bad)
	}
	wrong.kill()

	s := e.serve("--catalog", catalog, "--target", "1.1.0")
	c = newECClient(t, s, doc)
	c.token = s.login(adminPassword)
	var st ecStatus
	c.call(http.StatusOK, "GET", infraStatus, nil, &st)
	if st.TargetVersion != "1.1.0" || !strings.Contains(st.Status.Description, "1.1.0") {
		t.Errorf("status before the start: %+v, want the target 1.1.0", st)
	}
	c.call(http.StatusOK, "POST", infraUpgrade, map[string]bool{"ignoreHostPreflights": false}, &st)
	done := c.waitFor(infraStatus, "the upgrade's end", func(st ecStatus) bool { return st.Status.State != "Running" })
	if done.Status.State != "Succeeded" || done.TargetVersion != "1.1.0" || e.version(ns) != "1.1.0" {
		t.Errorf("--target 1.1.0: %+v, platform at %s; want Succeeded at 1.1.0\nserver log:\n%s", done, e.version(ns), s.log)
	}
}
