package local

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// state reads (or first writes) the plugin's ConfigMap in the cluster:
// the control plane's version, which starts as the API server's own, and
// the routing label, which starts in service.
func state(ctx context.Context, cs kubernetes.Interface) (*corev1.ConfigMap, error) {
	cm, err := cs.CoreV1().ConfigMaps(StateNamespace).Get(ctx, StateName, metav1.GetOptions{})
	if err == nil {
		return cm, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return nil, err
	}
	cm = &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: StateName, Namespace: StateNamespace, Labels: map[string]string{LabelInService: "true"}},
		Data:       map[string]string{keyMasterVersion: v.GitVersion},
	}
	made, err := cs.CoreV1().ConfigMaps(StateNamespace).Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return cs.CoreV1().ConfigMaps(StateNamespace).Get(ctx, StateName, metav1.GetOptions{})
	}
	return made, err
}

// update changes the plugin's ConfigMap, retrying on a conflict.
func update(ctx context.Context, cs kubernetes.Interface, change func(*corev1.ConfigMap)) error {
	for {
		cm, err := state(ctx, cs)
		if err != nil {
			return err
		}
		change(cm)
		_, err = cs.CoreV1().ConfigMaps(StateNamespace).Update(ctx, cm, metav1.UpdateOptions{})
		if !apierrors.IsConflict(err) {
			return err
		}
	}
}

// GetVersion reads the control plane's version and each node pool's.
func (p *Plugin) GetVersion(ctx context.Context, id string) (pluginsdk.ClusterVersion, error) {
	cs, err := p.client(id)
	if err != nil {
		return pluginsdk.ClusterVersion{}, err
	}
	cm, err := state(ctx, cs)
	if err != nil {
		return pluginsdk.ClusterVersion{}, status.Error(codes.Unavailable, fmt.Sprintf("cluster %s: %v", id, err))
	}
	pools, err := nodePools(ctx, cs)
	if err != nil {
		return pluginsdk.ClusterVersion{}, status.Error(codes.Unavailable, fmt.Sprintf("cluster %s: %v", id, err))
	}
	v := pluginsdk.ClusterVersion{Master: cm.Data[keyMasterVersion]}
	for _, name := range sortedKeys(pools) {
		v.NodePools = append(v.NodePools, pluginsdk.NodePoolVersion{ID: name, Version: poolVersion(pools[name])})
	}
	return v, nil
}

// GetClusterStatus reads the routing label, and whether every node is
// Ready.
func (p *Plugin) GetClusterStatus(ctx context.Context, id string) (pluginsdk.ClusterStatus, error) {
	cs, err := p.client(id)
	if err != nil {
		return pluginsdk.ClusterStatus{}, err
	}
	cm, err := state(ctx, cs)
	if err != nil {
		// An API server that does not answer serves nobody.
		return pluginsdk.ClusterStatus{Service: pluginsdk.ServiceOut}, nil
	}
	s := pluginsdk.ClusterStatus{Service: pluginsdk.ServiceIn}
	if cm.Labels[LabelInService] != "true" {
		s.Service = pluginsdk.ServiceOut
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, nil
	}
	s.Available = len(nodes.Items) > 0
	for i := range nodes.Items {
		s.Available = s.Available && ready(&nodes.Items[i])
	}
	return s, nil
}

// ServiceIn routes to the cluster again.
func (p *Plugin) ServiceIn(ctx context.Context, id string) (pluginsdk.Operation, error) {
	return p.route(id, "ServiceIn", "true")
}

// ServiceOut stops routing to the cluster.
func (p *Plugin) ServiceOut(ctx context.Context, id string) (pluginsdk.Operation, error) {
	return p.route(id, "ServiceOut", "false")
}

func (p *Plugin) route(id, typ, value string) (pluginsdk.Operation, error) {
	cs, err := p.client(id)
	if err != nil {
		return pluginsdk.Operation{}, err
	}
	return p.ops.start(id, typ, func(func(int32, int32, string)) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return update(ctx, cs, func(cm *corev1.ConfigMap) {
			if cm.Labels == nil {
				cm.Labels = map[string]string{}
			}
			cm.Labels[LabelInService] = value
		})
	}), nil
}

// UpgradeMaster records the control plane's new version after
// MasterLatency, as a managed control plane's upgrade would.
func (p *Plugin) UpgradeMaster(ctx context.Context, id, version string) (pluginsdk.Operation, error) {
	cs, err := p.client(id)
	if err != nil {
		return pluginsdk.Operation{}, err
	}
	if version == "" {
		return pluginsdk.Operation{}, status.Error(codes.InvalidArgument, "version: empty: give the control plane's version")
	}
	return p.ops.start(id, "UpgradeMaster", func(func(int32, int32, string)) error {
		time.Sleep(p.cfg.MasterLatency)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return update(ctx, cs, func(cm *corev1.ConfigMap) { cm.Data[keyMasterVersion] = version })
	}), nil
}

// nodePools groups the nodes by their pool label; nodes without one are
// no pool's.
func nodePools(ctx context.Context, cs kubernetes.Interface) (map[string][]corev1.Node, error) {
	list, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: LabelNodePool})
	if err != nil {
		return nil, err
	}
	out := map[string][]corev1.Node{}
	for _, n := range list.Items {
		out[n.Labels[LabelNodePool]] = append(out[n.Labels[LabelNodePool]], n)
	}
	return out, nil
}

// poolVersion is the oldest kubelet of the pool: the pool is at a version
// once every node is.
func poolVersion(nodes []corev1.Node) string {
	var versions []string
	for _, n := range nodes {
		versions = append(versions, n.Status.NodeInfo.KubeletVersion)
	}
	sort.Slice(versions, func(i, j int) bool { return older(versions[i], versions[j]) })
	if len(versions) == 0 {
		return ""
	}
	return versions[0]
}

// older compares versions as semver where both parse, else as strings.
func older(a, b string) bool {
	va, errA := semver.NewVersion(strings.TrimPrefix(a, "v"))
	vb, errB := semver.NewVersion(strings.TrimPrefix(b, "v"))
	if errA == nil && errB == nil {
		return va.LessThan(vb)
	}
	return a < b
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
