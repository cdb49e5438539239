// Command gen writes the generated files of the benchmark's Liqo-shaped
// scenario (test/bench/liqo): Liqo's 28 CRDs at v1.0.0 and v1.1.0, the
// v1.0.0 install (namespace, RBAC, the controller-manager, webhook,
// crd-replicator, metric-agent, ipam, proxy and fabric) and the gateway
// templates at both versions. Liqo's chart cannot be downloaded here, so
// its shape is rebuilt: the same API groups, kinds and versions, the same
// Kubernetes types embedded whole, hence about the same size.
// The plans and the script next to them are written by hand.
//
// For speed only: what it writes is a stand-in, not Liqo. Its file names
// and objects differ from Liqo's (networking.liqo.io_publickeys.yaml,
// virtualkubelet.liqo.io_shadowpods.yaml; gateway templates of its own),
// so nothing that claims to be Liqo's may be checked against it: the Liqo
// profile (examples/liqo) is tested against Liqo's released artifacts in
// ../shared/data/liqo.
//
//go:generate go run . -out ..
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// generatedDirs are wholly generated: emptied before writing.
var generatedDirs = []string{"v1.0.0/crds", "v1.0.0/platform", "v1.1.0/crds", "v1.1.0/templates"}

func main() {
	out := flag.String("out", "..", "the test/bench/liqo directory")
	flag.Parse()
	files, err := generate()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := write(*out, files); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// generate returns every generated file by its path under the liqo
// directory.
func generate() (map[string][]byte, error) {
	k, err := loadK8sSchemas()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, release := range []string{"v1.0.0", "v1.1.0"} {
		for _, c := range liqoCRDs(k, release) {
			b, err := renderCRD(c, release)
			if err != nil {
				return nil, err
			}
			files[filepath.Join(release, "crds", c.group+".liqo.io_"+c.plural+".yaml")] = b
		}
	}
	platform, err := platformFiles("v1.0.0")
	if err != nil {
		return nil, err
	}
	for name, b := range platform {
		files[filepath.Join("v1.0.0", "platform", name)] = b
	}
	templates, err := templatesFile("v1.1.0")
	if err != nil {
		return nil, err
	}
	files[filepath.Join("v1.1.0", "templates", "gateway-templates.yaml")] = templates
	return files, nil
}

func write(root string, files map[string][]byte) error {
	for _, d := range generatedDirs {
		if err := os.RemoveAll(filepath.Join(root, d)); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		path := filepath.Join(root, n)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}
