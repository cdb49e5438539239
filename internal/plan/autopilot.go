package plan

import (
	"net/url"
	"regexp"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
)

// platformName is autopilot's key for a platform: <os>-<arch>.
var platformName = regexp.MustCompile(`^[a-z0-9]+-[a-z0-9]+$`)

var sha256Hex = regexp.MustCompile(`^[a-f0-9]{64}$`)

// k0sVersion is a version as k0s names it: what the kubelets report up to
// "+k0s" is how the step knows a node runs it.
var k0sVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?\+k0s\.\d+$`)

// validateAutopilot checks an autopilot step: a version autopilot can
// compare, and for each platform an http(s) URL and, when set, a sha256.
func validateAutopilot(path *field.Path, a *v1alpha1.AutopilotStep) field.ErrorList {
	var errs field.ErrorList
	if a.Version == "" {
		errs = append(errs, field.Required(path.Child("version"), "the k0s version to run, as k0s names it: v1.34.1+k0s.0"))
	} else if !k0sVersion.MatchString(a.Version) {
		errs = append(errs, field.Invalid(path.Child("version"), a.Version, "not a k0s version: write it as k0s names it, v1.34.1+k0s.0 (the kubelets then report v1.34.1+k0s)"))
	}
	if len(a.Platforms) == 0 {
		errs = append(errs, field.Required(path.Child("platforms"), "where each platform's artifact is, e.g. linux-amd64: {url: https://…/k0s, sha256: …}"))
	}
	names := make([]string, 0, len(a.Platforms))
	for name := range a.Platforms {
		names = append(names, name)
	}
	sort.Strings(names) // one order of errors
	for _, name := range names {
		p, art := path.Child("platforms").Key(name), a.Platforms[name]
		if !platformName.MatchString(name) {
			errs = append(errs, field.Invalid(p, name, "a platform is <os>-<arch>, as autopilot names it: linux-amd64, linux-arm64"))
		}
		if u, err := url.Parse(art.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			errs = append(errs, field.Invalid(p.Child("url"), redact.URL(art.URL), "must be an absolute http(s) URL the nodes can reach"))
		}
		if art.SHA256 != "" && !sha256Hex.MatchString(art.SHA256) {
			errs = append(errs, field.Invalid(p.Child("sha256"), art.SHA256, "must be 64 lowercase hex digits, the sha256 of the URL's content"))
		}
	}
	return errs
}
