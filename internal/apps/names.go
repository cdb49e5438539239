package apps

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Labels and annotations on what a rollout creates. The seed operator's
// app and type labels are kept on its Jobs (`kubectl get jobs -l
// app=NAME,type=migration` finds them, as its README says).
const (
	// LabelRollout names the AppRollout a canary Deployment or Job is of.
	LabelRollout = "upshift.dev/approllout"
	// LabelTrack tells canary pods from stable ones: the canary
	// Deployment's selector adds it, so the stable Deployment's pods are
	// never the canary's.
	LabelTrack = "upshift.dev/track"
	// AnnotationAttempt marks what a rollout's attempt created, as
	// "<rollout UID>/<attempt>": a Job of the same name from another
	// attempt, or made by hand, is not taken for this attempt's own.
	AnnotationAttempt = "upshift.dev/approllout-attempt"
)

// maxName is the longest name of what a rollout creates: a Job's name
// becomes its pods' job-name label, a 63-character label value.
const maxName = 63

// deploymentName is the Deployment a rollout upgrades.
func deploymentName(app *v1alpha1.AppRollout) string {
	if app.Spec.DeploymentName != "" {
		return app.Spec.DeploymentName
	}
	return app.Name
}

// canaryName is the canary Deployment's name (the seed operator's).
func canaryName(app *v1alpha1.AppRollout) string {
	return fitName(deploymentName(app) + "-canary")
}

// previewName is a blue-green rollout's preview Deployment.
func previewName(app *v1alpha1.AppRollout) string {
	return fitName(deploymentName(app) + "-preview")
}

// MigrationJobName is the migration Job of a rollout's attempt: the seed
// operator's `<rollout>-migration-<version>`, with the attempt after the
// first, so a retry runs a Job of its own. The version is lower-cased and
// its "." and "_" written "-": a Job's name becomes its pods' hostnames,
// which the API server warns must be DNS labels.
func MigrationJobName(app *v1alpha1.AppRollout, version string, attempt int32) string {
	return jobName(app.Name, "migration", version, attempt)
}

// DownMigrationJobName is the down-migration Job of a rollout's attempt.
func DownMigrationJobName(app *v1alpha1.AppRollout, version string, attempt int32) string {
	return jobName(app.Name, "down-migration", version, attempt)
}

func jobName(app, kind, version string, attempt int32) string {
	n := fmt.Sprintf("%s-%s-%s", app, kind, strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(version)))
	if attempt > 1 {
		n += fmt.Sprintf("-%d", attempt)
	}
	return fitName(strings.Trim(n, "-."))
}

// fitName keeps a name within maxName, the end replaced by a hash of the
// whole when it is longer, so two long names stay apart.
func fitName(n string) string {
	if len(n) <= maxName {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	return strings.TrimRight(n[:maxName-11], "-.") + "-" + hex.EncodeToString(sum[:])[:10]
}

// attemptMark is AnnotationAttempt's value for an attempt of the rollout.
func attemptMark(app *v1alpha1.AppRollout, attempt int32) string {
	return fmt.Sprintf("%s/%d", app.UID, attempt)
}
