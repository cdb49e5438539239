// Package web is the web UI of `upshift serve`: plain HTML, CSS and
// JavaScript modules in static/, embedded in the binary, so building it
// needs no JavaScript toolchain and serving it needs no network (no CDN,
// no external font).
//
// Handler serves them by these rules, for GET and HEAD (other methods: 405):
//
//   - /assets/NAME: the file static/NAME (not index.html); 404 when there
//     is none. A file name that does not exist must not turn into the app's
//     page, or a typo in a script's path would load HTML as a script.
//   - /api and /api/...: 404 as the API's error body ({"statusCode": 404,
//     ...}); the server mounts the API there, so a request reaching this
//     handler names a route that does not exist.
//   - anything else (/, /runs, /runs/NAME, /favicon.ico alike): index.html,
//     so client-side routes survive a reload (run names have dots, so a
//     dot does not tell a file from a page). The app reads a path route as
//     its hash route (/runs/NAME as #/runs/NAME); index.html declares an
//     empty icon, so browsers do not ask for /favicon.ico.
//
// Every file is sent with Cache-Control: no-cache and an ETag (the files
// change with the binary, so a browser revalidates, cheaply). Every answer
// carries a Content-Security-Policy that allows scripts, styles, fetches
// and images from the server itself only, no inline script or style, and
// no font at all: the browser itself refuses what the UI must not do.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// AssetPrefix is the path the static files are served under.
const AssetPrefix = "/assets/"

// ContentSecurityPolicy is sent with every answer of Handler.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// contentTypes maps the extensions of static/ to their types; Handler does
// not ask the mime package, whose table a system file (/etc/mime.types)
// can change. A test checks every embedded file has one.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".json": "application/json",
}

type asset struct {
	body        []byte
	contentType string
	etag        string
}

// Files lists the embedded files' names relative to static/, for tests.
func Files() []string {
	var names []string
	_ = fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, strings.TrimPrefix(p, "static/"))
		}
		return err
	})
	return names
}

// File returns an embedded file's content by its name relative to static/.
func File(name string) ([]byte, error) {
	return static.ReadFile(path.Join("static", name))
}

// Handler serves the UI (see the package's documentation).
func Handler() http.Handler {
	assets := map[string]asset{}
	for _, name := range Files() {
		body, err := File(name)
		if err != nil {
			panic(err) // embedded: cannot happen
		}
		sum := sha256.Sum256(body)
		ct := contentTypes[path.Ext(name)]
		if ct == "" {
			ct = "application/octet-stream"
		}
		assets[name] = asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
	}
	index := assets["index.html"]
	delete(assets, "index.html")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		p := path.Clean("/" + r.URL.Path)
		switch {
		case p == "/api" || strings.HasPrefix(p, "/api/"):
			apiNotFound(w, p)
		case p+"/" == AssetPrefix || strings.HasPrefix(p, AssetPrefix):
			a, ok := assets[strings.TrimPrefix(p, AssetPrefix)]
			if !ok {
				http.NotFound(w, r)
				return
			}
			serve(w, r, a)
		default:
			serve(w, r, index)
		}
	})
}

func serve(w http.ResponseWriter, r *http.Request, a asset) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// apiNotFound answers as the API does (docs/api.md, Errors).
func apiNotFound(w http.ResponseWriter, p string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"statusCode": http.StatusNotFound,
		"message":    "no such route: " + p,
		"field":      "",
		"errors":     []any{},
	})
}
