package apps

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// setPreview pins the active Service to the stable pods first, then
// points the preview Service at the preview's pods, then makes the
// preview: its pods never land in the active Service before the switch.
func setPreview(ctx context.Context, t tenant, o Observed, d *Decision) error {
	bg := d.Status.BlueGreen
	if err := setSelector(ctx, t, o.ActiveService, pinnedSelector(bg, o.StableHash)); err != nil {
		return err
	}
	if err := setSelector(ctx, t, o.PreviewService, previewSelector(bg)); err != nil {
		return err
	}
	want := trackDeployment(o.App, d.Status.Attempt, o.Deployment, d.Image, d.Status.Replicas, previewName(o.App), trackPreview)
	return putTrack(ctx, t, o.Preview, want)
}

// setSelector sets a Service's selector (nil Service: nothing to do).
func setSelector(ctx context.Context, t tenant, svc *corev1.Service, sel map[string]string) error {
	if svc == nil || maps.Equal(svc.Spec.Selector, sel) {
		return nil
	}
	s := svc.DeepCopy()
	s.Spec.Selector = sel
	if _, err := t.kube.CoreV1().Services(s.Namespace).Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("set the selector of service %s: %w", s.Name, err)
	}
	return nil
}

// switchBack points the Services back at the Deployment's pods, which
// run the new version now, and deletes the preview.
func switchBack(ctx context.Context, t tenant, o Observed, st *v1alpha1.AppRolloutStatus) error {
	if err := setSelector(ctx, t, o.ActiveService, st.BlueGreen.ActiveSelector); err != nil {
		return err
	}
	if err := setSelector(ctx, t, o.PreviewService, st.BlueGreen.PreviewSelector); err != nil {
		return err
	}
	return deleteTrack(ctx, t.kube.AppsV1().Deployments(o.App.Namespace), o.Preview)
}
