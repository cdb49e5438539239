package cli

import "github.com/upshift-dev/upshift/api/v1alpha1"

// controllerOnly says, one line for each, which of the plan's settings
// only the controller acts on. The CLI accepts them, so one plan file
// serves both drivers, but does not act on them: the user must not think
// that `upshift apply` impersonates the ServiceAccount, or skips a
// suspended plan. command is "plan" or "apply".
func controllerOnly(spec v1alpha1.UpgradePlanSpec, command string) []string {
	var out []string
	if spec.ServiceAccountName != "" {
		what := "runs with your own credentials"
		if command == "plan" {
			what = "checks your own credentials"
		}
		out = append(out, "spec.serviceAccountName applies when the controller runs this plan; upshift "+command+" "+what)
	}
	if spec.Suspend {
		what := "runs it all the same"
		if command == "plan" {
			what = "previews it all the same"
		}
		out = append(out, "spec.suspend applies when the controller runs this plan; upshift "+command+" "+what)
	}
	return out
}
