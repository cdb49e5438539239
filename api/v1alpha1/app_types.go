package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// AppRolloutKind names the resource.
const AppRolloutKind = "AppRollout"

// AppRollout moves one application's Deployment to a version: a
// database migration first when one is set, then a rolling update or
// canary steps of weight and pause, judged by the new version's readiness
// probe (healthCheck), and rolled back to the Deployment as it was
// captured before the rollout (with the down-migration) when any of it
// fails. Its spec has the field names of the ManagedApplication operator
// (apps.example.com/v1alpha1), so such a manifest converts by changing
// apiVersion and kind; what Upshift adds is named as in Argo Rollouts
// where Argo has a name for it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=upshift
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.currentVersion`
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.status.targetVersion`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="For display: read the conditions to decide"
// +kubebuilder:printcolumn:name="Canary",type=integer,JSONPath=`.status.canaryWeight`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type AppRollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              AppRolloutSpec `json:"spec"`
	// +optional
	Status AppRolloutStatus `json:"status,omitempty"`
}

// AppRolloutList is a list of AppRollouts.
//
// +kubebuilder:object:root=true
type AppRolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []AppRollout `json:"items"`
}

// AppRolloutSpec is the version an application should run and how to get
// there.
type AppRolloutSpec struct {
	// DeploymentName is the Deployment to upgrade, in the rollout's
	// namespace (default: the rollout's name).
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	DeploymentName string `json:"deploymentName,omitempty"`
	// Image is the repository of the Deployment's first container,
	// without a tag ("registry.example.com/shop/web"). Empty: the
	// repository the container runs now. (The ManagedApplication operator
	// requires it; its README's example leaves it out, and both convert.)
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule=`!self.contains('@') && !self.matches(':[^/]*$')`,message="name the repository without a tag or digest (registry.example.com/shop/web): the tag is spec.version"
	Image string `json:"image,omitempty"`
	// Version is the image tag to run ("v2.0.0").
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`
	Version string `json:"version"`
	// After names the AppRollout of this namespace that comes before this
	// one in a service group: this one starts only once that one is
	// Healthy at its spec.version; and when this one fails and is rolled
	// back, that one is rolled back too (with its down-migration), and so
	// on up the group, newest first. A rollout rolled back for its group
	// starts again by itself once the one before it is Healthy again.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	After string `json:"after,omitempty"`
	// Paused stops the rollout at the step it is at (a migration Job runs
	// on, but nothing after it starts); false again resumes it there, with
	// the time it had left.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// UpgradeStrategy is how the new version is brought in.
	UpgradeStrategy AppUpgradeStrategy `json:"upgradeStrategy"`
	// ServiceAccountName is whom the rollout acts as, in this namespace:
	// it reads and writes the Deployment, the canary Deployment, the
	// migration Jobs and the backup Secrets. Empty: the namespace's
	// default ServiceAccount, never the controller's own rights.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Windows are when the rollout may take a step: it starts, moves to
	// a canary step or promotes only inside one (a rollback any time).
	// Empty: any time.
	// +optional
	// +kubebuilder:validation:MaxItems=10
	Windows []UpgradeWindow `json:"windows,omitempty"`
	// ProgressDeadlineSeconds is how long a migration, a canary step's
	// pods or the promoted Deployment may take to be ready before the
	// rollout fails and is rolled back (Argo Rollouts' name; default 600).
	// Time spent paused does not count.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
}

// The strategies of spec.upgradeStrategy.type.
const (
	StrategyRolling              = "Rolling"
	StrategyRollingWithMigration = "RollingWithMigration"
	StrategyCanary               = "Canary"
	StrategyBlueGreen            = "BlueGreen"
)

// AppUpgradeStrategy is how a rollout brings in the new version.
//
// +kubebuilder:validation:XValidation:rule=`self.type != 'RollingWithMigration' || has(self.migrationJob)`,message="type RollingWithMigration runs a migration first: set migrationJob (image and command)"
// +kubebuilder:validation:XValidation:rule=`self.type != 'Canary' || has(self.canary)`,message="type Canary moves in steps: set canary.steps (weight and pause of each)"
// +kubebuilder:validation:XValidation:rule=`self.type != 'BlueGreen' || has(self.blueGreen)`,message="type BlueGreen switches a Service: set blueGreen.activeService"
type AppUpgradeStrategy struct {
	// Type: Rolling (the Deployment's own rolling update),
	// RollingWithMigration (the migration Job first), or Canary (a canary
	// Deployment scaled to each step's weight). Canary steps run when
	// canary.enabled is true, with Canary or RollingWithMigration (as the
	// seed's example asks); Rolling ignores them. BlueGreen brings the
	// new version up beside the old one and switches a Service to it.
	// +kubebuilder:validation:Enum=Rolling;RollingWithMigration;Canary;BlueGreen
	Type string `json:"type"`
	// MigrationJob runs to completion before the new version is deployed
	// (with any type), once per attempt.
	// +optional
	MigrationJob *AppMigrationJob `json:"migrationJob,omitempty"`
	// HealthCheck is a Kubernetes probe set as the readiness probe of the
	// new version's first container: the rollout moves on when the pods
	// are ready by it, judged where they run (the controller never dials
	// a pod).
	// +optional
	HealthCheck *corev1.Probe `json:"healthCheck,omitempty"`
	// Canary configures the weighted steps of type Canary.
	// +optional
	Canary *AppCanary `json:"canary,omitempty"`
	// BlueGreen configures type BlueGreen.
	// +optional
	BlueGreen *AppBlueGreen `json:"blueGreen,omitempty"`
}

// AppBlueGreen is a blue-green rollout, with Argo Rollouts' field names:
// the new version runs beside the old one in a Deployment
// `<deployment>-preview` at full size, the preview Service selects it,
// and the promotion switches the active Service to it. After the
// scale-down delay the Deployment itself is updated, the Services are
// switched back to it (now on the new version) and the preview is
// deleted, so the Deployment stays the one source of what runs.
type AppBlueGreen struct {
	// ActiveService is the Service of the rollout's namespace that users'
	// traffic goes through: switched to the new version at the promotion.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	ActiveService string `json:"activeService"`
	// PreviewService is a Service switched to the new version before the
	// promotion, to try it.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	PreviewService string `json:"previewService,omitempty"`
	// AutoPromotionEnabled: promote once the preview is ready and its
	// pre-promotion analysis passed (default true); false waits for
	// upshift app promote.
	// +optional
	AutoPromotionEnabled *bool `json:"autoPromotionEnabled,omitempty"`
	// AutoPromotionSeconds the preview is held, ready, before an
	// automatic promotion.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=604800
	AutoPromotionSeconds int32 `json:"autoPromotionSeconds,omitempty"`
	// ScaleDownDelaySeconds the old version keeps running after the
	// switch, so a failure after it switches straight back (default 30).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	ScaleDownDelaySeconds *int32 `json:"scaleDownDelaySeconds,omitempty"`
	// PrePromotionAnalysis must succeed before the switch; its metrics
	// run to their count (once without an interval).
	// +optional
	PrePromotionAnalysis *AppAnalysis `json:"prePromotionAnalysis,omitempty"`
	// PostPromotionAnalysis must succeed after the switch, before the old
	// version goes; a failure switches back.
	// +optional
	PostPromotionAnalysis *AppAnalysis `json:"postPromotionAnalysis,omitempty"`
}

// AppMigrationJob is the migration a rollout runs before its new version,
// as a Job `<rollout>-migration-<version>` in the rollout's namespace.
type AppMigrationJob struct {
	// Image of the migration container.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Image string `json:"image"`
	// Command is the migration's entrypoint.
	// +optional
	Command []string `json:"command,omitempty"`
	// Env is extra environment of the migration container.
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`
	// RollbackCommand is the down-migration: run with the same image and
	// environment when the rollout is rolled back after its migration
	// ran (after the Deployment is back on the old version). Without it a
	// rollback leaves the database as the migration left it.
	// +optional
	RollbackCommand []string `json:"rollbackCommand,omitempty"`
}

// AppCanary is a canary rollout's steps.
//
// +kubebuilder:validation:XValidation:rule=`!has(self.trafficRouting) || (has(self.stableService) && has(self.canaryService))`,message="traffic routing weighs two Services: set stableService and canaryService"
type AppCanary struct {
	// Enabled: false makes type Canary a plain rolling update.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// Steps in order. A step of weight 100, or the end of the list,
	// promotes the new version to every replica.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	Steps []AppCanaryStep `json:"steps"`
	// StableService selects the Deployment's pods (Argo Rollouts'
	// canary.stableService): with traffic routing it is pinned to the
	// stable pods' pod-template-hash during the canary, so the route's
	// stable share reaches the old version alone.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	StableService string `json:"stableService,omitempty"`
	// CanaryService is pointed at the canary's pods during the canary
	// (Argo Rollouts' canary.canaryService).
	// +optional
	// +kubebuilder:validation:MaxLength=63
	CanaryService string `json:"canaryService,omitempty"`
	// TrafficRouting moves each step's weight on a route, the canary
	// Deployment sized to the weight and the stable one left at its
	// replicas. Without it the weight is the canary's share of pods.
	// +optional
	TrafficRouting *AppTrafficRouting `json:"trafficRouting,omitempty"`
	// Analysis is measured in the background of the canary (Argo
	// Rollouts' canary.analysis), from its starting step until the
	// promotion: a metric that fails rolls the canary back; one that is
	// inconclusive holds it until promoted (measured anew) or aborted.
	// +optional
	Analysis *AppAnalysis `json:"analysis,omitempty"`
}

// AppTrafficRouting is where a canary's weights are set.
type AppTrafficRouting struct {
	// GatewayAPI weighs an HTTPRoute's backends.
	GatewayAPI *GatewayAPIRouting `json:"gatewayAPI"`
}

// GatewayAPIRouting names a Gateway API HTTPRoute of the rollout's
// namespace: each of its rules that sends to the stable Service sends
// the step's weight to the canary Service and the rest to the stable one
// (the canary's backend added beside the stable one's where missing).
type GatewayAPIRouting struct {
	// HTTPRoute is the route's name.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	HTTPRoute string `json:"httpRoute"`
}

// AppAnalysis is a canary's background analysis.
type AppAnalysis struct {
	// Metrics measured, each at its own interval (a metric without a
	// count is measured until the promotion).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=5
	Metrics []Metric `json:"metrics"`
	// StartingStep is the index of the canary step the analysis begins
	// at (default 0: with the first).
	// +optional
	// +kubebuilder:validation:Minimum=0
	StartingStep int32 `json:"startingStep,omitempty"`
}

// AppCanaryStep is one weight of a canary and how long to hold it.
//
// +kubebuilder:validation:XValidation:rule=`!has(self.untilPromoted) || !self.untilPromoted || !has(self.pause) || self.pause == 0`,message="a step holds for pause seconds or untilPromoted, not both"
type AppCanaryStep struct {
	// Weight is the share of the replicas, in percent, that run the new
	// version: ceil(replicas × weight / 100) canary pods, at least one,
	// and the stable Deployment scaled down by as many (never below one
	// before promotion).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Weight int32 `json:"weight"`
	// Pause is how long to hold the step, in seconds, once its canary
	// pods are ready (0: move on at once).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=604800
	Pause int32 `json:"pause,omitempty"`
	// UntilPromoted holds the step, once its canary pods are ready, until
	// it is promoted (upshift app promote, the upshift.dev/promote
	// annotation): Argo Rollouts' pause without a duration.
	// +optional
	UntilPromoted bool `json:"untilPromoted,omitempty"`
}

// UpgradeWindow is a maintenance window: a cron schedule of its starts,
// how long it stays open, and the time zone the schedule is read in.
type UpgradeWindow struct {
	// Schedule of the window's starts in cron's five fields ("0 2 * * 6":
	// Saturdays at 02:00), or @daily, @weekly.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule"`
	// Duration the window stays open from each start, such as 4h.
	Duration metav1.Duration `json:"duration"`
	// TimeZone the schedule is read in, an IANA name (default UTC).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	TimeZone string `json:"timeZone,omitempty"`
}
