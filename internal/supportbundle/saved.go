package supportbundle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/chunks"
	"github.com/upshift-dev/upshift/internal/redact"
)

// A bundle kept in the cluster is chunk Secrets of their own type,
// labelled with the bundle's ID, in the namespace that keeps the runs:
// its readers are those who may read the runs' sources already.
const (
	SecretType  = corev1.SecretType("upshift.dev/support-bundle")
	LabelBundle = "upshift.dev/support-bundle"
	// MaxSaved bounds a kept bundle: a bigger one is not written to
	// etcd (its Error says so, and how to collect one).
	MaxSaved = 32 << 20
	prefix   = "upshift-support-bundle"
	// keepTimeout bounds writing a collected bundle, read back.
	keepTimeout = 30 * time.Second
)

// Saved describes a bundle kept in the cluster. Ref is where it is; the
// rest is what a status shows. A bundle that could not be kept has an
// Error and no Ref.
type Saved struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	CreatedAt time.Time         `json:"createdAt"`
	Bytes     int               `json:"bytes"`
	Files     int               `json:"files"`
	Missing   []string          `json:"missing,omitempty"`
	Error     string            `json:"error,omitempty"`
	Ref       *v1alpha1.BlobRef `json:"ref,omitempty"`
}

// Save collects a bundle (as Write) and keeps it in namespace, read back
// and verified; once it is kept, every other kept bundle there is
// deleted, so one is kept at a time. It is best effort: what went wrong
// is in the returned Saved's Error, never an error of the caller's.
// A download's file name is base, the bundle's ID and .tar.gz.
func Save(ctx context.Context, cs kubernetes.Interface, namespace, base string, o Options) Saved {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	id := o.Now.UTC().Format("20060102150405")
	out := Saved{ID: id, Name: base + "-" + id + ".tar.gz", CreatedAt: o.Now.UTC().Truncate(time.Second)}
	buf := &capped{max: MaxSaved}
	sum, err := Write(ctx, buf, cs, o)
	out.Files, out.Missing, out.Bytes = len(sum.Files), sum.Missing, buf.Len()
	switch {
	case buf.over:
		out.Error = fmt.Sprintf("the bundle is over %d MiB, more than is kept in the cluster: collect one with `upshift support-bundle RUN -o FILE`", MaxSaved>>20)
		return out
	case err != nil:
		out.Error = redact.Text("collect the bundle: " + err.Error())
		return out
	}
	// Keeping it has a budget of its own: a collection that took its
	// whole time must not leave nothing.
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keepTimeout)
	defer cancel()
	store := chunks.New(cs, namespace, SecretType)
	ref, err := store.Write(kctx, prefix, map[string]string{LabelBundle: id}, buf.Bytes())
	if err != nil {
		out.Error = redact.Text("keep the bundle in the cluster: " + err.Error())
		// The chunks written before the failure, and the earlier bundles
		// the new status no longer lists, are nobody's now.
		_ = store.DeleteAll(kctx, LabelBundle)
		return out
	}
	out.Ref = &ref
	if err := store.DeleteAll(kctx, LabelBundle+","+LabelBundle+"!="+id); err != nil {
		out.Missing = append(out.Missing, redact.Text("delete earlier bundles: "+err.Error()))
	}
	return out
}

// Load reads a kept bundle back, verified.
func Load(ctx context.Context, cs kubernetes.Interface, namespace string, s Saved) ([]byte, error) {
	if s.Ref == nil {
		return nil, errors.New("the bundle was not kept: " + s.Error)
	}
	return chunks.New(cs, namespace, SecretType).Read(ctx, *s.Ref)
}

// capped is a buffer that refuses to grow past max.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.Len()+len(p) > c.max {
		c.over = true
		return 0, errors.New("bundle too large")
	}
	return c.Buffer.Write(p)
}
