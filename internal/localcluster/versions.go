package localcluster

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"sort"
)

// Pinned versions of the local control plane. They are built from the Go
// module proxy with the recipes embedded below, so an installed binary can
// build them outside this repository.
const (
	KubernetesVersion = "v1.34.4"
	EtcdVersion       = "v3.6.8"
	KwokVersion       = "v0.8.0"
	HelmVersion       = "v3.19.5"
)

// recipes holds one Go module per tool family. The files are named
// go.mod.txt and go.sum.txt because go:embed refuses directories that
// contain a go.mod (they would be another module); Build writes them back
// under their real names in a scratch directory. `make recipes` regenerates
// them.
//
//go:embed recipe
var recipes embed.FS

// tool is one binary of the local control plane and how to build and check it.
type tool struct {
	name    string   // binary name
	recipe  string   // directory under recipe/
	pkg     string   // Go package to build
	ldflags string   // extra -ldflags, e.g. version stamping
	check   []string // arguments of a cheap invocation that proves it runs
	want    string   // substring the check's output must contain
}

const k8sVersionFlags = "-X k8s.io/component-base/version.gitVersion=" + KubernetesVersion +
	" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=34" +
	" -X k8s.io/client-go/pkg/version.gitVersion=" + KubernetesVersion +
	" -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=34"

// tools lists every binary in build order: the largest first, so the long
// wait is at the start and the progress that follows moves quickly.
var tools = []tool{
	{name: "kube-apiserver", recipe: "kubernetes", pkg: "k8s.io/kubernetes/cmd/kube-apiserver", ldflags: k8sVersionFlags, check: []string{"--version"}, want: KubernetesVersion},
	{name: "kube-controller-manager", recipe: "kubernetes", pkg: "k8s.io/kubernetes/cmd/kube-controller-manager", ldflags: k8sVersionFlags, check: []string{"--version"}, want: KubernetesVersion},
	{name: "kube-scheduler", recipe: "kubernetes", pkg: "k8s.io/kubernetes/cmd/kube-scheduler", ldflags: k8sVersionFlags, check: []string{"--version"}, want: KubernetesVersion},
	{name: "kubectl", recipe: "kubernetes", pkg: "k8s.io/kubernetes/cmd/kubectl", ldflags: k8sVersionFlags, check: []string{"version", "--client"}, want: KubernetesVersion},
	{name: "etcd", recipe: "etcd", pkg: "go.etcd.io/etcd/server/v3", check: []string{"--version"}, want: EtcdVersion[1:]},
	{name: "kwok", recipe: "kwok", pkg: "sigs.k8s.io/kwok/cmd/kwok", check: []string{"--version"}, want: KwokVersion[1:]},
	{name: "helm", recipe: "helm", pkg: "helm.sh/helm/v3/cmd/helm", ldflags: helmFlags, check: []string{"version", "--short"}, want: HelmVersion},
}

// helmFlags stamp Helm as its release build does (its Makefile): its
// version, and the Kubernetes version `helm template` and `helm lint`
// assume without a cluster (the release's client-go minor; unset, Helm
// assumes v1.20 and refuses charts that need newer).
const helmFlags = "-X helm.sh/helm/v3/internal/version.version=" + HelmVersion +
	" -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=34" +
	" -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=34"

// ToolNames returns the names of every binary the local control plane needs.
func ToolNames() []string {
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.name)
	}
	return names
}

// VersionsKey names the binary directory: the pinned versions plus a short
// digest of the recipes and the build flags, so editing either never
// reuses stale binaries.
func VersionsKey() string {
	h := sha256.New()
	var paths []string
	_ = fs.WalkDir(recipes, "recipe", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	sort.Strings(paths)
	for _, p := range paths {
		b, _ := recipes.ReadFile(p)
		h.Write([]byte(p))
		h.Write(b)
	}
	// And how each is built: a new flag is a new binary.
	for _, t := range tools {
		h.Write([]byte(t.name + " " + t.pkg + " " + t.ldflags + "\n"))
	}
	return "k8s-" + KubernetesVersion + "-" + hex.EncodeToString(h.Sum(nil))[:10]
}
