package runstore

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// List returns every run in the namespace, oldest first: by
// status.startedAt (a run not started yet counts from its creation), then
// by creation time, then by name.
func (s *Store) List(ctx context.Context) ([]v1alpha1.UpgradeRun, error) {
	var list *corev1.SecretList
	err := retry(ctx, func(int) error {
		var err error
		list, err = s.cs.CoreV1().Secrets(s.namespace).List(ctx, metav1.ListOptions{
			LabelSelector: LabelRun,
			// Backup chunks carry the same label: do not download them.
			FieldSelector: "type=" + string(SecretType),
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list runs in %s: %w", s.namespace, err)
	}
	runs := make([]v1alpha1.UpgradeRun, 0, len(list.Items))
	for i := range list.Items {
		sec := &list.Items[i]
		if sec.Type != SecretType {
			continue // a foreign Secret that happens to carry the label
		}
		run, err := decodeRun(sec, "")
		if err != nil {
			return nil, fmt.Errorf("list runs in %s: %w", s.namespace, err)
		}
		runs = append(runs, *run)
	}
	sortOldestFirst(runs)
	return runs, nil
}

func sortOldestFirst(runs []v1alpha1.UpgradeRun) {
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := &runs[i], &runs[j]
		if sa, sb := startOf(a), startOf(b); !sa.Equal(sb) {
			return sa.Before(sb)
		}
		if ca, cb := a.CreationTimestamp.Time, b.CreationTimestamp.Time; !ca.Equal(cb) {
			return ca.Before(cb)
		}
		return a.Name < b.Name
	})
}

func startOf(r *v1alpha1.UpgradeRun) time.Time {
	if r.Status.StartedAt != nil {
		return r.Status.StartedAt.Time
	}
	return r.CreationTimestamp.Time
}
