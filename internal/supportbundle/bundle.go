package supportbundle

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/report"
)

// Options say what a bundle holds.
type Options struct {
	// Runs are the runs it is about, as stored.
	Runs []*v1alpha1.UpgradeRun
	// RunsNamespace keeps the runs; its events and objects are collected.
	RunsNamespace string
	// Namespaces are collected besides those the runs' plans name.
	Namespaces []string
	// Now stamps the entries.
	Now time.Time
}

// Summary is what a bundle holds: its files, and the parts that could
// not be collected, each with why.
type Summary struct {
	Files      []string `json:"files"`
	Namespaces []string `json:"namespaces"`
	Missing    []string `json:"missing,omitempty"`
}

// writer is one bundle being written.
type writer struct {
	tw  *tar.Writer
	now time.Time
	sum Summary
}

// Write collects the bundle from the cluster into w.
func Write(ctx context.Context, w io.Writer, cs kubernetes.Interface, o Options) (Summary, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	gz := gzip.NewWriter(w)
	bw := &writer{tw: tar.NewWriter(gz), now: o.Now}
	bw.sum.Namespaces = Namespaces(o)
	for _, r := range o.Runs {
		red := redact.Run(r)
		bw.yaml("runs/"+r.Name+".yaml", red)
		bw.file("runs/"+r.Name+".report.md", []byte(redact.Text(report.Markdown(report.Build(r), nil))))
	}
	c := &collector{cs: cs, w: bw}
	c.nodes(ctx)
	for _, ns := range bw.sum.Namespaces {
		c.namespace(ctx, ns)
	}
	bw.file("summary.txt", []byte(bw.summaryText()))
	if err := bw.tw.Close(); err != nil {
		return bw.sum, err
	}
	return bw.sum, gz.Close()
}

// file adds one entry.
func (b *writer) file(name string, data []byte) {
	hdr := &tar.Header{Name: name, Mode: 0o600, Size: int64(len(data)), ModTime: b.now, Typeflag: tar.TypeReg}
	if err := b.tw.WriteHeader(hdr); err != nil {
		b.missing(name, err)
		return
	}
	if _, err := b.tw.Write(data); err != nil {
		b.missing(name, err)
		return
	}
	b.sum.Files = append(b.sum.Files, name)
}

// yaml adds v as YAML.
func (b *writer) yaml(name string, v any) {
	data, err := yaml.Marshal(v)
	if err != nil {
		b.missing(name, err)
		return
	}
	b.file(name, data)
}

func (b *writer) missing(what string, err error) {
	b.sum.Missing = append(b.sum.Missing, fmt.Sprintf("%s: %s", what, redact.Text(err.Error())))
}

func (b *writer) summaryText() string {
	var s strings.Builder
	fmt.Fprintf(&s, "Upshift support bundle, %s\n\nnamespaces: %s\n\nfiles:\n", b.now.UTC().Format(time.RFC3339), strings.Join(b.sum.Namespaces, ", "))
	for _, f := range b.sum.Files {
		fmt.Fprintf(&s, "  %s\n", f)
	}
	if len(b.sum.Missing) > 0 {
		s.WriteString("\nnot collected:\n")
		for _, m := range b.sum.Missing {
			fmt.Fprintf(&s, "  %s\n", m)
		}
	}
	return s.String()
}

// Namespaces are the runs namespace, every namespace the runs' plans name
// (a "namespace" field anywhere in a plan, patterns left out) and the
// ones asked for, sorted.
func Namespaces(o Options) []string {
	set := map[string]bool{}
	// Only names a namespace may have: they become paths in the bundle.
	add := func(ns string) {
		if len(validation.IsDNS1123Label(ns)) == 0 {
			set[ns] = true
		}
	}
	add(o.RunsNamespace)
	for _, ns := range o.Namespaces {
		add(ns)
	}
	for _, r := range o.Runs {
		for _, ns := range planNamespaces(r.Spec.Plan) {
			add(ns)
		}
	}
	out := make([]string, 0, len(set))
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}
