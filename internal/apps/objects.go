package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

const trackCanary = "canary"

// ownedBy makes the rollout the controller owner of what it creates, so
// deleting the rollout deletes its canary and Jobs with it.
// blockOwnerDeletion is left unset: setting it needs rights on the
// rollout's finalizers that a tenant's ServiceAccount has no reason to
// hold.
func ownedBy(app *v1alpha1.AppRollout) []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.AppRolloutKind,
		Name: app.Name, UID: app.UID, Controller: ptr.To(true),
	}}
}

// withNewVersion sets the new image, and the health check as readiness
// probe, on the first container of a pod template.
func withNewVersion(t *corev1.PodTemplateSpec, image string, probe *corev1.Probe) {
	if len(t.Spec.Containers) == 0 {
		return
	}
	c := &t.Spec.Containers[0]
	c.Image = image
	if probe != nil {
		c.ReadinessProbe = probe.DeepCopy()
	}
}

// canaryDeployment is the canary of stable at replicas: stable's pod
// template with the new version, its pods labelled as the canary track
// (its selector too), so a Service that selects the stable pods sends the
// canary its share.
func canaryDeployment(app *v1alpha1.AppRollout, attempt int32, stable *appsv1.Deployment, image string, replicas int32) *appsv1.Deployment {
	return trackDeployment(app, attempt, stable, image, replicas, canaryName(app), trackCanary)
}

// trackDeployment is a Deployment name of the new version beside stable,
// at replicas, its pods (and selector) labelled with the track.
func trackDeployment(app *v1alpha1.AppRollout, attempt int32, stable *appsv1.Deployment, image string, replicas int32, name, track string) *appsv1.Deployment {
	sel := stable.Spec.Selector.DeepCopy()
	if sel == nil {
		sel = &metav1.LabelSelector{}
	}
	if sel.MatchLabels == nil {
		sel.MatchLabels = map[string]string{}
	}
	sel.MatchLabels[LabelTrack] = track
	tmpl := *stable.Spec.Template.DeepCopy()
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	for k, v := range sel.MatchLabels {
		tmpl.Labels[k] = v
	}
	withNewVersion(&tmpl, image, app.Spec.UpgradeStrategy.HealthCheck)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: app.Namespace,
			Labels:          map[string]string{LabelRollout: app.Name, LabelTrack: track},
			Annotations:     map[string]string{AnnotationAttempt: attemptMark(app, attempt)},
			OwnerReferences: ownedBy(app),
		},
		Spec: appsv1.DeploymentSpec{
			Replicas:                ptr.To(replicas),
			Selector:                sel,
			Template:                tmpl,
			Strategy:                stable.Spec.Strategy,
			MinReadySeconds:         stable.Spec.MinReadySeconds,
			ProgressDeadlineSeconds: stable.Spec.ProgressDeadlineSeconds,
		},
	}
}

// migrationJob is the Job that runs the migration's command (the
// down-migration's with down). Its backoffLimit is 0: a migration that
// failed may have done half its work, and running it again on its own is
// not for Upshift to decide; the rollback's down-migration and a retry
// are.
func migrationJob(app *v1alpha1.AppRollout, attempt int32, name string, down bool) *batchv1.Job {
	m := app.Spec.UpgradeStrategy.MigrationJob
	kind, command := "migration", m.Command
	if down {
		kind, command = "down-migration", m.RollbackCommand
	}
	labels := map[string]string{"app": app.Name, "type": kind, LabelRollout: app.Name}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: app.Namespace, Labels: labels,
			Annotations:     map[string]string{AnnotationAttempt: attemptMark(app, attempt)},
			OwnerReferences: ownedBy(app),
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app.Name, "type": kind}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: kind, Image: m.Image, Command: command, Env: m.Env,
					}},
				},
			},
		},
	}
}
