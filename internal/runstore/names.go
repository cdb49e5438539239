package runstore

import "github.com/upshift-dev/upshift/internal/object"

// Where and how a run is kept.
const (
	// Resource is the UpgradeRun resource, in upshift.dev/v1alpha1.
	Resource = "upgraderuns"
	// LabelRun carries the run's name (shortened with a hash past 63
	// characters) on the run and on its source chunks.
	LabelRun = "upshift.dev/run"
	// LabelOwnerUID carries the UID of the resource that started the
	// run (spec.owner), to select a PlatformUpgrade's hops by label.
	LabelOwnerUID = "upshift.dev/owner-uid"
	// LabelManagedBy and ManagedBy say which tool wrote the object.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "upshift"

	// Limits of a Secret's name (DNS subdomain) and of a label value.
	maxNameLen  = 253
	maxLabelLen = 63
)

// labelValue is the run's name as a label value.
func labelValue(run string) string { return shorten(run, maxLabelLen) }

// shorten is object.Shorten: one rule for every name Upshift makes.
func shorten(s string, max int) string { return object.Shorten(s, max) }

func labelsFor(run string) map[string]string {
	return map[string]string{LabelRun: labelValue(run), LabelManagedBy: ManagedBy}
}
