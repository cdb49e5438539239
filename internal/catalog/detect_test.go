package catalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"github.com/upshift-dev/upshift/internal/versions"
)

func TestAgree(t *testing.T) {
	cm := Finding{Source: "configMap s/v key version", Value: "v1.1.0"}
	img := Finding{Source: "image of Deployment s/c", Value: "1.1.0"}
	tests := []struct {
		name     string
		findings []Finding
		want     string
		wantErr  []string
		nothing  bool
	}{
		{name: "sources agree, tag style or not", findings: []Finding{cm, img}, want: "1.1.0"},
		{name: "an optional source missing is left out", findings: []Finding{cm, {Source: "label", Missing: true, Optional: true}}, want: "1.1.0"},
		{name: "sources disagree: reported, not guessed", findings: []Finding{cm, {Source: "image", Value: "1.0.0"}},
			wantErr: []string{"disagree (1.0.0, 1.1.0)", "configMap s/v key version: v1.1.0", "image: 1.0.0"}},
		{name: "a source missing while others found a version", findings: []Finding{cm, {Source: "helm", Missing: true}},
			wantErr: []string{"do not give one version", "helm: not found"}},
		{name: "a value that is not a version", findings: []Finding{{Source: "label", Value: "latest"}},
			wantErr: []string{`label: "latest" is not a semantic version`}},
		{name: "an unreadable source", findings: []Finding{cm, {Source: "helm", Err: errors.New("forbidden")}},
			wantErr: []string{"helm: forbidden"}},
		{name: "nothing installed", findings: []Finding{{Source: "a", Missing: true}, {Source: "b", Missing: true, Optional: true}},
			wantErr: []string{"no version source found the platform"}, nothing: true},
		{name: "no sources", wantErr: []string{"names no version source"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Agree(tt.findings)
			if tt.wantErr == nil {
				if err != nil || v.String() != tt.want {
					t.Fatalf("Agree = %v, %v; want %s", v, err, tt.want)
				}
				return
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Agree = %v, %v; want an error saying %q", v, err, w)
				}
			}
			if errors.Is(err, ErrNothingInstalled) != tt.nothing {
				t.Errorf("errors.Is(err, ErrNothingInstalled) = %v, want %v", !tt.nothing, tt.nothing)
			}
		})
	}
}

func TestImageTag(t *testing.T) {
	for in, want := range map[string]string{
		"ghcr.io/liqotech/liqo-controller-manager:v1.1.0":   "v1.1.0",
		"registry:5000/team/app:2.0.0":                      "2.0.0",
		"app:1.0@sha256:0123456789abcdef0123456789abcdef":   "1.0",
		"registry:5000/app":                                 "",
		"app@sha256:0123456789abcdef0123456789abcdef012345": "",
		"app:": "",
	} {
		got, ok := ImageTag(in)
		if got != want || ok != (want != "") {
			t.Errorf("ImageTag(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

func TestMatrixCheckPath(t *testing.T) {
	m := Matrix{"v1.0.0": {"v1.0.1", "v1.1.0", "v1.2.0"}, "1.1.0": {"1.2.0"}}
	path := func(vs ...string) []versions.Release {
		out := make([]versions.Release, len(vs))
		for i, v := range vs {
			out[i] = versions.Release{Version: semver.MustParse(v)}
		}
		return out
	}
	peer := func(name, v string) versions.Peer { return versions.Peer{Name: name, Version: semver.MustParse(v)} }
	tests := []struct {
		name  string
		from  string
		path  []versions.Release
		peers []versions.Peer
		want  string
	}{
		{name: "every hop listed from this cluster", from: "1.0.0", path: path("1.1.0", "1.2.0")},
		{name: "a peer left behind keeps the lowest version", from: "1.0.0", path: path("1.1.0", "1.2.0"), peers: []versions.Peer{peer("east", "1.0.0")}},
		{name: "the lowest peer's row lacks the hop", from: "1.1.0", path: path("1.2.0"), peers: []versions.Peer{peer("east", "1.1.0"), peer("west", "0.9.0")},
			want: "1.2.0 is not listed as reachable from 0.9.0 (the lowest version, peer west's)"},
		{name: "this cluster is the lowest and its row lacks the hop", from: "1.1.0", path: path("1.3.0"),
			want: "1.3.0 is not listed as reachable from 1.1.0 (the lowest version, this cluster's)"},
		{name: "an install with no peers has nothing to match", path: path("1.3.0")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var from *semver.Version
			if tt.from != "" {
				from = semver.MustParse(tt.from)
			}
			err := m.CheckPath(from, tt.path, tt.peers)
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("CheckPath = %v, want %q", err, tt.want)
			}
		})
	}
}
