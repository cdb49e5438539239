package plan

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// What a distribute step may say: each problem with its field and fix.
func TestDistributeStep(t *testing.T) {
	ok := func() v1alpha1.DistributeStep {
		return v1alpha1.DistributeStep{Image: "lam:1", Command: []string{"/bin/sh", "-c", "pull"}}
	}
	for _, tc := range []struct {
		name string
		edit func(*v1alpha1.DistributeStep)
		want []string
	}{
		{name: "image and command", edit: func(*v1alpha1.DistributeStep) {}},
		{name: "nothing", edit: func(d *v1alpha1.DistributeStep) { *d = v1alpha1.DistributeStep{} }, want: []string{
			"d.image: Required value: the image that copies the artifacts onto each node (embedded-cluster's local-artifact-mirror)",
			`d.command: Required value: what the container runs, e.g. [/bin/sh, -ec, "local-artifact-mirror pull binaries …"]`,
		}},
		{name: "paths, namespace", edit: func(d *v1alpha1.DistributeStep) {
			d.HostPath, d.MountPath, d.Namespace = "var/lib", "/a/../b", "Embedded"
		}, want: []string{
			`d.namespace: Invalid value: "Embedded": a lowercase RFC 1123 label`,
			`d.hostPath: Invalid value: "var/lib": must be a clean absolute path, e.g. /var/lib/embedded-cluster`,
			`d.mountPath: Invalid value: "/a/../b": must be a clean absolute path, e.g. /var/lib/embedded-cluster`,
		}},
		{name: "env names", edit: func(d *v1alpha1.DistributeStep) {
			d.Env = []v1alpha1.NameValue{{Name: "A"}, {Name: "INSTALLATION"}}
			d.SecretEnv = []v1alpha1.SecretEnvVar{{Name: "A", Secret: "Lic", Key: "k"}}
		}, want: []string{
			`d.env[1].name: Invalid value: "INSTALLATION": the step sets it itself (from artifacts and installation)`,
			`d.secretEnv[0].name: Duplicate value: "A"`,
			`d.secretEnv[0].secret: Invalid value: "Lic": a lowercase RFC 1123 subdomain`,
		}},
		{name: "empty artifact", edit: func(d *v1alpha1.DistributeStep) { d.Artifacts = map[string]string{"k0s": ""} }, want: []string{
			"d.artifacts[k0s]: Required value: where the artifact is: a URL, or a registry reference when airgap",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := ok()
			tc.edit(&d)
			errs := validateDistribute(field.NewPath("d"), &d)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %v, want %v", errs, tc.want)
			}
			for i, e := range errs {
				if got := e.Error(); len(got) < len(tc.want[i]) || got[:len(tc.want[i])] != tc.want[i] {
					t.Errorf("problem %d:\n got %s\nwant %s…", i, got, tc.want[i])
				}
			}
		})
	}
}
