// Package demo drives `upshift demo`: it puts a sample platform on a local
// cluster and upgrades it where the user can watch. For now the sample is a
// single Deployment rolled from 1.0.0 to 1.1.0 and a broken 1.2.0 that is
// caught early; the staged engine will take this over.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/kube"
)

// Namespace holds the sample workload.
const Namespace = "upshift-demo"

const (
	deployName = "sample-web"
	image      = "example.com/sample/web"
)

// RunSample installs sample-web 1.0.0, rolls it to 1.1.0, then tries
// 1.2.0-broken, which must be reported failing with the crashing pod named,
// and rolls it back to 1.1.0. Each step prints a timestamped line.
func RunSample(ctx context.Context, cfg *rest.Config, out io.Writer) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	waiter, err := kube.NewWaiterForConfig(cfg)
	if err != nil {
		return err
	}
	say := func(format string, args ...any) {
		fmt.Fprintf(out, "%s  %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", Namespace, err)
	}
	ref := kube.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: Namespace, Name: deployName}

	rollTo := func(version string) (kube.Health, time.Duration, error) {
		start := time.Now()
		if err := setImage(ctx, cs, image+":"+version); err != nil {
			return kube.Health{}, 0, err
		}
		say("%s: image set to %s:%s, waiting for the rollout", ref, image, version)
		h, err := waiter.WaitCurrent(ctx, ref, 60*time.Second)
		return h, time.Since(start), err
	}

	for _, v := range []string{"1.0.0", "1.1.0"} {
		h, took, err := rollTo(v)
		if err != nil {
			return fmt.Errorf("roll out %s: %w", v, err)
		}
		say("%s at %s: %s (%s)", ref, v, h.Status, took.Round(time.Millisecond))
	}
	h, took, err := rollTo("1.2.0-broken")
	if !errors.Is(err, kube.ErrFailing) {
		return fmt.Errorf("the broken 1.2.0 was not reported failing (health %s, err %v)", h, err)
	}
	say("1.2.0 failing after %s: %s", took.Round(time.Millisecond), h.Message)
	h, took, err = rollTo("1.1.0")
	if err != nil {
		return fmt.Errorf("roll back to 1.1.0: %w", err)
	}
	say("%s back at 1.1.0: %s (%s)", ref, h.Status, took.Round(time.Millisecond))
	return nil
}

// setImage creates the Deployment or changes its image.
func setImage(ctx context.Context, cs kubernetes.Interface, img string) error {
	d, err := cs.AppsV1().Deployments(Namespace).Get(ctx, deployName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = cs.AppsV1().Deployments(Namespace).Create(ctx, sampleDeployment(img), metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	d.Spec.Template.Spec.Containers[0].Image = img
	_, err = cs.AppsV1().Deployments(Namespace).Update(ctx, d, metav1.UpdateOptions{})
	return err
}

func sampleDeployment(img string) *appsv1.Deployment {
	labels := map[string]string{"app": deployName}
	replicas := int32(3)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: deployName, Namespace: Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: img,
					Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}},
				}}},
			},
		},
	}
}
