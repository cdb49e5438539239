package runstore

import (
	"context"
	"fmt"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// List returns every run in the namespace, oldest first: by
// status.startedAt (a run not started yet counts from its creation), then
// by creation time, then by name. Records of earlier versions are listed
// with the rest; on a cluster without the UpgradeRun CRD only they are.
//
// Like Get, it remembers each run's status as read, so a Save of a run
// from the list sends only what changed. The two lists are asked side by
// side: apply waits for them before it writes anything.
func (s *Store) List(ctx context.Context) ([]v1alpha1.UpgradeRun, error) {
	var (
		list   v1alpha1.UpgradeRunList
		legacy []v1alpha1.UpgradeRun
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		err := retry(gctx, func(int) error {
			return s.runs.Get().Namespace(s.namespace).Resource(Resource).Do(gctx).Into(&list)
		})
		if err != nil && !noResource(err) {
			return fmt.Errorf("list runs in %s: %w", s.namespace, err)
		}
		return nil
	})
	g.Go(func() error {
		var err error
		legacy, err = s.listLegacy(gctx)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	runs := make([]v1alpha1.UpgradeRun, 0, len(list.Items))
	seen := map[string]bool{}
	for i := range list.Items {
		s.rememberRead(&list.Items[i])
		r := fromResource(&list.Items[i])
		seen[r.Name] = true
		runs = append(runs, *r)
	}
	for _, r := range legacy {
		if !seen[r.Name] { // a migration stopped before it deleted the Secret
			runs = append(runs, r)
		}
	}
	sortOldestFirst(runs)
	return runs, nil
}

// listLegacy lists the records of earlier versions.
//
// They come from the API server's watch cache (resourceVersion 0), not
// from a consistent read: on a namespace whose Secrets changed less
// recently than anything else, a consistent list waits for the cache to
// hear from etcd that it is current, 50-70 ms on every apply measured
// with the demo (test/bench -requests). No version of Upshift since the
// UpgradeRun writes these records. Only an earlier one could, before it
// released the lease this process then took; the cache follows etcd
// within milliseconds (a lagging API server of several, seconds), and an
// older binary's run starting in that moment is not worth a wait on
// every apply.
func (s *Store) listLegacy(ctx context.Context) ([]v1alpha1.UpgradeRun, error) {
	var list *corev1.SecretList
	err := retry(ctx, func(int) error {
		var err error
		list, err = s.cs.CoreV1().Secrets(s.namespace).List(ctx, metav1.ListOptions{
			LabelSelector: LabelRun,
			// Backup and source chunks carry the same label: do not
			// download them.
			FieldSelector:   "type=" + string(SecretType),
			ResourceVersion: "0",
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list runs in %s: %w", s.namespace, err)
	}
	var runs []v1alpha1.UpgradeRun
	for i := range list.Items {
		sec := &list.Items[i]
		if sec.Type != SecretType {
			continue // a foreign Secret that happens to carry the label
		}
		run, err := decodeLegacy(sec, "")
		if err != nil {
			return nil, fmt.Errorf("list runs in %s: %w", s.namespace, err)
		}
		runs = append(runs, *run)
	}
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
