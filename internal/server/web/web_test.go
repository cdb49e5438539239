package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/server/web/browsertest"
)

func do(t *testing.T, method, target string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	Handler().ServeHTTP(w, r)
	return w
}

// The app's page answers / and every client route, uncached, with the
// policy that keeps it from loading anything from elsewhere.
func TestIndexForPagesAndClientRoutes(t *testing.T) {
	index, err := File("index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/runs", "/runs/demo-1.1.0", "/preview", "/login", "/index.html", "/a/b/c", "/../web.go"} {
		w := do(t, http.MethodGet, p, nil)
		if w.Code != http.StatusOK {
			t.Errorf("GET %s: %d", p, w.Code)
			continue
		}
		if got := w.Header().Get("Content-Type"); got != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", p, got)
		}
		if got := w.Header().Get("Cache-Control"); got != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q", p, got)
		}
		if got := w.Header().Get("Content-Security-Policy"); got != ContentSecurityPolicy {
			t.Errorf("GET %s: Content-Security-Policy %q", p, got)
		}
		if w.Body.String() != string(index) {
			t.Errorf("GET %s: not index.html", p)
		}
	}
	if !strings.Contains(string(index), `<script type="module" src="/assets/app.js">`) {
		t.Error("index.html does not load /assets/app.js as a module")
	}
}

func TestAssets(t *testing.T) {
	want := map[string]string{
		"app.js":    "text/javascript; charset=utf-8",
		"api.js":    "text/javascript; charset=utf-8",
		"sse.js":    "text/javascript; charset=utf-8",
		"style.css": "text/css; charset=utf-8",
	}
	for name, ct := range want {
		body, err := File(name)
		if err != nil {
			t.Fatal(err)
		}
		w := do(t, http.MethodGet, AssetPrefix+name, nil)
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != ct || w.Body.String() != string(body) {
			t.Errorf("GET %s%s: %d %q, %d bytes; want 200 %q, %d bytes", AssetPrefix, name, w.Code, w.Header().Get("Content-Type"), w.Body.Len(), ct, len(body))
		}
		if w.Header().Get("Cache-Control") != "no-cache" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s%s: headers %v", AssetPrefix, name, w.Header())
		}
		etag := w.Header().Get("ETag")
		if etag == "" {
			t.Errorf("GET %s%s: no ETag", AssetPrefix, name)
			continue
		}
		if w := do(t, http.MethodGet, AssetPrefix+name, map[string]string{"If-None-Match": etag}); w.Code != http.StatusNotModified {
			t.Errorf("GET %s%s with its ETag: %d, want 304", AssetPrefix, name, w.Code)
		}
		if w := do(t, http.MethodHead, AssetPrefix+name, nil); w.Code != http.StatusOK || w.Body.Len() != 0 {
			t.Errorf("HEAD %s%s: %d, %d bytes", AssetPrefix, name, w.Code, w.Body.Len())
		}
	}
	// Every embedded file is served with a type of its own.
	for _, name := range Files() {
		if contentTypes[path.Ext(name)] == "" {
			t.Errorf("%s: no content type for %q", name, path.Ext(name))
		}
		if name == "index.html" {
			continue
		}
		if w := do(t, http.MethodGet, AssetPrefix+name, nil); w.Code != http.StatusOK {
			t.Errorf("GET %s%s: %d", AssetPrefix, name, w.Code)
		}
	}
}

// A missing file is a 404, never the app's page: a script's path with a
// typo would otherwise load HTML as a script.
func TestNotFound(t *testing.T) {
	for _, p := range []string{"/assets/missing.js", "/assets/", "/assets", "/assets/index.html", "/assets/../assets/nope.css", "/assets/sub/app.js"} {
		w := do(t, http.MethodGet, p, nil)
		if w.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, w.Code)
		}
		if strings.Contains(w.Body.String(), "<html") {
			t.Errorf("GET %s: answers HTML", p)
		}
	}
	for _, p := range []string{"/api", "/api/nope", "/api/runs/x/nope"} {
		w := do(t, http.MethodGet, p, nil)
		var e struct {
			StatusCode int    `json:"statusCode"`
			Message    string `json:"message"`
		}
		if w.Code != http.StatusNotFound || json.Unmarshal(w.Body.Bytes(), &e) != nil || e.StatusCode != 404 || e.Message == "" {
			t.Errorf("GET %s: %d %q, want the API's 404", p, w.Code, w.Body.String())
		}
	}
	if w := do(t, http.MethodPost, "/", nil); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /: %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}
}

var (
	htmlRef   = regexp.MustCompile(`(?i)\s(?:src|href|action|poster|data)\s*=\s*["']?([^"'\s>]*)`)
	jsImport  = regexp.MustCompile(`(?m)(?:^\s*import\s[^'"]*?from\s*|^\s*import\s*|\bimport\s*\(\s*)['"]([^'"]+)['"]`)
	cssURL    = regexp.MustCompile(`(?i)url\s*\(|@import|@font-face`)
	anyScheme = regexp.MustCompile(`(?i)\b(?:https?|wss?|ftp):|//[a-z0-9-]+\.[a-z]`)
)

// Nothing the UI loads comes from elsewhere: no URL with a scheme or a
// host in any file (comments included), no font, no stylesheet import;
// the page loads /assets/ files that exist, and the modules import each
// other by relative paths to files that exist.
func TestNoExternalReference(t *testing.T) {
	files := Files()
	if len(files) < 5 {
		t.Fatalf("embedded files: %v", files)
	}
	for _, name := range files {
		b, err := File(name)
		if err != nil {
			t.Fatal(err)
		}
		// The SVG namespace is a name, never fetched (dom.js's svg).
		s := strings.ReplaceAll(string(b), "'http://www.w3.org/2000/svg'", "SVG_NS")
		if m := anyScheme.FindString(s); m != "" {
			t.Errorf("%s: refers to %q, an external URL", name, m)
		}
		if strings.Contains(strings.ToLower(s), "fonts.g") || strings.Contains(s, ".woff") || strings.Contains(s, ".ttf") {
			t.Errorf("%s: refers to a font file", name)
		}
		switch path.Ext(name) {
		case ".css":
			if m := cssURL.FindString(s); m != "" {
				t.Errorf("%s: %q loads a resource", name, m)
			}
		case ".html":
			for _, m := range htmlRef.FindAllStringSubmatch(s, -1) {
				ref := m[1]
				switch {
				case ref == "data:," || strings.HasPrefix(ref, "#"):
				case strings.HasPrefix(ref, AssetPrefix):
					if !slices.Contains(files, strings.TrimPrefix(ref, AssetPrefix)) {
						t.Errorf("%s: %s is not embedded", name, ref)
					}
				default:
					t.Errorf("%s: refers to %q, not under %s", name, ref, AssetPrefix)
				}
			}
		case ".js":
			for _, m := range jsImport.FindAllStringSubmatch(s, -1) {
				ref := m[1]
				if !strings.HasPrefix(ref, "./") {
					t.Errorf("%s: imports %q, not a file beside it", name, ref)
				} else if !slices.Contains(files, path.Join(path.Dir(name), ref)) {
					t.Errorf("%s: imports %q, which is not embedded", name, ref)
				}
			}
		}
	}
}

// The scripts build the page with textContent only: no server text can
// become markup or code.
func TestNoHTMLFromStrings(t *testing.T) {
	banned := []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "srcdoc", "javascript:", "setAttribute('style'", `setAttribute("style"`, "createContextualFragment", "DOMParser"}
	for _, name := range Files() {
		if path.Ext(name) != ".js" {
			continue
		}
		b, err := File(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range banned {
			if strings.Contains(string(b), w) {
				t.Errorf("%s: uses %s", name, w)
			}
		}
	}
	index, _ := File("index.html")
	if m := regexp.MustCompile(`<script>|\sstyle=|\son[a-z]+=`).Find(index); m != nil {
		t.Errorf("index.html has %q: an inline script, style or handler (the Content-Security-Policy refuses them)", m)
	}
}

// The selectors browser tests rely on (browsertest) are in the UI.
func TestSelectorsExist(t *testing.T) {
	var all strings.Builder
	for _, name := range Files() {
		b, err := File(name)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	s := all.String()
	literal := func(x string) bool { return strings.Contains(s, `'`+x+`'`) || strings.Contains(s, `"`+x+`"`) }
	for _, id := range browsertest.TestIDs {
		if !literal(id) {
			t.Errorf("data-testid %q is not in the UI", id)
		}
	}
	for _, id := range []string{"welcome", "configuration", "airgap", "host-preflights", "infra", "app-preflights", "app-upgrade", "done", "fail", "warn", "pass"} {
		if !literal(id) {
			t.Errorf("%q (a step or a preflight result) is not in the UI", id)
		}
	}
	for _, sel := range []string{browsertest.LoginPassword, browsertest.TargetVersion, browsertest.Catalog, browsertest.AllowDowngrade,
		browsertest.IgnorePreflights, browsertest.IgnoreHostPreflights, browsertest.PlanText, browsertest.Announcer} {
		if !literal(strings.TrimPrefix(sel, "#")) {
			t.Errorf("id %s is not in the UI", sel)
		}
	}
	if !strings.Contains(s, "id: `${kind}-progress`") {
		t.Error("the progress bars' ids are not KIND-progress")
	}
}
