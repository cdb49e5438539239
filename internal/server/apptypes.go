package server

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/apps"
	"github.com/upshift-dev/upshift/internal/redact"
)

// The AppRollout bodies of the API (Upshift's own): what the web UI's
// rollout pages show, projected from the resource as `upshift app get`
// prints it (apps.Steps, apps.Requests), every message redacted. The
// spec's migration env and provider addresses are left out: a person
// steering a rollout needs neither, and either may hold a secret.

// AppSummary is a rollout in the list.
type AppSummary struct {
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	Deployment string `json:"deployment"`
	Strategy   string `json:"strategy"`
	// Phase is status.phase ("" before the controller saw it); Display
	// adds "(paused)" or the Stalled reason, as the CLI shows it.
	Phase          string `json:"phase"`
	Display        string `json:"display"`
	CurrentVersion string `json:"currentVersion,omitempty"`
	TargetVersion  string `json:"targetVersion"`
	// Step is "2/3 50%" while a canary moves.
	Step    string `json:"step,omitempty"`
	Message string `json:"message,omitempty"`
	// NextWindow is when the next window opens, while one is awaited.
	NextWindow *time.Time `json:"nextWindow,omitempty"`
	Paused     bool       `json:"paused"`
	CreatedAt  time.Time  `json:"createdAt"`
}

// AppList is the rollouts, by namespace and name.
type AppList struct {
	Items []AppSummary `json:"items"`
}

// AppDetail is one rollout: where it stands, its steps, analysis,
// rollback and conditions, and the requests that apply now.
type AppDetail struct {
	AppSummary
	Attempt     int32       `json:"attempt"`
	StableImage string      `json:"stableImage,omitempty"`
	Replicas    int32       `json:"replicas,omitempty"`
	Steps       []apps.Step `json:"steps"`
	// CanaryWeight is the weight of the step the canary is at.
	CanaryWeight int32          `json:"canaryWeight"`
	BlueGreen    *AppBlueGreen  `json:"blueGreen,omitempty"`
	MigrationJob string         `json:"migrationJob,omitempty"`
	Analysis     *AppAnalysis   `json:"analysis,omitempty"`
	Rollback     *AppRollback   `json:"rollback,omitempty"`
	Windows      []string       `json:"windows,omitempty"`
	Conditions   []AppCondition `json:"conditions"`
	// Requests are what POST /api/apps/{namespace}/{name}/{request} may
	// ask now (apps.Requests).
	Requests []apps.Request `json:"requests"`
}

// AppBlueGreen is a blue-green rollout's Services and switch.
type AppBlueGreen struct {
	ActiveService  string     `json:"activeService"`
	PreviewService string     `json:"previewService,omitempty"`
	PreviewReadyAt *time.Time `json:"previewReadyAt,omitempty"`
	SwitchedAt     *time.Time `json:"switchedAt,omitempty"`
}

// AppAnalysis is the analysis running or last run, each metric with its
// spec's conditions beside its measurements (the chart's thresholds).
type AppAnalysis struct {
	Kind      string      `json:"kind"`
	Phase     string      `json:"phase"`
	StartedAt time.Time   `json:"startedAt"`
	Metrics   []AppMetric `json:"metrics"`
}

// AppMetric is one metric's results.
type AppMetric struct {
	Name             string           `json:"name"`
	Phase            string           `json:"phase"`
	SuccessCondition string           `json:"successCondition,omitempty"`
	FailureCondition string           `json:"failureCondition,omitempty"`
	Count            int32            `json:"count"`
	Failed           int32            `json:"failed"`
	Inconclusive     int32            `json:"inconclusive"`
	Error            int32            `json:"error"`
	Message          string           `json:"message,omitempty"`
	Measurements     []AppMeasurement `json:"measurements"`
}

// AppMeasurement is one measurement, newest last.
type AppMeasurement struct {
	Phase   string    `json:"phase"`
	Value   string    `json:"value,omitempty"`
	Message string    `json:"message,omitempty"`
	TakenAt time.Time `json:"takenAt"`
}

// AppRollback is how a failed rollout was undone.
type AppRollback struct {
	Reason           string   `json:"reason"`
	Restored         bool     `json:"restored"`
	Differences      []string `json:"differences"`
	DownMigrationJob string   `json:"downMigrationJob,omitempty"`
	Group            bool     `json:"group"`
	Done             bool     `json:"done"`
}

// AppCondition is a status condition.
type AppCondition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	Reason             string    `json:"reason"`
	Message            string    `json:"message,omitempty"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
}

func appSummary(a *v1alpha1.AppRollout) AppSummary {
	s := AppSummary{Namespace: a.Namespace, Name: a.Name, Deployment: a.Spec.DeploymentName, Strategy: a.Spec.UpgradeStrategy.Type,
		Phase: string(a.Status.Phase), Display: apps.Display(a), CurrentVersion: a.Status.CurrentVersion,
		TargetVersion: a.Status.TargetVersion, Step: apps.StepOf(a), Message: redact.Text(a.Status.Message),
		NextWindow: timeOf(a.Status.NextWindow), Paused: a.Spec.Paused, CreatedAt: a.CreationTimestamp.UTC()}
	if s.Deployment == "" {
		s.Deployment = a.Name
	}
	if s.TargetVersion == "" {
		s.TargetVersion = a.Spec.Version
	}
	return s
}

func appDetail(a *v1alpha1.AppRollout, now time.Time) AppDetail {
	st := a.Status
	d := AppDetail{AppSummary: appSummary(a), Attempt: st.Attempt, StableImage: st.StableImage, Replicas: st.Replicas,
		Steps: apps.Steps(a, now), CanaryWeight: st.CanaryWeight, MigrationJob: st.MigrationJob,
		Analysis: appAnalysis(a), Conditions: []AppCondition{}, Requests: apps.Requests(a)}
	if d.Steps == nil {
		d.Steps = []apps.Step{}
	}
	if bg := a.Spec.UpgradeStrategy.BlueGreen; bg != nil && a.Spec.UpgradeStrategy.Type == v1alpha1.StrategyBlueGreen {
		d.BlueGreen = &AppBlueGreen{ActiveService: bg.ActiveService, PreviewService: bg.PreviewService}
		if st.BlueGreen != nil {
			d.BlueGreen.PreviewReadyAt, d.BlueGreen.SwitchedAt = timeOf(st.BlueGreen.PreviewReadyAt), timeOf(st.BlueGreen.SwitchedAt)
		}
	}
	if rb := st.Rollback; rb != nil {
		d.Rollback = &AppRollback{Reason: redact.Text(rb.Reason), Restored: rb.Restored, Differences: redactAll(rb.Differences),
			DownMigrationJob: rb.DownMigrationJob, Group: rb.Group, Done: rb.Done}
	}
	for _, w := range a.Spec.Windows {
		d.Windows = append(d.Windows, windowText(w))
	}
	for _, c := range st.Conditions {
		d.Conditions = append(d.Conditions, AppCondition{Type: c.Type, Status: string(c.Status), Reason: c.Reason,
			Message: redact.Text(c.Message), LastTransitionTime: c.LastTransitionTime.UTC()})
	}
	return d
}

// appAnalysis is the analysis in status, with each metric's conditions
// from the spec of its kind.
func appAnalysis(a *v1alpha1.AppRollout) *AppAnalysis {
	an := a.Status.Analysis
	if an == nil {
		return nil
	}
	spec := map[string]v1alpha1.Metric{}
	for _, m := range analysisSpec(a, an.Kind) {
		spec[m.Name] = m
	}
	out := &AppAnalysis{Kind: an.Kind, Phase: string(an.Phase), StartedAt: an.StartedAt.UTC(), Metrics: []AppMetric{}}
	for _, m := range an.Metrics {
		am := AppMetric{Name: m.Name, Phase: string(m.Phase), SuccessCondition: spec[m.Name].SuccessCondition,
			FailureCondition: spec[m.Name].FailureCondition, Count: m.Count, Failed: m.Failed, Inconclusive: m.Inconclusive,
			Error: m.Error, Message: redact.Text(m.Message), Measurements: []AppMeasurement{}}
		for _, ms := range m.Measurements {
			am.Measurements = append(am.Measurements, AppMeasurement{Phase: string(ms.Phase), Value: redact.Text(ms.Value),
				Message: redact.Text(ms.Message), TakenAt: ms.TakenAt.UTC()})
		}
		out.Metrics = append(out.Metrics, am)
	}
	return out
}

// analysisSpec is the spec's metrics of an analysis kind.
func analysisSpec(a *v1alpha1.AppRollout, kind string) []v1alpha1.Metric {
	s := a.Spec.UpgradeStrategy
	var an *v1alpha1.AppAnalysis
	switch {
	case kind == v1alpha1.AnalysisCanary && s.Canary != nil:
		an = s.Canary.Analysis
	case kind == v1alpha1.AnalysisPrePromotion && s.BlueGreen != nil:
		an = s.BlueGreen.PrePromotionAnalysis
	case kind == v1alpha1.AnalysisPostPromotion && s.BlueGreen != nil:
		an = s.BlueGreen.PostPromotionAnalysis
	}
	if an == nil {
		return nil
	}
	return an.Metrics
}

// windowText is a window as written: "0 2 * * * for 2h (Europe/Paris)".
func windowText(w v1alpha1.UpgradeWindow) string {
	s := w.Schedule + " for " + w.Duration.Duration.String()
	if w.TimeZone != "" {
		s += " (" + w.TimeZone + ")"
	}
	return s
}

func timeOf(t *metav1.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func redactAll(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = redact.Text(s)
	}
	return out
}
