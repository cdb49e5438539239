package supportbundle

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/kube"
	"github.com/upshift-dev/upshift/internal/redact"
)

// maxPodsLogged bounds the pods whose logs one namespace contributes.
const maxPodsLogged = 50

// collector reads the cluster into a bundle.
type collector struct {
	cs kubernetes.Interface
	w  *writer
	// scrub hides the current namespace's Secret values in text.
	scrub *redact.Scrubber
}

// nodes adds the nodes, cleaned of managed fields.
func (c *collector) nodes(ctx context.Context) {
	list, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		c.w.missing("nodes.yaml", err)
		return
	}
	c.objects("nodes.yaml", "Node", list.Items)
}

// namespace adds a namespace's events, objects and container logs.
func (c *collector) namespace(ctx context.Context, ns string) {
	dir := "namespaces/" + ns + "/"
	c.scrub = c.secretValues(ctx, ns)
	core, apps, batch := c.cs.CoreV1(), c.cs.AppsV1(), c.cs.BatchV1()
	lists := []struct {
		file, kind string
		list       func() (any, error)
	}{
		{"deployments.yaml", "Deployment", func() (any, error) {
			l, err := apps.Deployments(ns).List(ctx, metav1.ListOptions{})
			return items(l, err)
		}},
		{"statefulsets.yaml", "StatefulSet", func() (any, error) {
			l, err := apps.StatefulSets(ns).List(ctx, metav1.ListOptions{})
			return items(l, err)
		}},
		{"daemonsets.yaml", "DaemonSet", func() (any, error) {
			l, err := apps.DaemonSets(ns).List(ctx, metav1.ListOptions{})
			return items(l, err)
		}},
		{"jobs.yaml", "Job", func() (any, error) { l, err := batch.Jobs(ns).List(ctx, metav1.ListOptions{}); return items(l, err) }},
		{"services.yaml", "Service", func() (any, error) { l, err := core.Services(ns).List(ctx, metav1.ListOptions{}); return items(l, err) }},
		{"configmaps.yaml", "ConfigMap", func() (any, error) {
			l, err := core.ConfigMaps(ns).List(ctx, metav1.ListOptions{})
			return items(l, err)
		}},
		{"secrets.yaml", "Secret", func() (any, error) { l, err := core.Secrets(ns).List(ctx, metav1.ListOptions{}); return items(l, err) }},
	}
	for _, l := range lists {
		got, err := l.list()
		if err != nil {
			c.w.missing(dir+l.file, err)
			continue
		}
		c.objects(dir+l.file, l.kind, got)
	}
	c.events(ctx, ns, dir+"events.txt")
	c.pods(ctx, ns, dir)
}

// secretValues is a scrubber of the namespace's Secret values: logs and
// events may print a value a container read from one (secretKeyRef,
// envFrom), which no field of theirs names.
func (c *collector) secretValues(ctx context.Context, ns string) *redact.Scrubber {
	list, err := c.cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var values []string
	for _, s := range list.Items {
		for _, v := range s.Data {
			values = append(values, string(v))
		}
	}
	return redact.NewScrubber(values...)
}

// items is a typed list's items, for objects.
func items(list runtime.Object, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(list)
	if err != nil {
		return nil, err
	}
	return raw["items"], nil
}

// objects writes typed objects as YAML, each through redact.Object,
// without managed fields.
func (c *collector) objects(name, kind string, typed any) {
	raw, err := json.Marshal(typed)
	if err != nil {
		c.w.missing(name, err)
		return
	}
	var list []map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		c.w.missing(name, err)
		return
	}
	out := make([]map[string]any, 0, len(list))
	for _, o := range list {
		u := &unstructured.Unstructured{Object: o}
		u.SetKind(kind)
		out = append(out, clean(u).Object)
	}
	data, err := yaml.Marshal(out)
	if err != nil {
		c.w.missing(name, err)
		return
	}
	// A value read from a Secret may sit in any field (a container's
	// args): the namespace's Secret values are hidden wherever they are.
	c.w.file(name, []byte(c.scrub.Text(string(data))))
}

// lastApplied is kubectl's copy of an object as applied: env values and
// data in plain text, whatever the object's fields hide.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// clean is u as a bundle holds it: without managed fields and kubectl's
// last-applied copy, Secret values and inline env values hidden
// (redact.Object, redact.EnvValues), and a ConfigMap's values replaced
// by their sizes (ConfigMaps hold credentials too: a plan's configMap
// sources, Helm valuesFrom): its keys stay.
func clean(u *unstructured.Unstructured) *unstructured.Unstructured {
	u.SetManagedFields(nil)
	if a := u.GetAnnotations(); a != nil {
		delete(a, lastApplied)
		u.SetAnnotations(a)
	}
	out := redact.EnvValues(redact.Object(u))
	if out.GetKind() == "ConfigMap" {
		for _, field := range []string{"data", "binaryData"} {
			if m, ok := out.Object[field].(map[string]any); ok {
				for k, v := range m {
					str, _ := v.(string)
					m[k] = fmt.Sprintf("<%d bytes, not collected>", len(str))
				}
			}
		}
	}
	return out
}

// events writes a namespace's events, oldest first, one line each.
func (c *collector) events(ctx context.Context, ns, name string) {
	list, err := c.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		c.w.missing(name, err)
		return
	}
	evs := list.Items
	sort.SliceStable(evs, func(i, j int) bool { return eventTime(evs[i]).Time.Before(eventTime(evs[j]).Time) })
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%s %s %s %s/%s: %s\n", eventTime(e).UTC().Format("2006-01-02T15:04:05Z"), e.Type, e.Reason,
			strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, e.Message)
	}
	c.w.file(name, []byte(c.scrub.Text(b.String())))
}

func eventTime(e corev1.Event) metav1.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp
	case !e.EventTime.IsZero():
		return metav1.NewTime(e.EventTime.Time)
	}
	return e.CreationTimestamp
}

// pods writes the pods and the last lines each container logged.
func (c *collector) pods(ctx context.Context, ns, dir string) {
	list, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		c.w.missing(dir+"pods.yaml", err)
		return
	}
	got, _ := items(list, nil)
	c.objects(dir+"pods.yaml", "Pod", got)
	for i := range list.Items {
		if i == maxPodsLogged {
			c.w.missing(dir+"logs/", fmt.Errorf("only the first %d pods' logs", maxPodsLogged))
			break
		}
		p := &list.Items[i]
		for _, ct := range p.Spec.Containers {
			name := path.Join(dir, "logs", p.Name, ct.Name+".log")
			lines, err := kube.ContainerLogTail(ctx, c.cs, p, ct.Name, false)
			if err != nil {
				c.w.missing(name, err)
				continue
			}
			c.w.file(name, []byte(c.scrub.Text(strings.Join(lines, "\n")+"\n")))
		}
	}
}

// planNamespaces are the namespaces a plan names: every "namespace"
// field, and every entry of a "namespaces" list, wherever in the plan.
func planNamespaces(spec v1alpha1.UpgradePlanSpec) []string {
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				switch s := child.(type) {
				case string:
					if k == "namespace" {
						out = append(out, s)
					}
				case []any:
					if k == "namespaces" {
						for _, e := range s {
							if ns, ok := e.(string); ok {
								out = append(out, ns)
							}
						}
					}
				}
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	walk(v)
	return out
}
