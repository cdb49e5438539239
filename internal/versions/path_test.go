package versions

import (
	"errors"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

func v(s string) *semver.Version { return semver.MustParse(s) }

func c(s string) *semver.Constraints {
	if s == "" {
		return nil
	}
	k, err := semver.NewConstraint(s)
	if err != nil {
		panic(err)
	}
	return k
}

// rel builds a release: "1.2.0", optional modifiers "stop", "k8s:>=1.30",
// "peers:>=1.1", "from:>=1.0", "installs:1.31".
func rel(spec string) Release {
	parts := strings.Fields(spec)
	r := Release{Version: v(parts[0])}
	for _, p := range parts[1:] {
		switch {
		case p == "stop":
			r.RequiredStop = true
		case strings.HasPrefix(p, "k8s:"):
			r.Kubernetes = c(strings.TrimPrefix(p, "k8s:"))
		case strings.HasPrefix(p, "peers:"):
			r.Peers = c(strings.TrimPrefix(p, "peers:"))
		case strings.HasPrefix(p, "from:"):
			r.AllowFrom = c(strings.TrimPrefix(p, "from:"))
		case strings.HasPrefix(p, "installs:"):
			r.InstallsKubernetes = v(strings.TrimPrefix(p, "installs:"))
		}
	}
	return r
}

func catalog(specs ...string) []Release {
	out := make([]Release, len(specs))
	for i, s := range specs {
		out[i] = rel(s)
	}
	return out
}

func names(path []Release) string {
	var out []string
	for _, r := range path {
		out = append(out, r.Version.String())
	}
	return strings.Join(out, " ")
}

func TestPath(t *testing.T) {
	base := catalog("1.0.0", "1.0.1", "1.1.0", "1.1.1", "1.1.2", "1.2.0", "1.2.3", "2.0.0", "2.0.1", "v2.1.0")
	tests := []pathTest{
		{name: "already there", catalog: base, req: Request{Current: v("1.1.0"), Target: v("1.1.0")}, want: ""},
		{name: "patch only", catalog: base, req: Request{Current: v("1.1.0"), Target: v("1.1.2")}, want: "1.1.2"},
		{name: "patches skipped, one minor at a time, latest patch of each", catalog: base,
			req: Request{Current: v("1.0.0"), Target: v("2.1.0")}, want: "1.1.2 1.2.3 2.0.1 2.1.0"},
		{name: "a v-prefixed tag is a version", catalog: base, req: Request{Current: v("2.0.0"), Target: v("v2.1.0")}, want: "2.1.0"},
		{name: "next minor across a major, by the catalog's minors", catalog: base,
			req: Request{Current: v("1.2.0"), Target: v("2.0.1")}, want: "2.0.1"},
		{name: "a release may allow a skip", catalog: catalog("1.0.0", "1.1.0", "1.2.0 from:>=1.0.0 <1.2.0"),
			req: Request{Current: v("1.0.0"), Target: v("1.2.0")}, want: "1.2.0"},
		{name: "a required stop is kept", catalog: catalog("1.0.0", "1.0.1 stop", "1.0.2", "1.1.0"),
			req: Request{Current: v("1.0.0"), Target: v("1.1.0")}, want: "1.0.1 1.1.0"},
		{name: "an allowed skip does not jump a required stop", catalog: catalog("1.0.0", "1.1.0 stop", "1.2.0 from:>=1.0.0"),
			req: Request{Current: v("1.0.0"), Target: v("1.2.0")}, want: "1.1.0 1.2.0"},
		{name: "a patch Kubernetes rules out is passed by", catalog: catalog("1.0.0", "1.1.0", "1.1.1 k8s:>=1.31", "1.2.0"),
			req: Request{Current: v("1.0.0"), Target: v("1.2.0"), Kubernetes: v("1.30.2")}, want: "1.1.0 1.2.0"},
		{name: "pre-releases are not stops", catalog: catalog("1.0.0", "1.1.0", "1.1.1-rc.1", "1.2.0"),
			req: Request{Current: v("1.0.0"), Target: v("1.2.0")}, want: "1.1.0 1.2.0"},
		{name: "a pre-release target", catalog: catalog("1.0.0", "1.1.0-rc.1"),
			req: Request{Current: v("1.0.0"), Target: v("1.1.0-rc.1")}, want: "1.1.0-rc.1"},
		{name: "a path exists though the greediest first hop leads nowhere", catalog: catalog("1.0.0", "1.1.0", "1.1.5", "1.2.0 k8s:>=1.31", "1.3.0 from:1.1.0"),
			req: Request{Current: v("1.0.0"), Target: v("1.3.0"), Kubernetes: v("1.30.0")}, want: "1.1.0 1.3.0"},
		{name: "an install is the target alone", catalog: base, req: Request{Target: v("1.2.0")}, want: "1.2.0"},
		{name: "a downgrade when asked", catalog: base, req: Request{Current: v("1.2.0"), Target: v("1.1.0"), AllowDowngrade: true}, want: "1.1.0"},

		{name: "unknown target", catalog: base, req: Request{Current: v("1.0.0"), Target: v("3.0.0")}, wantRule: RuleUnknownTarget, wantText: "lists no release 3.0.0"},
		{name: "an install the cluster cannot run", catalog: catalog("1.0.0 k8s:>=1.31"),
			req: Request{Target: v("1.0.0"), Kubernetes: v("1.30.0")}, wantRule: RuleKubernetes, wantText: "cannot install 1.0.0"},
		{name: "no downgrade unless asked", catalog: base, req: Request{Current: v("1.2.0"), Target: v("1.1.0")}, wantRule: RuleDowngrade, wantText: "ask for a downgrade"},
		{name: "the target needs another Kubernetes", catalog: catalog("1.0.0", "1.1.0 k8s:>=1.31"),
			req: Request{Current: v("1.0.0"), Target: v("1.1.0"), Kubernetes: v("1.30.0")}, wantRule: RuleKubernetes, wantText: "1.1.0 needs Kubernetes >=1.31; the cluster runs 1.30.0"},
		{name: "a peer too old for the target, named", catalog: catalog("1.0.0", "1.1.0 peers:>=1.0.0"),
			req: Request{Current: v("1.0.0"), Target: v("1.1.0"), Peers: []Peer{{"east", v("1.0.3")}, {"west", v("0.9.1")}}}, wantRule: RulePeers, wantText: "peer west runs 0.9.1"},
		{name: "a whole minor ruled out blocks the path", catalog: catalog("1.0.0", "1.1.0 k8s:>=1.31", "1.2.0"),
			req: Request{Current: v("1.0.0"), Target: v("1.2.0"), Kubernetes: v("1.30.0")}, wantRule: RuleSkipMinor, wantText: "next minor (1.1)"},
		{name: "a required stop the cluster cannot run by its Kubernetes", catalog: catalog("1.0.0", "1.1.0 stop k8s:>=1.31", "1.2.0 from:>=1.0.0"),
			req: Request{Current: v("1.0.0"), Target: v("1.2.0"), Kubernetes: v("1.30.0")}, wantRule: RuleKubernetes, wantText: "required stop 1.1.0 cannot be stopped at: 1.1.0 needs Kubernetes >=1.31; the cluster runs 1.30.0"},
		{name: "a required stop the cluster cannot run", catalog: catalog("1.0.0", "1.1.0 stop peers:>=1.1.0", "1.2.0 from:>=1.0.0"),
			req: Request{Current: v("1.0.0"), Target: v("1.2.0"), Peers: []Peer{{"east", v("1.0.0")}}}, wantRule: RulePeers, wantText: "required stop 1.1.0 cannot be stopped at"},
	}
	runPathTests(t, tests)
}

// TestPathInstallsKubernetes: a release that installs Kubernetes moves
// what the stops after it are checked against, and the kubernetes-skip
// rule keeps each hop to a minor up (or, asked for, down).
func TestPathInstallsKubernetes(t *testing.T) {
	k := func(cur, tgt, kube string) Request {
		return Request{Current: v(cur), Target: v(tgt), Kubernetes: v(kube)}
	}
	tests := []pathTest{
		{name: "a later range is checked against the Kubernetes installed", catalog: catalog("1.0.0", "1.1.0 installs:1.31", "1.2.0 k8s:>=1.31"),
			req: k("1.0.0", "1.2.0", "1.30.2"), want: "1.1.0 1.2.0"},
		{name: "the stop that installs Kubernetes is taken over a higher patch that does not", catalog: catalog("1.0.0", "1.1.0 installs:1.31", "1.1.1", "1.2.0 k8s:>=1.31"),
			req: k("1.0.0", "1.2.0", "1.30.0"), want: "1.1.0 1.2.0"},
		{name: "a patch after the stop that installs keeps its Kubernetes", catalog: catalog("1.0.0", "1.1.0 installs:1.31", "1.1.1 k8s:>=1.31", "1.2.0 k8s:>=1.31"),
			req: k("1.0.0", "1.1.1", "1.30.0"), want: "1.1.0 1.1.1"},
		{name: "one Kubernetes minor per hop", catalog: catalog("1.0.0", "1.1.0 installs:1.31", "1.2.0 installs:1.32"),
			req: k("1.0.0", "1.2.0", "1.30.0"), want: "1.1.0 1.2.0"},
		{name: "an allowed skip is not taken when it skips a Kubernetes minor", catalog: catalog("1.0.0", "1.1.0 installs:1.31", "1.1.1 installs:1.32", "1.2.0 installs:1.33 from:>=1.0.0"),
			req: k("1.0.0", "1.2.0", "1.30.0"), want: "1.1.0 1.1.1 1.2.0"},
		{name: "patches of Kubernetes move freely", catalog: catalog("1.0.0", "1.1.0 installs:1.30.1"),
			req: k("1.0.0", "1.1.0", "1.30.5"), want: "1.1.0"},
		{name: "a downgrade that takes Kubernetes a minor down, asked for", catalog: catalog("1.0.0 installs:1.30", "1.1.0 installs:1.31"),
			req: Request{Current: v("1.1.0"), Target: v("1.0.0"), Kubernetes: v("1.31.0"), AllowDowngrade: true}, want: "1.0.0"},
		{name: "an install of a release that installs Kubernetes, on no cluster", catalog: catalog("1.0.0 installs:1.32 k8s:>=1.32"),
			req: Request{Target: v("1.0.0")}, want: "1.0.0"},

		{name: "a hop two Kubernetes minors up", catalog: catalog("1.0.0", "1.1.0 installs:1.32"),
			req: k("1.0.0", "1.1.0", "1.30.0"), wantRule: RuleKubeSkip,
			wantText: "1.1.0 installs Kubernetes 1.32.0; the cluster runs 1.30.0: Kubernetes moves one minor per hop (upgrading a control plane skips no minor), so a release that installs 1.31 must be stopped at before it"},
		{name: "the hop that skips is named after the stop that installed", catalog: catalog("1.0.0", "1.1.0 installs:1.31", "1.2.0 installs:1.33"),
			req: k("1.0.0", "1.2.0", "1.30.0"), wantRule: RuleKubeSkip,
			wantText: "1.2.0 installs Kubernetes 1.33.0; the cluster runs 1.31.0 after 1.1.0 installs it: Kubernetes moves one minor per hop"},
		{name: "Kubernetes downgraded unasked", catalog: catalog("1.0.0", "1.1.0 installs:1.29"),
			req: k("1.0.0", "1.1.0", "1.30.0"), wantRule: RuleKubeSkip, wantText: "1.1.0 installs Kubernetes 1.29.0; the cluster runs 1.30.0: that downgrades Kubernetes: ask for a downgrade explicitly"},
		{name: "Kubernetes two minors down, even asked for", catalog: catalog("1.0.0 installs:1.29", "1.1.0"),
			req: Request{Current: v("1.1.0"), Target: v("1.0.0"), Kubernetes: v("1.31.0"), AllowDowngrade: true}, wantRule: RuleKubeSkip, wantText: "down one minor per hop at most"},
		{name: "a release whose range does not hold the Kubernetes it installs", catalog: catalog("1.0.0 installs:1.30 k8s:>=1.31"),
			req: Request{Target: v("1.0.0")}, wantRule: RuleKubernetes, wantText: "1.0.0 needs Kubernetes >=1.31 but installs 1.30.0"},
		{name: "a required stop that skips a Kubernetes minor", catalog: catalog("1.0.0", "1.1.0 stop installs:1.32", "1.2.0 from:>=1.0.0"),
			req: k("1.0.0", "1.2.0", "1.30.0"), wantRule: RuleKubeSkip, wantText: "required stop 1.1.0 cannot be stopped at: 1.1.0 installs Kubernetes 1.32.0"},
		{name: "a later range the Kubernetes installed before does not meet", catalog: catalog("1.0.0", "1.1.0 installs:1.31", "1.2.0 k8s:>=1.32"),
			req: k("1.0.0", "1.2.0", "1.30.0"), wantRule: RuleKubernetes, wantText: "1.2.0 needs Kubernetes >=1.32; the cluster runs 1.31.0 after 1.1.0 installs it"},
	}
	runPathTests(t, tests)
}

type pathTest struct {
	name     string
	catalog  []Release
	req      Request
	want     string
	wantRule string
	wantText string
}

func runPathTests(t *testing.T, tests []pathTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, err := Path(tt.catalog, tt.req)
			if tt.wantRule != "" {
				var npe *NoPathError
				if !errors.As(err, &npe) || npe.Rule != tt.wantRule || !strings.Contains(err.Error(), tt.wantText) {
					t.Fatalf("Path = %q, %v; want rule %s saying %q", names(path), err, tt.wantRule, tt.wantText)
				}
				return
			}
			if err != nil || names(path) != tt.want {
				t.Fatalf("Path = %q, %v; want %q", names(path), err, tt.want)
			}
		})
	}
}
