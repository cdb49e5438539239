package catalog

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/helmx"
)

// Detect reads every version source from the cluster, in order. It does
// not judge them: Agree does.
func Detect(ctx context.Context, cs *clients.Set, sources []VersionSource) []Finding {
	out := make([]Finding, len(sources))
	for i, src := range sources {
		f := Finding{Source: DescribeSource(src), Optional: src.Optional}
		value, err := readSource(ctx, cs, src)
		switch {
		case errors.Is(err, errMissing) || apierrors.IsNotFound(err) || errors.Is(err, helmx.ErrReleaseNotFound):
			f.Missing = true
		case err != nil:
			f.Err = err
		default:
			f.Value = value
		}
		out[i] = f
	}
	return out
}

// errMissing: the object exists, the key, container or tag does not.
var errMissing = errors.New("missing")

// DescribeSource names a version source in messages.
func DescribeSource(src VersionSource) string {
	switch {
	case src.ConfigMap != nil:
		c := src.ConfigMap
		return fmt.Sprintf("configMap %s/%s key %s", c.Namespace, c.Name, c.Key)
	case src.Image != nil:
		im := src.Image
		d := fmt.Sprintf("image of %s %s/%s", im.Kind, im.Namespace, im.Name)
		if im.Container != "" {
			d += " container " + im.Container
		}
		return d
	case src.Helm != nil:
		return fmt.Sprintf("Helm release %s/%s %s", src.Helm.Namespace, src.Helm.Release, helmField(src.Helm))
	case src.Label != nil:
		l := src.Label
		where := l.Name
		if l.Namespace != "" {
			where = l.Namespace + "/" + l.Name
		}
		return fmt.Sprintf("label %s of %s %s", l.Key, l.Kind, where)
	case src.Installation != nil:
		return "spec.config.version of the newest Installed embedded-cluster Installation"
	}
	return "?"
}

func helmField(h *HelmVersion) string {
	if h.Field == "" {
		return HelmChartVersion
	}
	return h.Field
}

func readSource(ctx context.Context, cs *clients.Set, src VersionSource) (string, error) {
	switch {
	case src.ConfigMap != nil:
		c := src.ConfigMap
		cm, err := cs.Clientset.CoreV1().ConfigMaps(c.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		v, ok := cm.Data[c.Key]
		if !ok {
			return "", errMissing
		}
		return v, nil
	case src.Image != nil:
		return imageTag(ctx, cs, src.Image)
	case src.Helm != nil:
		info, err := cs.Helm.Status(ctx, src.Helm.Release, src.Helm.Namespace)
		if err != nil {
			return "", err
		}
		if helmField(src.Helm) == HelmAppVersion {
			return info.AppVersion, nil
		}
		return info.ChartVersion, nil
	case src.Label != nil:
		l := src.Label
		gv, err := schema.ParseGroupVersion(l.APIVersion)
		if err != nil {
			return "", err
		}
		m, err := cs.Mapper.RESTMapping(gv.WithKind(l.Kind).GroupKind(), gv.Version)
		if err != nil {
			return "", err
		}
		ri := cs.Dynamic.Resource(m.Resource)
		get := ri.Get
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			get = ri.Namespace(l.Namespace).Get
		}
		u, err := get(ctx, l.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		v, ok := u.GetLabels()[l.Key]
		if !ok {
			return "", errMissing
		}
		return v, nil
	case src.Installation != nil:
		return installedVersion(ctx, cs)
	}
	return "", errors.New("no source set")
}

// installations are embedded-cluster's Installation resources.
var installations = schema.GroupVersionResource{Group: "embeddedcluster.replicated.com", Version: "v1beta1", Resource: "installations"}

// installedVersion is spec.config.version of the newest Installed
// Installation.
func installedVersion(ctx context.Context, cs *clients.Set) (string, error) {
	in, err := newestInstalled(ctx, cs)
	if err != nil {
		return "", err
	}
	v, _, _ := unstructured.NestedString(in.Object, "spec", "config", "version")
	if v == "" {
		return "", errMissing
	}
	return v, nil
}

// newestInstalled is the newest Installed Installation that names its
// version (embedded-cluster's names are their creation times); errMissing
// when there is none.
func newestInstalled(ctx context.Context, cs *clients.Set) (*unstructured.Unstructured, error) {
	list, err := cs.Dynamic.Resource(installations).List(ctx, metav1.ListOptions{})
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
		return nil, errMissing // the CRD is not installed
	}
	if err != nil {
		return nil, fmt.Errorf("list embedded-cluster Installations: %w", err)
	}
	var newest *unstructured.Unstructured
	for i, in := range list.Items {
		state, _, _ := unstructured.NestedString(in.Object, "status", "state")
		v, _, _ := unstructured.NestedString(in.Object, "spec", "config", "version")
		if state == "Installed" && v != "" && (newest == nil || in.GetName() > newest.GetName()) {
			newest = &list.Items[i]
		}
	}
	if newest == nil {
		return nil, errMissing
	}
	return newest, nil
}

func imageTag(ctx context.Context, cs *clients.Set, im *ImageVersion) (string, error) {
	apps := cs.Clientset.AppsV1()
	var containers []struct{ name, image string }
	add := func(name, image string) { containers = append(containers, struct{ name, image string }{name, image}) }
	switch im.Kind {
	case "Deployment":
		d, err := apps.Deployments(im.Namespace).Get(ctx, im.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			add(c.Name, c.Image)
		}
	case "StatefulSet":
		s, err := apps.StatefulSets(im.Namespace).Get(ctx, im.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		for _, c := range s.Spec.Template.Spec.Containers {
			add(c.Name, c.Image)
		}
	case "DaemonSet":
		d, err := apps.DaemonSets(im.Namespace).Get(ctx, im.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			add(c.Name, c.Image)
		}
	default:
		return "", fmt.Errorf("kind %s: use Deployment, StatefulSet or DaemonSet", im.Kind)
	}
	for _, c := range containers {
		if im.Container == "" && len(containers) > 1 {
			return "", fmt.Errorf("%d containers: name the one whose tag is the version (image.container)", len(containers))
		}
		if im.Container != "" && c.name != im.Container {
			continue
		}
		tag, ok := ImageTag(c.image)
		if !ok {
			return "", fmt.Errorf("image %s has no tag to read a version from", c.image)
		}
		return tag, nil
	}
	return "", errMissing
}
