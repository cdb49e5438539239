package kube

import "strings"

// Upshift's field managers: the names its writes carry in managedFields.
// Each step kind that owns only part of an object has a manager of its
// own, so applying that part never drops fields another part applied.
const (
	// FieldManager is the server-side apply field manager of everything
	// Upshift applies.
	FieldManager = "upshift"
	// ImageFieldManager owns the images the image step sets.
	ImageFieldManager = "upshift-image"
	// JobFieldManager creates the Jobs of job steps.
	JobFieldManager = "upshift-job"
	// RecreateFieldManager owns the annotation of the recreate step's
	// annotate mode.
	RecreateFieldManager = "upshift-recreate"
	// RestoreFieldManager puts back objects from a backup.
	RestoreFieldManager = "upshift-restore"
)

// IsUpshiftManager tells whether a managedFields manager is Upshift's: one
// of the constants above, a future one of the same family ("upshift-…"),
// or a write without an explicit manager from the upshift binary (the
// server names it after the client's user agent; the Helm SDK, after the
// binary).
func IsUpshiftManager(manager string) bool {
	return manager == FieldManager || strings.HasPrefix(manager, FieldManager+"-")
}
