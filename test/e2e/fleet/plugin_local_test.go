package fleet_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/upshift-dev/upshift/internal/localcluster"
	"github.com/upshift-dev/upshift/internal/localcluster/testenv"
	"github.com/upshift-dev/upshift/internal/plugin"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/local"
)

// `upshift plugin local` serves a local cluster as an ops plugin: it
// answers the cluster's versions from its nodes, and a service out it
// runs shows in the cluster's status, until the service in.
func TestPluginLocalCommandServesALocalCluster(t *testing.T) {
	t.Parallel()
	c := testenv.Cluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// One node in a pool: the local plugin's node pools are labelled
	// nodes (the other tests on this cluster use the sim plugin).
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:"command"}}}`, local.LabelNodePool)
	if _, err := clientset(t, c.RESTConfig()).CoreV1().Nodes().Patch(ctx, localcluster.NodeName(0), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(ctx, testenv.UpshiftBinary(t), "plugin", "local", "--insecure", "--listen", "127.0.0.1:0",
		"--cluster", "home="+c.KubeconfigPath(), "--master-latency", "100ms")
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("upshift plugin local printed nothing: %v", err)
	}
	m := regexp.MustCompile(`^local plugin: home on (127\.0\.0\.1:\d+), plaintext`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("first line %q; want the clusters served and the address", line)
	}

	p, err := plugin.Dial(plugin.Endpoint{Address: m[1], Insecure: true}, plugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	v, err := p.GetVersion(ctx, "home")
	if err != nil || v.Master == "" || len(v.NodePools) != 1 || v.NodePools[0].ID != "command" || v.NodePools[0].Version == "" {
		t.Fatalf("GetVersion: %+v, %v; want the control plane's version and the node pools", v, err)
	}
	if _, err := p.GetVersion(ctx, "elsewhere"); err == nil {
		t.Error("GetVersion of a cluster the command was not given answered")
	}

	serve := func(out bool) {
		t.Helper()
		var op pluginsdk.Operation
		var err error
		if out {
			op, err = p.ServiceOut(ctx, "home")
		} else {
			op, err = p.ServiceIn(ctx, "home")
		}
		if err != nil {
			t.Fatal(err)
		}
		if rep, err := p.Wait(ctx, "home", op); err != nil || rep.Status != pluginsdk.OperationDone {
			t.Fatalf("%s: %+v, %v", op.Type, rep, err)
		}
		st, err := p.GetClusterStatus(ctx, "home")
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]pluginsdk.ServiceState{true: pluginsdk.ServiceOut, false: pluginsdk.ServiceIn}[out]; st.Service != want {
			t.Fatalf("after %s the cluster is %v, want %v", op.Type, st.Service, want)
		}
	}
	serve(true)
	serve(false)
}
