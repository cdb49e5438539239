package apiremovals

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Removal is one API version of a built-in kind that Kubernetes stopped
// serving.
type Removal struct {
	Kind schema.GroupVersionKind
	// RemovedIn is the minor of the Kubernetes 1.x release that stopped
	// serving it.
	RemovedIn int
	// Replacement is the apiVersion to use instead ("autoscaling/v2"); ""
	// when the kind itself is gone (PodSecurityPolicy).
	Replacement string
	// Note says what else the move takes (a renamed kind, a changed
	// schema); "" when nothing.
	Note string
}

// String is the problem and its fix, for messages: "autoscaling/v2beta2
// HorizontalPodAutoscaler was removed in Kubernetes 1.26: use
// autoscaling/v2".
func (r Removal) String() string {
	s := fmt.Sprintf("%s %s was removed in Kubernetes 1.%d", r.Kind.GroupVersion(), r.Kind.Kind, r.RemovedIn)
	switch {
	case r.Replacement != "" && r.Note != "":
		return s + ": use " + r.Replacement + " (" + r.Note + ")"
	case r.Replacement != "":
		return s + ": use " + r.Replacement
	case r.Note != "":
		return s + ": " + r.Note
	}
	return s
}

// Removed returns the removals that moving a cluster from Kubernetes
// 1.fromMinor to 1.toMinor brings to kinds: those removed in a minor
// after fromMinor, up to toMinor included, once per kind, in the order of
// kinds. fromMinor 0 asks for every removal up to toMinor (what a cluster
// at toMinor no longer serves). A downgrade removes nothing this table
// knows of.
func Removed(kinds []schema.GroupVersionKind, fromMinor, toMinor int) []Removal {
	var out []Removal
	seen := map[schema.GroupVersionKind]bool{}
	for _, k := range kinds {
		r, ok := removals[k]
		if !ok || seen[k] || r.in <= fromMinor || r.in > toMinor {
			continue
		}
		seen[k] = true
		out = append(out, Removal{Kind: k, RemovedIn: r.in, Replacement: r.replacement, Note: r.note})
	}
	return out
}

// Kinds are every API version and kind of the table, sorted: what a scan
// of a cluster's objects asks Removed about.
func Kinds() []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(removals))
	for k := range removals {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// removal is a row of the table.
type removal struct {
	in          int // Kubernetes 1.x minor
	replacement string
	note        string
}

func gvk(apiVersion, kind string) schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(apiVersion, kind)
}

// removals are the built-in API versions Kubernetes stopped serving, from
// the Deprecated API Migration Guide
// (https://kubernetes.io/docs/reference/using-api/deprecation-guide/, as
// of Kubernetes 1.34: removals in 1.16, 1.22, 1.25, 1.26, 1.27, 1.29 and
// 1.32), cross-checked with pluto's versions.yaml
// (github.com/FairwindsOps/pluto). Alpha versions are off by default and
// the guide lists none; the one kept here, resource.k8s.io/v1alpha2, is
// from the Kubernetes 1.31 changelog ("the new version, v1alpha3, ... is
// not compatible with the previous version"). List kinds (…List) are left
// out: a plan holds objects.
var removals = map[schema.GroupVersionKind]removal{
	// 1.16
	gvk("extensions/v1beta1", "Deployment"):        {16, "apps/v1", ""},
	gvk("apps/v1beta1", "Deployment"):              {16, "apps/v1", ""},
	gvk("apps/v1beta2", "Deployment"):              {16, "apps/v1", ""},
	gvk("extensions/v1beta1", "DaemonSet"):         {16, "apps/v1", ""},
	gvk("apps/v1beta2", "DaemonSet"):               {16, "apps/v1", ""},
	gvk("apps/v1beta1", "StatefulSet"):             {16, "apps/v1", ""},
	gvk("apps/v1beta2", "StatefulSet"):             {16, "apps/v1", ""},
	gvk("extensions/v1beta1", "ReplicaSet"):        {16, "apps/v1", ""},
	gvk("apps/v1beta1", "ReplicaSet"):              {16, "apps/v1", ""},
	gvk("apps/v1beta2", "ReplicaSet"):              {16, "apps/v1", ""},
	gvk("extensions/v1beta1", "NetworkPolicy"):     {16, "networking.k8s.io/v1", ""},
	gvk("extensions/v1beta1", "PodSecurityPolicy"): {16, "", "use policy/v1beta1 before Kubernetes 1.25; from 1.25 the kind is gone: use Pod Security Admission (namespace labels pod-security.kubernetes.io/*)"},

	// 1.22
	gvk("admissionregistration.k8s.io/v1beta1", "MutatingWebhookConfiguration"):   {22, "admissionregistration.k8s.io/v1", "sideEffects and admissionReviewVersions are required"},
	gvk("admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration"): {22, "admissionregistration.k8s.io/v1", "sideEffects and admissionReviewVersions are required"},
	gvk("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition"):               {22, "apiextensions.k8s.io/v1", "spec.versions[*].schema.openAPIV3Schema is required and structural"},
	gvk("apiregistration.k8s.io/v1beta1", "APIService"):                           {22, "apiregistration.k8s.io/v1", ""},
	gvk("authentication.k8s.io/v1beta1", "TokenReview"):                           {22, "authentication.k8s.io/v1", ""},
	gvk("authorization.k8s.io/v1beta1", "SubjectAccessReview"):                    {22, "authorization.k8s.io/v1", "spec.group is spec.groups"},
	gvk("authorization.k8s.io/v1beta1", "LocalSubjectAccessReview"):               {22, "authorization.k8s.io/v1", "spec.group is spec.groups"},
	gvk("authorization.k8s.io/v1beta1", "SelfSubjectAccessReview"):                {22, "authorization.k8s.io/v1", "spec.group is spec.groups"},
	gvk("certificates.k8s.io/v1beta1", "CertificateSigningRequest"):               {22, "certificates.k8s.io/v1", "spec.signerName and spec.usages are required"},
	gvk("coordination.k8s.io/v1beta1", "Lease"):                                   {22, "coordination.k8s.io/v1", ""},
	gvk("extensions/v1beta1", "Ingress"):                                          {22, "networking.k8s.io/v1", "backends are service.name and service.port; pathType is required"},
	gvk("networking.k8s.io/v1beta1", "Ingress"):                                   {22, "networking.k8s.io/v1", "backends are service.name and service.port; pathType is required"},
	gvk("networking.k8s.io/v1beta1", "IngressClass"):                              {22, "networking.k8s.io/v1", ""},
	gvk("rbac.authorization.k8s.io/v1beta1", "ClusterRole"):                       {22, "rbac.authorization.k8s.io/v1", ""},
	gvk("rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding"):                {22, "rbac.authorization.k8s.io/v1", ""},
	gvk("rbac.authorization.k8s.io/v1beta1", "Role"):                              {22, "rbac.authorization.k8s.io/v1", ""},
	gvk("rbac.authorization.k8s.io/v1beta1", "RoleBinding"):                       {22, "rbac.authorization.k8s.io/v1", ""},
	gvk("scheduling.k8s.io/v1beta1", "PriorityClass"):                             {22, "scheduling.k8s.io/v1", ""},
	gvk("storage.k8s.io/v1beta1", "CSIDriver"):                                    {22, "storage.k8s.io/v1", ""},
	gvk("storage.k8s.io/v1beta1", "CSINode"):                                      {22, "storage.k8s.io/v1", ""},
	gvk("storage.k8s.io/v1beta1", "StorageClass"):                                 {22, "storage.k8s.io/v1", ""},
	gvk("storage.k8s.io/v1beta1", "VolumeAttachment"):                             {22, "storage.k8s.io/v1", ""},

	// 1.25
	gvk("batch/v1beta1", "CronJob"):                       {25, "batch/v1", ""},
	gvk("discovery.k8s.io/v1beta1", "EndpointSlice"):      {25, "discovery.k8s.io/v1", "topology is nodeName and zone per endpoint"},
	gvk("events.k8s.io/v1beta1", "Event"):                 {25, "events.k8s.io/v1", ""},
	gvk("autoscaling/v2beta1", "HorizontalPodAutoscaler"): {25, "autoscaling/v2", "targetAverageUtilization is target.averageUtilization"},
	gvk("policy/v1beta1", "PodDisruptionBudget"):          {25, "policy/v1", "an empty spec.selector selects every pod of the namespace"},
	gvk("policy/v1beta1", "PodSecurityPolicy"):            {25, "", "the kind is gone: use Pod Security Admission (namespace labels pod-security.kubernetes.io/*)"},
	gvk("node.k8s.io/v1beta1", "RuntimeClass"):            {25, "node.k8s.io/v1", ""},

	// 1.26
	gvk("autoscaling/v2beta2", "HorizontalPodAutoscaler"):                     {26, "autoscaling/v2", ""},
	gvk("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema"):                 {26, "flowcontrol.apiserver.k8s.io/v1", "served from Kubernetes 1.29; on 1.26 to 1.28 use v1beta3"},
	gvk("flowcontrol.apiserver.k8s.io/v1beta1", "PriorityLevelConfiguration"): {26, "flowcontrol.apiserver.k8s.io/v1", "served from Kubernetes 1.29, on 1.26 to 1.28 use v1beta3; assuredConcurrencyShares is nominalConcurrencyShares"},

	// 1.27
	gvk("storage.k8s.io/v1beta1", "CSIStorageCapacity"): {27, "storage.k8s.io/v1", ""},

	// 1.29
	gvk("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema"):                 {29, "flowcontrol.apiserver.k8s.io/v1", ""},
	gvk("flowcontrol.apiserver.k8s.io/v1beta2", "PriorityLevelConfiguration"): {29, "flowcontrol.apiserver.k8s.io/v1", "assuredConcurrencyShares is nominalConcurrencyShares"},

	// 1.31 (alpha)
	gvk("resource.k8s.io/v1alpha2", "ResourceClaim"):         {31, "resource.k8s.io/v1", "the schema changed: devices are requested from a DeviceClass"},
	gvk("resource.k8s.io/v1alpha2", "ResourceClaimTemplate"): {31, "resource.k8s.io/v1", "the schema changed: devices are requested from a DeviceClass"},
	gvk("resource.k8s.io/v1alpha2", "ResourceClass"):         {31, "", "replaced by DeviceClass (resource.k8s.io/v1)"},
	gvk("resource.k8s.io/v1alpha2", "ResourceSlice"):         {31, "resource.k8s.io/v1", "the schema changed; a DRA driver publishes its own"},
	gvk("resource.k8s.io/v1alpha2", "PodSchedulingContext"):  {31, "", "the kind is gone with classic DRA: the scheduler allocates devices itself"},

	// 1.32
	gvk("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema"):                 {32, "flowcontrol.apiserver.k8s.io/v1", ""},
	gvk("flowcontrol.apiserver.k8s.io/v1beta3", "PriorityLevelConfiguration"): {32, "flowcontrol.apiserver.k8s.io/v1", "an explicit nominalConcurrencyShares: 0 is kept, not defaulted to 30"},
}
