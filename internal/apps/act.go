package apps

import (
	"context"
	"errors"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/backup"
	"github.com/upshift-dev/upshift/internal/step"
)

// tenant is what a rollout acts with: its ServiceAccount's clients.
type tenant struct {
	kube    kubernetes.Interface
	dyn     dynamic.Interface // HTTPRoutes
	backups *backup.Client    // in the rollout's namespace
}

// maxDifferences bounds status.rollback.differences (its CRD's MaxItems).
const maxDifferences = 20

// act does the decision's action for o.App, completing d.Status with
// what the action learned (the backup's ref, how the restore went). An
// error leaves d.Status unsaved: the next reconcile decides again.
func act(ctx context.Context, t tenant, o Observed, d *Decision) error {
	app, st := o.App, &d.Status
	switch d.Action {
	case None:
		return nil
	case Capture:
		return capture(ctx, t, app, st)
	case CreateMigration:
		return createJob(ctx, t, migrationJob(app, st.Attempt, st.MigrationJob, false))
	case CreateDownMigration:
		return createJob(ctx, t, migrationJob(app, st.Attempt, st.Rollback.DownMigrationJob, true))
	case SetCanary:
		return setCanary(ctx, t, o, d)
	case Deploy:
		return deploy(ctx, t, o, d)
	case Restore:
		return restore(ctx, t, st)
	case SetPreview:
		return setPreview(ctx, t, o, d)
	case SwitchActive:
		return setSelector(ctx, t, o.ActiveService, previewSelector(st.BlueGreen))
	case SwitchBack:
		return switchBack(ctx, t, o, st)
	case SetWeights:
		return setWeights(ctx, t, o, d.Weight)
	case RouteBack:
		return routeBack(ctx, t, o, st)
	}
	return fmt.Errorf("unknown action %d", d.Action)
}

// refs are what a rollout changes: the Deployment, and the canary it may
// create (absent at the capture: a rollback deletes it).
func refs(app *v1alpha1.AppRollout) []step.Ref {
	deployment := func(name string) step.Ref {
		return step.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: app.Namespace, Name: name}
	}
	out := []step.Ref{deployment(deploymentName(app)), deployment(canaryName(app))}
	if r := routing(app); r != nil {
		c := app.Spec.UpgradeStrategy.Canary
		out = append(out, step.Ref{APIVersion: "v1", Kind: "Service", Namespace: app.Namespace, Name: c.StableService},
			step.Ref{APIVersion: "v1", Kind: "Service", Namespace: app.Namespace, Name: c.CanaryService},
			step.Ref{APIVersion: gatewayv1.SchemeGroupVersion.String(), Kind: "HTTPRoute", Namespace: app.Namespace, Name: r.HTTPRoute})
	}
	if bg := blueGreen(app); bg != nil {
		out = append(out, deployment(previewName(app)), step.Ref{APIVersion: "v1", Kind: "Service", Namespace: app.Namespace, Name: bg.ActiveService})
		if bg.PreviewService != "" {
			out = append(out, step.Ref{APIVersion: "v1", Kind: "Service", Namespace: app.Namespace, Name: bg.PreviewService})
		}
	}
	return out
}

// backupKey names an attempt's backup among the namespace's others.
func backupKey(app *v1alpha1.AppRollout, attempt int32) backup.Key {
	return backup.Key{Run: "approllout." + app.Name, Stage: "deployment", Attempt: int(attempt)}
}

func capture(ctx context.Context, t tenant, app *v1alpha1.AppRollout, st *v1alpha1.AppRolloutStatus) error {
	snap, err := t.backups.Take(ctx, refs(app), backup.Fresh)
	if err != nil {
		return fmt.Errorf("back up deployment %s: %w", deploymentName(app), err)
	}
	snap.RunUID = string(app.UID)
	ref, err := t.backups.Save(ctx, backupKey(app, st.Attempt), snap)
	if err != nil {
		return err
	}
	st.Backup = &ref
	return nil
}

// createJob creates a Job; one of its name already there is this
// attempt's only when it carries the attempt's mark (Decide refuses
// others before asking).
func createJob(ctx context.Context, t tenant, j *batchv1.Job) error {
	_, err := t.kube.BatchV1().Jobs(j.Namespace).Create(ctx, j, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		got, gerr := t.kube.BatchV1().Jobs(j.Namespace).Get(ctx, j.Name, metav1.GetOptions{})
		if gerr == nil && got.Annotations[AnnotationAttempt] == j.Annotations[AnnotationAttempt] {
			return nil // created before a crash that kept the status from saying so
		}
		return fmt.Errorf("job %s exists and this attempt did not create it", j.Name)
	}
	if err != nil {
		return fmt.Errorf("create job %s: %w", j.Name, err)
	}
	return nil
}

// putTrack creates the track Deployment want, or updates the one there
// (its selector stays as created).
func putTrack(ctx context.Context, t tenant, have, want *appsv1.Deployment) error {
	api := t.kube.AppsV1().Deployments(want.Namespace)
	if have == nil {
		if _, err := api.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create deployment %s: %w", want.Name, err)
		}
		return nil
	}
	c := have.DeepCopy()
	c.Annotations, c.Labels, c.OwnerReferences = want.Annotations, want.Labels, want.OwnerReferences
	c.Spec.Replicas = want.Spec.Replicas
	want.Spec.Template.Labels = mergeLabels(want.Spec.Template.Labels, c.Spec.Selector)
	c.Spec.Template = want.Spec.Template
	if _, err := api.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update deployment %s: %w", c.Name, err)
	}
	return nil
}

// setCanary sizes the canary first, then the stable Deployment, so the
// pods of the new version come before those of the old one go.
func setCanary(ctx context.Context, t tenant, o Observed, d *Decision) error {
	app, api := o.App, t.kube.AppsV1().Deployments(o.App.Namespace)
	if err := routeServices(ctx, t, o, &d.Status); err != nil {
		return err
	}
	if err := putTrack(ctx, t, o.Canary, canaryDeployment(app, d.Status.Attempt, o.Deployment, d.Image, d.CanaryReplicas)); err != nil {
		return err
	}
	if replicasOf(o.Deployment) == d.StableReplicas {
		return nil
	}
	s := o.Deployment.DeepCopy()
	s.Spec.Replicas = ptr.To(d.StableReplicas)
	if _, err := api.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("scale deployment %s to %d: %w", s.Name, d.StableReplicas, err)
	}
	return nil
}

// mergeLabels adds a selector's labels to a template's, so the template
// still matches a selector made by an earlier attempt.
func mergeLabels(l map[string]string, sel *metav1.LabelSelector) map[string]string {
	if sel == nil {
		return l
	}
	for k, v := range sel.MatchLabels {
		l[k] = v
	}
	return l
}

// deploy puts the new version on the stable Deployment at the replicas
// it had, then deletes the canary.
func deploy(ctx context.Context, t tenant, o Observed, d *Decision) error {
	if o.Deployment == nil {
		return errors.New("deployment " + deploymentName(o.App) + " not found")
	}
	api := t.kube.AppsV1().Deployments(o.App.Namespace)
	s := o.Deployment.DeepCopy()
	withNewVersion(&s.Spec.Template, d.Image, o.App.Spec.UpgradeStrategy.HealthCheck)
	if canaryEnabled(o.App) || o.Canary != nil { // scaled down for a canary; a rolling update leaves replicas to their owner (an HPA)
		s.Spec.Replicas = ptr.To(d.Status.Replicas)
	}
	if routing(o.App) != nil && d.Status.Traffic != nil {
		// The stable Service lets go of the old pods' hash first: it
		// serves the Deployment's new pods as they come, and the route's
		// stable share is never without endpoints.
		if err := setSelector(ctx, t, o.StableService, d.Status.Traffic.StableSelector); err != nil {
			return err
		}
	}
	if _, err := api.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update deployment %s to %s: %w", s.Name, d.Image, err)
	}
	if routing(o.App) != nil && d.Status.Traffic != nil {
		return nil // the route still sends the canary its share: RouteBack deletes it
	}
	return deleteTrack(ctx, api, o.Canary)
}

// deleteTrack deletes a canary or preview Deployment, the one observed.
func deleteTrack(ctx context.Context, api interface {
	Delete(context.Context, string, metav1.DeleteOptions) error
}, c *appsv1.Deployment) error {
	if c == nil {
		return nil
	}
	err := api.Delete(ctx, c.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &c.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete deployment %s: %w", c.Name, err)
	}
	return nil
}

// restore puts the captured Deployment back and verifies it; what did
// not come back is a difference the rollback reports, not an error to
// try again.
func restore(ctx context.Context, t tenant, st *v1alpha1.AppRolloutStatus) error {
	rb := st.Rollback
	snap, err := t.backups.Load(ctx, *st.Backup)
	if errors.Is(err, backup.ErrCorrupt) {
		rb.Restored, rb.Differences = true, []string{err.Error()}
		return nil
	}
	if err != nil {
		return err
	}
	res, err := t.backups.Restore(ctx, snap, backup.RestoreOptions{})
	if err != nil {
		return err
	}
	rb.Restored = true
	rb.Differences = res.Differences
	if len(rb.Differences) > maxDifferences {
		rb.Differences = append(rb.Differences[:maxDifferences-1], fmt.Sprintf("and %d more", len(res.Differences)-maxDifferences+1))
	}
	return nil
}
