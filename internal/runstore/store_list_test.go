package runstore

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestListOldestFirst(t *testing.T) {
	t.Parallel()
	s, cs, ctx := newStore(t)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, r := range []struct {
		name    string
		started time.Duration
	}{{"third", 30 * time.Minute}, {"first", 0}, {"second", 10 * time.Minute}} {
		if err := s.Save(ctx, newRun(r.name, "1.0.0", base.Add(r.started))); err != nil {
			t.Fatal(err)
		}
	}
	pending := newRun("pending", "1.0.0", time.Now())
	pending.Status.StartedAt = nil // counts from its creation: now, the newest
	if err := s.Save(ctx, pending); err != nil {
		t.Fatal(err)
	}
	// A foreign Secret with the label is no run; a record of an earlier
	// version is.
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "not-a-run", Namespace: s.Namespace(), Labels: map[string]string{LabelRun: "x"}}, StringData: map[string]string{"k": "v"}}
	if _, err := cs.CoreV1().Secrets(s.Namespace()).Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	writeLegacy(t, ctx, cs, s.Namespace(), newRun("older", "0.9.0", base.Add(20*time.Minute)))
	runs, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range runs {
		names = append(names, r.Name)
		if r.ResourceVersion == "" {
			t.Errorf("run %s listed without ResourceVersion", r.Name)
		}
	}
	if got := strings.Join(names, " "); got != "first second older third pending" {
		t.Fatalf("List = %s, want first second older third pending", got)
	}
	// A listed run saves like a read one.
	runs[0].Status.Message = "listed"
	if err := s.Save(ctx, &runs[0]); err != nil {
		t.Fatalf("save of a listed run: %v", err)
	}
}
