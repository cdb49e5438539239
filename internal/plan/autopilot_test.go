package plan

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// What an autopilot step may say: each problem with its field and fix.
func TestAutopilotStep(t *testing.T) {
	sha := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	good := map[string]v1alpha1.AutopilotArtifact{"linux-amd64": {URL: "https://example.com/k0s", SHA256: sha}}
	for _, tc := range []struct {
		name string
		step v1alpha1.AutopilotStep
		want []string
	}{
		{name: "k0s version, one platform", step: v1alpha1.AutopilotStep{Version: "v1.34.1+k0s.0", Platforms: good}},
		{name: "nothing", step: v1alpha1.AutopilotStep{}, want: []string{
			"a.version: Required value: the k0s version to run, as k0s names it: v1.34.1+k0s.0",
			"a.platforms: Required value: where each platform's artifact is, e.g. linux-amd64: {url: https://…/k0s, sha256: …}",
		}},
		{name: "not a version", step: v1alpha1.AutopilotStep{Version: "latest", Platforms: good}, want: []string{
			`a.version: Invalid value: "latest": not a k0s version: write it as k0s names it, v1.34.1+k0s.0 (the kubelets then report v1.34.1+k0s)`,
		}},
		{name: "a Kubernetes version, not k0s's", step: v1alpha1.AutopilotStep{Version: "v1.34.1", Platforms: good}, want: []string{
			`a.version: Invalid value: "v1.34.1": not a k0s version: write it as k0s names it, v1.34.1+k0s.0 (the kubelets then report v1.34.1+k0s)`,
		}},
		{name: "bad platform, url, sha", step: v1alpha1.AutopilotStep{Version: "v1.34.1+k0s.0", Platforms: map[string]v1alpha1.AutopilotArtifact{
			"amd64": {URL: "/k0s", SHA256: "ABC"}}}, want: []string{
			`a.platforms[amd64]: Invalid value: "amd64": a platform is <os>-<arch>, as autopilot names it: linux-amd64, linux-arm64`,
			`a.platforms[amd64].url: Invalid value: "/k0s": must be an absolute http(s) URL the nodes can reach`,
			`a.platforms[amd64].sha256: Invalid value: "ABC": must be 64 lowercase hex digits, the sha256 of the URL's content`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.step
			errs := validateAutopilot(field.NewPath("a"), &s)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %v, want %v", errs, tc.want)
			}
			for i, e := range errs {
				if e.Error() != tc.want[i] {
					t.Errorf("problem %d:\n got %s\nwant %s", i, e.Error(), tc.want[i])
				}
			}
		})
	}
}
