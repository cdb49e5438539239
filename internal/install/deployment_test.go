package install_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upshift-dev/upshift/internal/install"
)

var wantArgs = []string{"controller", "--enable-leader-election", "--metrics-addr=:8443", "--health-probe-addr=:8081"}

// The chart and config/default run the same controller: image, arguments,
// probes, namespace from the downward API, resources, and a locked-down
// security context.
func TestDeployment(t *testing.T) {
	for what, objs := range map[string][]*unstructured.Unstructured{
		"chart":          renderChart(t, nil),
		"config/default": buildKustomize(t, defaultDir),
	} {
		t.Run(what, func(t *testing.T) {
			d := deployment(t, objs)
			checkController(t, objs, d, "ghcr.io/upshift-dev/upshift:0.1.0")
		})
	}
}

func checkController(t *testing.T, objs []*unstructured.Unstructured, d *appsv1.Deployment, image string) {
	t.Helper()
	spec := d.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(spec.Containers))
	}
	c := spec.Containers[0]
	if c.Image != image {
		t.Errorf("image %q, want %q", c.Image, image)
	}
	if d := cmp.Diff(wantArgs, c.Args); d != "" {
		t.Errorf("args (-want +got):\n%s", d)
	}
	if len(c.Command) != 0 {
		t.Errorf("command %q: the image's entrypoint (/upshift) must run", c.Command)
	}
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "POD_NAMESPACE" })
	if i < 0 || c.Env[i].ValueFrom == nil || c.Env[i].ValueFrom.FieldRef == nil || c.Env[i].ValueFrom.FieldRef.FieldPath != "metadata.namespace" {
		t.Errorf("env %+v: want POD_NAMESPACE from the downward API (fieldRef metadata.namespace)", c.Env)
	}
	probe := func(name string, p *corev1.Probe, path string) {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path || p.HTTPGet.Port.IntValue() != 8081 {
			t.Errorf("%s probe %+v, want GET %s on port 8081", name, p, path)
		}
	}
	probe("liveness", c.LivenessProbe, "/healthz")
	probe("readiness", c.ReadinessProbe, "/readyz")
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("resources %+v: want CPU and memory requests and a memory limit", c.Resources)
	}
	sc, psc := c.SecurityContext, spec.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("the container has no securityContext")
	case !ptrTrue(sc.RunAsNonRoot) && (psc == nil || !ptrTrue(psc.RunAsNonRoot)):
		t.Error("runAsNonRoot is not true")
	case !ptrTrue(sc.ReadOnlyRootFilesystem):
		t.Error("readOnlyRootFilesystem is not true")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("allowPrivilegeEscalation is not false")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0:
		t.Errorf("capabilities %+v, want drop [ALL] and nothing added", sc.Capabilities)
	case (sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault) &&
		(psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault):
		t.Error("seccompProfile is not RuntimeDefault")
	}
	// The ServiceAccount the pod runs as is the one the roles are bound to.
	sas := install.Find(objs, "ServiceAccount")
	if len(sas) != 1 || sas[0].GetName() != spec.ServiceAccountName || sas[0].GetNamespace() != d.Namespace {
		t.Errorf("the pod runs as %q; the objects hold ServiceAccounts %v: want the one, in the Deployment's namespace", spec.ServiceAccountName, names(sas))
	}
	// The metrics Service reaches the HTTPS port.
	svcs := install.Find(objs, "Service")
	if len(svcs) != 1 {
		t.Fatalf("%d Services, want the metrics Service", len(svcs))
	}
	svc, err := install.Convert[corev1.Service](svcs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !selects(svc.Spec.Selector, d.Spec.Template.Labels) || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8443 || svc.Spec.Ports[0].TargetPort.String() != "https" {
		t.Errorf("metrics Service %+v: want it to select the pods and reach port https (8443)", svc.Spec)
	}
	if p := slices.IndexFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "https" && p.ContainerPort == 8443 }); p < 0 {
		t.Errorf("container ports %+v: want https on 8443", c.Ports)
	}
}

// config/default puts every namespaced object in upshift-system and
// brings the namespace and both CRDs.
func TestKustomizeNamespaceAndCRDs(t *testing.T) {
	objs := buildKustomize(t, defaultDir)
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition":
			continue
		}
		if o.GetNamespace() != namespace {
			t.Errorf("%s %s is in namespace %q, want %s", o.GetKind(), o.GetName(), o.GetNamespace(), namespace)
		}
	}
	if ns := install.Find(objs, "Namespace"); len(ns) != 1 || ns[0].GetName() != namespace {
		t.Errorf("namespaces %v, want %s", names(ns), namespace)
	}
	want := []string{"approllouts.upshift.dev", "clusterversions.upshift.dev", "platformupgrades.upshift.dev", "upgradeplans.upshift.dev", "upgraderuns.upshift.dev"}
	if got := names(install.Find(objs, "CustomResourceDefinition")); !slices.Equal(got, want) {
		t.Errorf("CRDs %v, want %v", got, want)
	}
}

// The chart's values reach the Deployment.
func TestChartValues(t *testing.T) {
	objs := renderChart(t, values(
		"image.tag", "1.2.3",
		"replicas", int64(3),
		"nodeSelector", map[string]any{"pool": "system"},
		"tolerations", []any{map[string]any{"key": "dedicated", "operator": "Exists"}},
		"affinity", map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
			"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "zone", "operator": "In", "values": []any{"a"}}}}}}}},
		"podSecurityContext.fsGroup", int64(65532),
		"resources.limits.memory", "1Gi",
		"extraArgs", []any{"--debug"},
	))
	d := deployment(t, objs)
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	switch {
	case c.Image != "ghcr.io/upshift-dev/upshift:1.2.3":
		t.Errorf("image %q, want tag 1.2.3", c.Image)
	case d.Spec.Replicas == nil || *d.Spec.Replicas != 3:
		t.Errorf("replicas %v, want 3", d.Spec.Replicas)
	case spec.NodeSelector["pool"] != "system":
		t.Errorf("nodeSelector %v", spec.NodeSelector)
	case len(spec.Tolerations) != 1 || spec.Tolerations[0].Key != "dedicated":
		t.Errorf("tolerations %v", spec.Tolerations)
	case spec.Affinity == nil || spec.Affinity.NodeAffinity == nil:
		t.Errorf("affinity %v", spec.Affinity)
	case spec.SecurityContext == nil || spec.SecurityContext.FSGroup == nil || *spec.SecurityContext.FSGroup != 65532 || !ptrTrue(spec.SecurityContext.RunAsNonRoot):
		t.Errorf("pod securityContext %+v: want fsGroup added to the defaults", spec.SecurityContext)
	case c.Resources.Limits.Memory().String() != "1Gi":
		t.Errorf("memory limit %s, want 1Gi", c.Resources.Limits.Memory())
	case !slices.Equal(c.Args, append(slices.Clone(wantArgs), "--debug")):
		t.Errorf("args %q, want the defaults then --debug", c.Args)
	}

	// gateHosts bounds what plans' gates reach (--gate-hosts); none: no flag.
	objs = renderChart(t, values("gateHosts", []any{"*.svc.cluster.local", "prometheus.monitoring"}))
	if args := deployment(t, objs).Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, "--gate-hosts=*.svc.cluster.local,prometheus.monitoring") {
		t.Errorf("gateHosts: args %q, want --gate-hosts with both hosts", args)
	}

	// Without leader election: no flag, no Role for it.
	objs = renderChart(t, values("leaderElection.enabled", false))
	if args := deployment(t, objs).Spec.Template.Spec.Containers[0].Args; slices.Contains(args, "--enable-leader-election") {
		t.Errorf("leaderElection.enabled=false: args %q still enable it", args)
	}
	roles, err := install.Roles(objs)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := roles["Role/upshift-system/upshift-leader-election"]; ok {
		t.Error("leaderElection.enabled=false still renders the leader-election Role")
	}
}

func deployment(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	ds := install.Find(objs, "Deployment")
	if len(ds) != 1 {
		t.Fatalf("%d Deployments, want 1", len(ds))
	}
	d, err := install.Convert[appsv1.Deployment](ds[0])
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func ptrTrue(b *bool) bool { return b != nil && *b }

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	slices.Sort(out)
	return out
}
