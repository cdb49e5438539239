package runstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/chunks"
)

var (
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	labelValueRE = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
)

func TestNames(t *testing.T) {
	long := strings.Repeat("a", 240) + ".b-" + strings.Repeat("c", 10)
	tests := []struct {
		run, secret, label string
	}{
		{"demo-1.1.0", "upshift-run-demo-1.1.0", "demo-1.1.0"},
		{long, "", ""},
		{strings.Repeat("x", 60) + ".-" + strings.Repeat("y", 60), "", ""}, // a cut before "-hash" must not end in ".-"
		{strings.Repeat("q", 240) + "." + strings.Repeat("r", 20), "", ""},
	}
	for _, tt := range tests {
		sec, lab := SecretName(tt.run), labelValue(tt.run)
		if tt.secret != "" && sec != tt.secret {
			t.Errorf("SecretName(%q) = %q, want %q", tt.run, sec, tt.secret)
		}
		if tt.label != "" && lab != tt.label {
			t.Errorf("labelValue(%q) = %q, want %q", tt.run, lab, tt.label)
		}
		if len(sec) > maxNameLen || (dnsSubdomain.MatchString(tt.run) && !dnsSubdomain.MatchString(sec)) {
			t.Errorf("SecretName(%q) = %q (%d chars) is not a valid Secret name", tt.run, sec, len(sec))
		}
		if len(lab) > maxLabelLen || !labelValueRE.MatchString(lab) {
			t.Errorf("labelValue(%q) = %q (%d chars) is not a valid label value", tt.run, lab, len(lab))
		}
	}
	// Long names that share a prefix keep distinct Secrets.
	a, b := strings.Repeat("p", 300)+"a", strings.Repeat("p", 300)+"b"
	if SecretName(a) == SecretName(b) || labelValue(a) == labelValue(b) {
		t.Errorf("long names with a shared prefix collide: %q", SecretName(a))
	}
}

func TestSourcesEncoding(t *testing.T) {
	in := map[string][]byte{
		"spec.stages[0].steps[0].crds.source":      []byte(strings.Repeat("apiVersion: v1\nkind: ConfigMap\n", 200)),
		"spec.stages[1].steps[0].manifests.source": []byte("kind: Secret\nstringData:\n  password: hunter2\n"),
		"spec.stages[2].steps[0].helm.chart":       {0x1f, 0x8b, 0xff, 0x00, 0xfe},
		"empty":                                    {},
	}
	plan := &v1alpha1.UpgradePlanSpec{Version: "1.2.0"}
	raw, err := encodeSources(plan, in)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := chunks.Pack(raw)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(gz, []byte("hunter2")) {
		t.Error("compressed sources show a secret in clear")
	}
	out, err := decodeSources(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Files) != len(in) || out.Plan == nil || out.Plan.Version != "1.2.0" {
		t.Fatalf("got %d sources (want %d) and plan %+v", len(out.Files), len(in), out.Plan)
	}
	for k, v := range in {
		if !bytes.Equal(out.Files[k], v) {
			t.Errorf("source %s = %q, want %q", k, out.Files[k], v)
		}
	}
	if _, err := decodeSources([]byte("not json")); err == nil {
		t.Error("decodeSources of garbage: no error")
	}
}

func TestSortOldestFirst(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(m int) *metav1.MicroTime {
		t := metav1.NewMicroTime(base.Add(time.Duration(m) * time.Minute))
		return &t
	}
	run := func(name string, started *metav1.MicroTime, created int) v1alpha1.UpgradeRun {
		r := v1alpha1.UpgradeRun{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at(created).Time)}}
		r.Status.StartedAt = started
		return r
	}
	runs := []v1alpha1.UpgradeRun{
		run("late", at(30), 1),
		run("pending", nil, 20), // counts from its creation
		run("early", at(10), 25),
		run("tie-b", at(40), 2),
		run("tie-a", at(40), 2),
		run("tie-created-first", at(40), 1),
	}
	sortOldestFirst(runs)
	var got []string
	for _, r := range runs {
		got = append(got, r.Name)
	}
	want := "early pending late tie-created-first tie-a tie-b"
	if strings.Join(got, " ") != want {
		t.Fatalf("order = %s, want %s", strings.Join(got, " "), want)
	}
}

func TestRetriable(t *testing.T) {
	gr := schema.GroupResource{Resource: "secrets"}
	tests := []struct {
		err  error
		want bool
	}{
		{apierrors.NewServerTimeout(gr, "get", 1), true},
		{apierrors.NewTooManyRequests("slow down", 1), true},
		{apierrors.NewInternalError(errors.New("etcd")), true},
		{fmt.Errorf("dial tcp 127.0.0.1:6443: connect: connection refused"), true},
		{apierrors.NewConflict(gr, "x", errors.New("stale")), false},
		{apierrors.NewAlreadyExists(gr, "x"), false},
		{apierrors.NewNotFound(gr, "x"), false},
		{apierrors.NewForbidden(gr, "x", errors.New("rbac")), false},
		{apierrors.NewUnauthorized("who"), false},
		{context.Canceled, false},
		{fmt.Errorf("get: %w", context.DeadlineExceeded), false},
	}
	for _, tt := range tests {
		if got := retriable(tt.err); got != tt.want {
			t.Errorf("retriable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
