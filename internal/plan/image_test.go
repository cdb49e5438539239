package plan

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Image references as a kubelet accepts them pass; anything a runtime
// could not pull is rejected with what is wrong.
func TestImageReference(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		image string
		why   string // "" when valid; else part of the message
	}{
		{image: "nginx"},
		{image: "nginx:1.27"},
		{image: "library/nginx:1.27-alpine"},
		{image: "example.com/demo/proxy:1.1.0"},
		{image: "localhost:5000/demo/proxy:v1.1.0_rc.1"},
		{image: "Example.COM/demo/proxy:1.1.0"}, // a registry host is case-insensitive
		{image: "example.com/demo/proxy@" + digest},
		{image: "example.com/demo/proxy:1.1.0@" + digest},
		{image: "example.com/demo/proxy 1.1.0", why: "invalid reference format"},
		{image: "example.com/Demo/proxy:1.1.0", why: "must be lowercase"},
		{image: "example.com/demo/proxy:", why: "invalid reference format"},
		{image: ":1.1.0", why: "invalid reference format"},
		{image: "example.com//proxy:1.1.0", why: "invalid reference format"},
		{image: "example.com/demo/proxy:1.1.0:2", why: "invalid reference format"},
		{image: "example.com/demo/proxy:" + strings.Repeat("1", 129), why: "invalid reference format"},
		{image: "example.com/demo/proxy@sha256:abc", why: "invalid reference format"},
		{image: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", why: "64-byte hexadecimal"},
	} {
		err := imageReferenceError(tc.image)
		switch {
		case tc.why == "" && err != nil:
			t.Errorf("%q rejected: %v", tc.image, err)
		case tc.why != "" && err == nil:
			t.Errorf("%q accepted, want it rejected for %q", tc.image, tc.why)
		case tc.why != "" && (!strings.Contains(err.Error(), tc.why) || !strings.Contains(err.Error(), imageHint)):
			t.Errorf("%q: %v, want %q and the hint %q", tc.image, err, tc.why, imageHint)
		}
	}
}

// Every bad container of a step is reported, in container order, so the
// same plan always reads the same.
func TestImageProblemsAreAllReportedInContainerOrder(t *testing.T) {
	step := &v1alpha1.ImageStep{Kind: "Deployment", Namespace: "demo", Name: "web", Images: map[string]string{
		"sidecar": "example.com/Sidecar:1", "app": "", "": "example.com/x:1", "init": "example.com/init 1", "ok": "example.com/ok:1",
	}}
	want := []string{
		`spec.image.images: Invalid value: "example.com/x:1": this image has an empty container name`,
		`spec.image.images[app]: Required value: an image is required`,
		`spec.image.images[init]: Invalid value: "example.com/init 1": not a valid image reference`,
		`spec.image.images[sidecar]: Invalid value: "example.com/Sidecar:1": not a valid image reference`,
	}
	for range 5 { // map order varies from run to run
		errs := validateImage(field.NewPath("spec", "image"), step)
		if len(errs) != len(want) {
			t.Fatalf("%d problems, want %d:\n%v", len(errs), len(want), errs.ToAggregate())
		}
		for i, w := range want {
			if !strings.HasPrefix(errs[i].Error(), w) {
				t.Errorf("problem %d = %q, want it to start %q", i, errs[i], w)
			}
		}
	}
}
