package helmx

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/repo"
)

// These tests need no cluster and run with -short. Their servers listen
// on 127.0.0.1 only.

// packaged writes testdata/chart as an archive into dir.
func packaged(t *testing.T, dir string) string {
	t.Helper()
	ch, err := Load("testdata/chart")
	if err != nil {
		t.Fatal(err)
	}
	p, err := chartutil.Save(ch, dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustFetch(t *testing.T, ref ChartRef, base string) *Chart {
	t.Helper()
	b, err := FetchChart(context.Background(), ref, base)
	if err != nil {
		t.Fatalf("FetchChart(%+v): %v", ref, err)
	}
	ch, err := LoadArchive(b)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestFetchLocalDirectoryAndArchive(t *testing.T) {
	want, err := Load("testdata/chart")
	if err != nil {
		t.Fatal(err)
	}
	fromDir := mustFetch(t, ChartRef{Chart: "chart"}, "testdata")
	archive := packaged(t, t.TempDir())
	fromArchive := mustFetch(t, ChartRef{Chart: filepath.Base(archive)}, filepath.Dir(archive))
	for name, ch := range map[string]*Chart{"directory": fromDir, "archive": fromArchive} {
		if ch.Name() != want.Name() || ch.Metadata.Version != want.Metadata.Version || len(ch.Templates) != len(want.Templates) {
			t.Errorf("%s: got %s %s with %d templates, want %s %s with %d", name,
				ch.Name(), ch.Metadata.Version, len(ch.Templates), want.Name(), want.Metadata.Version, len(want.Templates))
		}
	}
	again, err := FetchChart(context.Background(), ChartRef{Chart: "chart"}, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // archive timestamps have one-second precision
	first, err := FetchChart(context.Background(), ChartRef{Chart: "chart"}, "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again) {
		t.Error("packaging the same directory twice gave different archives: a resumed run would see a changed plan")
	}
	_, err = FetchChart(context.Background(), ChartRef{Chart: "missing"}, "testdata")
	if err == nil || !strings.Contains(err.Error(), "fetch chart missing") {
		t.Errorf("missing chart: err = %v", err)
	}
}

func TestFetchFromURLAndRepository(t *testing.T) {
	docroot := t.TempDir()
	archive := packaged(t, docroot)
	srv := httptest.NewServer(http.FileServer(http.Dir(docroot)))
	defer srv.Close()
	idx, err := repo.IndexDirectory(docroot, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(docroot, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HELM_CACHE_HOME", t.TempDir()) // the repository's index is downloaded there

	want, err := Load("testdata/chart")
	if err != nil {
		t.Fatal(err)
	}
	byURL := mustFetch(t, ChartRef{Chart: srv.URL + "/" + filepath.Base(archive), AllowHTTP: true}, "")
	byRepo := mustFetch(t, ChartRef{Chart: want.Name(), Repo: srv.URL, AllowHTTP: true}, "")
	pinned := mustFetch(t, ChartRef{Chart: want.Name(), Repo: srv.URL, Version: want.Metadata.Version, AllowHTTP: true}, "")
	for name, ch := range map[string]*Chart{"url": byURL, "repo": byRepo, "repo with version": pinned} {
		if ch.Name() != want.Name() || ch.Metadata.Version != want.Metadata.Version {
			t.Errorf("%s: got %s %s", name, ch.Name(), ch.Metadata.Version)
		}
	}
	_, err = FetchChart(context.Background(), ChartRef{Chart: want.Name(), Repo: srv.URL, Version: "9.9.9", AllowHTTP: true}, "")
	if err == nil || !strings.Contains(err.Error(), `version "9.9.9" not found`) {
		t.Errorf("missing version: err = %v", err)
	}
	// Not allowed: refused before the server is asked.
	for _, ref := range []ChartRef{{Chart: srv.URL + "/" + filepath.Base(archive)}, {Chart: want.Name(), Repo: srv.URL}} {
		if _, err := FetchChart(context.Background(), ref, ""); err == nil || !strings.Contains(err.Error(), "http:// is refused") {
			t.Errorf("%s over http:// without allowHTTP: err = %v", ref, err)
		}
	}
}

func TestLoopback(t *testing.T) {
	for ref, want := range map[string]bool{
		"localhost:5000/charts/a":  true,
		"127.0.0.1:5000/charts/a":  true,
		"[::1]:5000/a":             true,
		"registry.example.com/a/b": false,
		"10.0.0.1:5000/a":          false,
	} {
		if got := loopback(ref); got != want {
			t.Errorf("loopback(%q) = %v, want %v", ref, got, want)
		}
	}
}

func TestMergeValues(t *testing.T) {
	got, err := MergeValues([][]byte{
		[]byte("a: {p: 1, q: 2}\nlist: [1, 2]\n"),
		[]byte("a: {q: 3}\nlist: [3]\n"),
	}, []byte(`{"a":{"z":4},"b":"inline"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":{"p":1,"q":3,"z":4},"b":"inline","list":[3]}`
	if s := jsonOf(t, got); s != want {
		t.Errorf("merged = %s, want %s", s, want)
	}
	if _, err := MergeValues([][]byte{[]byte("- a list")}, nil); err == nil || !strings.Contains(err.Error(), "values file 1") {
		t.Errorf("a list as values: err = %v", err)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Credentials in a repository's URL or a chart's URL appear in no error:
// neither in Helm's own messages, nor in the chart URL the index names.
func TestFetchErrorsQuoteNoCredentials(t *testing.T) {
	const marker = "s3cr3t-chart"
	docroot := t.TempDir()
	packaged(t, docroot)
	srv := httptest.NewServer(http.FileServer(http.Dir(docroot)))
	defer srv.Close()
	withCreds := strings.Replace(srv.URL, "http://", "http://bot:"+marker+"@", 1)
	idx, err := repo.IndexDirectory(docroot, withCreds+"/?token="+marker)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(docroot, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HELM_CACHE_HOME", t.TempDir())
	for name, ref := range map[string]ChartRef{
		"no repository there":    {Chart: "c", Repo: withCreds + "/nothing/?token=" + marker, AllowHTTP: true},
		"no such version":        {Chart: "helmx-test", Repo: withCreds + "/?token=" + marker, Version: "9.9.9", AllowHTTP: true},
		"no archive there":       {Chart: withCreds + "/missing.tgz?token=" + marker, AllowHTTP: true},
		"oci registry not there": {Chart: "oci://bot:" + marker + "@127.0.0.1:1/c", Version: "1.0.0"},
	} {
		_, err := FetchChart(context.Background(), ref, "")
		t.Logf("%s: %v", name, err)
		if err == nil || strings.Contains(err.Error(), marker) {
			t.Errorf("%s: FetchChart error = %v; want one without the credentials", name, err)
		}
	}
}
