package catalog

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/upshift-dev/upshift/internal/clients"
)

// validateExpected checks spec.peers.expected.
func validateExpected(path *field.Path, e *ExpectedPeers) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ name, v, eg string }{
		{"apiVersion", e.APIVersion, "core.liqo.io/v1beta1"}, {"kind", e.Kind, "ForeignCluster"},
		{"idField", e.IDField, "spec.clusterID"}, {"secretLabel", e.SecretLabel, "liqo.io/remote-cluster-id"},
	} {
		if f.v == "" {
			errs = append(errs, field.Required(path.Child(f.name), "e.g. "+f.eg))
		}
	}
	if _, err := schema.ParseGroupVersion(e.APIVersion); e.APIVersion != "" && err != nil {
		errs = append(errs, field.Invalid(path.Child("apiVersion"), e.APIVersion, err.Error()))
	}
	if e.SecretLabel != "" {
		if msgs := validation.IsQualifiedName(e.SecretLabel); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("secretLabel"), e.SecretLabel, strings.Join(msgs, "; ")))
		}
	}
	if e.Missing != "" && e.Missing != MissingBlock && e.Missing != MissingWarn {
		errs = append(errs, field.NotSupported(path.Child("missing"), e.Missing, []string{MissingBlock, MissingWarn}))
	}
	return errs
}

// unreadPeers are the peers the cluster's own resources name (ids, from
// spec.peers.expected) that no kubeconfig Secret among secrets is
// labelled for, sorted.
func unreadPeers(ctx context.Context, cs *clients.Set, e *ExpectedPeers, secrets []corev1.Secret, key string) ([]string, error) {
	gv, err := schema.ParseGroupVersion(e.APIVersion)
	if err != nil {
		return nil, err
	}
	m, err := cs.Mapper.RESTMapping(gv.WithKind(e.Kind).GroupKind(), gv.Version)
	if meta.IsNoMatchError(err) {
		// Installed since the mapper last looked?
		cs.Mapper.Reset()
		m, err = cs.Mapper.RESTMapping(gv.WithKind(e.Kind).GroupKind(), gv.Version)
	}
	if meta.IsNoMatchError(err) {
		return nil, nil // not served (nothing installed yet): no such peer
	}
	if err != nil {
		return nil, fmt.Errorf("spec.peers.expected: %s %s: %w", e.APIVersion, e.Kind, err)
	}
	list, err := cs.Dynamic.Resource(m.Resource).List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("spec.peers.expected: these credentials may not list %s.%s cluster-wide, where the upgrade finds the peers: grant list on them: %w",
			m.Resource.Resource, m.Resource.Group, err)
	}
	if err != nil {
		return nil, fmt.Errorf("spec.peers.expected: list %s: %w", m.Resource.Resource, err)
	}
	have := map[string]bool{}
	for _, s := range secrets {
		// Only a Secret that holds a kubeconfig covers its peer: ReadPeers
		// reads no other.
		if _, ok := s.Data[key]; ok && s.Labels[e.SecretLabel] != "" {
			have[s.Labels[e.SecretLabel]] = true
		}
	}
	var out []string
	for _, o := range list.Items {
		id := peerID(o, e.IDField)
		if id == "" {
			// A field the resource lacks (a typo in idField) must not
			// pass for a peer named otherwise: it is named as missing.
			id = fmt.Sprintf("%s (no %s)", o.GetName(), e.IDField)
		}
		if !have[id] {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out, nil
}

// peerID is the string at a dotted field path, "" when absent.
func peerID(o unstructured.Unstructured, dotted string) string {
	v, _, _ := unstructured.NestedString(o.Object, strings.Split(strings.TrimPrefix(dotted, "."), ".")...)
	return v
}

// noSecretProblem is a peer the cluster knows that nobody made a
// kubeconfig Secret for.
func noSecretProblem(p *Peers, id, key string) PeerProblem {
	sel := ""
	if p.KubeconfigSecrets.Selector != "" {
		sel = " and " + p.KubeconfigSecrets.Selector
	}
	return PeerProblem{Peer: fmt.Sprintf("%q", id), Err: fmt.Errorf(
		"the cluster has %s %q, and no Secret in %s labelled %s=%s%s holds its kubeconfig under key %s (spec.peers.kubeconfigSecrets): create one, or set spec.peers.expected.missing: Warn to upgrade without checking it",
		p.Expected.Kind, id, p.KubeconfigSecrets.Namespace, p.Expected.SecretLabel, id, sel, key)}
}
