package apps_test

import (
	"strings"
	"testing"
)

// The API server refuses invalid AppRollouts itself (the CRD's schema
// and CEL rules), naming the field, before any controller sees them.
func TestInvalidRolloutsAreRefusedWithFieldPaths(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct{ name, spec, want string }{
		{"no-migration", "version: v2\n  upgradeStrategy:\n    type: RollingWithMigration",
			"spec.upgradeStrategy: Invalid value: \"object\": type RollingWithMigration runs a migration first: set migrationJob"},
		{"no-steps", "version: v2\n  upgradeStrategy:\n    type: Canary",
			"spec.upgradeStrategy: Invalid value: \"object\": type Canary moves in steps: set canary.steps"},
		{"tagged-image", "image: registry.example.com/shop:v1\n  version: v2\n  upgradeStrategy:\n    type: Rolling",
			"spec.image: Invalid value: \"string\": name the repository without a tag or digest"},
		{"heavy-step", "version: v2\n  upgradeStrategy:\n    type: Canary\n    canary:\n      enabled: true\n      steps:\n      - weight: 150",
			"spec.upgradeStrategy.canary.steps[0].weight: Invalid value: 150: spec.upgradeStrategy.canary.steps[0].weight in body should be less than or equal to 100"},
		{"pause-and-until-promoted", "version: v2\n  upgradeStrategy:\n    type: Canary\n    canary:\n      enabled: true\n      steps:\n      - {weight: 20, pause: 60, untilPromoted: true}",
			"spec.upgradeStrategy.canary.steps[0]: Invalid value: \"object\": a step holds for pause seconds or untilPromoted, not both"},
		{"job-and-web", "version: v2\n  upgradeStrategy:\n    type: Canary\n    canary:\n      enabled: true\n      steps: [{weight: 20}]\n      analysis:\n        metrics:\n        - name: m\n          provider: {job: {image: smoke}, web: {url: 'https://x.example'}}",
			"set exactly one provider: prometheus, web or job"},
		{"bad-version", "version: 'v2 final'\n  upgradeStrategy:\n    type: Rolling",
			"spec.version: Invalid value: \"v2 final\": spec.version in body should match"},
		{"unknown-type", "version: v2\n  upgradeStrategy:\n    type: Yolo",
			"spec.upgradeStrategy.type: Unsupported value: \"Yolo\""},
	} {
		manifest := "apiVersion: upshift.dev/v1alpha1\nkind: AppRollout\nmetadata:\n  name: " + c.name + "\nspec:\n  " + c.spec + "\n"
		out, err := e.kubectl(manifest, "apply", "-n", e.ns, "-f", "-")
		if err == nil {
			t.Errorf("%s: accepted:\n%s", c.name, manifest)
			continue
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%s: refused with\n%s\nwant it to say %q", c.name, out, c.want)
		}
	}
}
