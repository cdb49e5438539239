package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	ecprofile "github.com/upshift-dev/upshift/examples/embedded-cluster"
	"github.com/upshift-dev/upshift/internal/crds"
	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/source"
	"github.com/upshift-dev/upshift/internal/steps/autopilot"
	"github.com/upshift-dev/upshift/internal/steps/clusterconfig"
)

// profileEC names the embedded-cluster profile's demo.
const profileEC = "embedded-cluster"

// readECCRDs reads --crds: the CRDs of k0s and embedded-cluster the
// profile writes, which Upshift does not ship. It is checked before any
// cluster starts.
func readECCRDs(file string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	how := fmt.Sprintf("export them from an embedded-cluster cluster: kubectl get crd %s -o yaml > ec-crds.yaml, then --crds ec-crds.yaml",
		strings.Join(ecprofile.CRDs, " "))
	if file == "" {
		return nil, fmt.Errorf("--crds: the embedded-cluster profile needs k0s's and embedded-cluster's CRDs (%s), which Upshift does not ship: %s",
			strings.Join(ecprofile.CRDs, ", "), how)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--crds: %w", err)
	}
	objs, err := source.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("--crds %s: %w", file, err)
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" || !slices.Contains(ecprofile.CRDs, o.GetName()) {
			continue
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &crd); err != nil {
			return nil, fmt.Errorf("--crds %s: %s: %w", file, o.GetName(), err)
		}
		// As exported from a cluster: what that cluster set is not ours to
		// create with.
		crd.ObjectMeta = metav1.ObjectMeta{Name: crd.Name, Labels: crd.Labels, Annotations: crd.Annotations}
		crd.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
		// A conversion webhook of the exporting cluster has no Service
		// here; the profile's CRDs serve one version each.
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		out = append(out, &crd)
	}
	for _, name := range ecprofile.CRDs {
		if !slices.ContainsFunc(out, func(c *apiextensionsv1.CustomResourceDefinition) bool { return c.Name == name }) {
			return nil, fmt.Errorf("--crds %s has no CustomResourceDefinition %s: %s", file, name, how)
		}
	}
	return out, nil
}

// prepareEC makes the local cluster what k0s and embedded-cluster
// install before 2.16.0's add-ons: their CRDs, k0s's ClusterConfig, node-0
// a controller. The nodes are kwok's, on which k0s cannot run: they report
// the k0s 2.17.0 moves them to, so the autopilot step finds every node
// there already (on a real cluster, k0s autopilot moves them).
func prepareEC(ctx context.Context, kubeconfig, dir string, defs []*apiextensionsv1.CustomResourceDefinition) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	ext, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	for _, d := range defs {
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, d, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", d.Name, err)
		}
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, d.Name, metav1.GetOptions{})
			return err == nil && crds.Established(got), nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s is not Established: %w", d.Name, err)
		}
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(dir, "install", "k0s-clusterconfig.yaml"))
	if err != nil {
		return err
	}
	objs, err := source.Decode(data)
	if err != nil || len(objs) != 1 {
		return fmt.Errorf("install/k0s-clusterconfig.yaml: %d objects, %v", len(objs), err)
	}
	if _, err := dyn.Resource(clusterconfig.GVR).Namespace("kube-system").Create(ctx, objs[0], metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create k0s's ClusterConfig: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return ecNodes(ctx, cs)
}

// ecNodes makes node-0 a controller and every node's kubelet report
// ecprofile.K0s (as a kubelet of k0s reports it: up to "+k0s").
func ecNodes(ctx context.Context, cs kubernetes.Interface) error {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for i, n := range nodes.Items {
		if i == 0 {
			patch := []byte(`{"metadata":{"labels":{"` + autopilot.ControlPlaneLabel + `":""}}}`)
			if _, err := cs.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return err
			}
		}
		st := []byte(`{"status":{"nodeInfo":{"kubeletVersion":"` + autopilot.KubeletVersion(ecprofile.K0s) + `"}}}`)
		if _, err := cs.CoreV1().Nodes().PatchStatus(ctx, n.Name, st); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	return nil
}

// demoEC runs the embedded-cluster profile's demo on a prepared cluster:
// 2.16.0 installed, then (without --ui) 2.17.0 through the catalog and the
// broken 2.17.1 rolled back, or (with --ui) the wizard over it.
func demoEC(cmd *cobra.Command, kubeconfig, dir string, ui bool, listen string) error {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "\n# embedded-cluster 2.16.0: its add-ons and an Installed Installation\n$ upshift apply -f examples/embedded-cluster/install/plan.yaml\n")
	if code := runSubcommand(cmd, "apply", "-f", filepath.Join(dir, "install", "plan.yaml"), "--kubeconfig", kubeconfig); code != ExitOK {
		return fmt.Errorf("demo: installing %s exited %d", ecprofile.Installed, code)
	}
	if ui {
		return demoServe(cmd, kubeconfig, listen, demoServed{
			try:   "take it to " + ecprofile.Good + " (it succeeds), then " + ecprofile.Broken + " (its admin console fails and the upgrade rolls back)",
			shown: "--catalog examples/embedded-cluster", args: []string{"--catalog", dir},
		})
	}
	for _, s := range []struct {
		version, why string
		want         int
	}{
		{ecprofile.Good, "upgrade to " + ecprofile.Good + ": stages named as embedded-cluster's components, in its order", ExitOK},
		{ecprofile.Broken, "try " + ecprofile.Broken + ", whose admin console never becomes Ready: it fails and rolls back", ExitRolledBack},
	} {
		fmt.Fprintf(out, "\n# %s\n$ upshift upgrade --catalog examples/embedded-cluster --to %s\n", s.why, s.version)
		code := runSubcommand(cmd, "upgrade", "--catalog", dir, "--to", s.version, "--kubeconfig", kubeconfig)
		if code != s.want {
			return fmt.Errorf("demo: upgrading to %s exited %d, expected %d", s.version, code, s.want)
		}
		fmt.Fprintf(out, "exit code %d, as expected\n", code)
	}
	fmt.Fprintf(out, "\n$ upshift history\n")
	if code := runSubcommand(cmd, "history", "--kubeconfig", kubeconfig); code != ExitOK {
		return fmt.Errorf("demo: upshift history exited %d", code)
	}
	return nil
}

// runDemoEC checks --crds, starts (or reuses) the demo-ec cluster,
// prepares it as embedded-cluster's and runs the profile's demo.
func runDemoEC(cmd *cobra.Command, o localcluster.Options, reuse bool, crdsFile string, ui bool, listen string) error {
	defs, err := readECCRDs(crdsFile)
	if err != nil {
		return err
	}
	if !cmd.Flags().Changed("name") {
		o.Name = "demo-ec"
	}
	kubeconfig, err := demoCluster(cmd, o, reuse)
	if err != nil {
		return err
	}
	dir, err := demoFiles(ecprofile.FS, "the embedded-cluster profile")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "\n# what k0s and embedded-cluster install first: their CRDs (--crds), k0s's ClusterConfig, node-0 a controller;\n"+
		"# the nodes are kwok's, where k0s cannot run: they report %s, so autopilot will find nothing to move\n", ecprofile.K0s)
	if err := prepareEC(cmd.Context(), kubeconfig, dir, defs); err != nil {
		return fmt.Errorf("demo: prepare the cluster: %w", err)
	}
	if err := demoEC(cmd, kubeconfig, dir, ui, listen); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nthe cluster stays up: export KUBECONFIG=%s\nstop it with: upshift cluster down --name %s\n", kubeconfig, o.Name)
	return nil
}
