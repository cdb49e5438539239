package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// twoStages is a plan of a gated stage and a stage after it.
func twoStages(gates ...v1alpha1.Gate) *v1alpha1.UpgradePlan {
	p := &v1alpha1.UpgradePlan{ObjectMeta: metav1.ObjectMeta{Name: "demo"}}
	p.Spec.Version = "1.1.0"
	p.Spec.Stages = []v1alpha1.Stage{
		{Name: "control-plane", Steps: []v1alpha1.Step{{Name: "manager"}}, Gates: gates},
		{Name: "data-plane", Steps: []v1alpha1.Step{{Name: "fabric"}}},
	}
	return p
}

func httpGate(url string) v1alpha1.Gate { return v1alpha1.Gate{HTTP: &v1alpha1.HTTPGate{URL: url}} }

// The next stage's backup runs beside the stage's last gate, and the next
// stage's step starts only once both have landed. The gate's verdict is
// recorded first even when the backup lands first, so the record reads
// in the plan's order.
func TestNextStagesBackupRunsBesideTheLastGate(t *testing.T) {
	for _, tc := range []struct {
		name         string
		gate, backup time.Duration
	}{
		{"gate lands first", 10 * time.Millisecond, 150 * time.Millisecond},
		{"backup lands first", 150 * time.Millisecond, 10 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRun(twoStages(httpGate("http://127.0.0.1/0")), "sha256:plan", nil, time.Now())
			var mu sync.Mutex
			started, ended := map[string]time.Time{}, map[string]time.Time{}
			actor := actorFunc(func(_ context.Context, r *v1alpha1.UpgradeRun, a Action) (Outcome, error) {
				key := actionKey(r, a)
				mu.Lock()
				started[key] = time.Now()
				mu.Unlock()
				o := Outcome{OK: true}
				switch {
				case a.Kind == CheckGate:
					time.Sleep(tc.gate)
				case a.Kind == Backup && a.Stage == 1:
					time.Sleep(tc.backup)
					o.Backup = &v1alpha1.BackupRef{Secrets: []string{"b1"}, Objects: 1}
				case a.Kind == Backup:
					o.Backup = &v1alpha1.BackupRef{Secrets: []string{"b0"}, Objects: 1}
				}
				mu.Lock()
				ended[key] = time.Now()
				mu.Unlock()
				return o, nil
			})
			var order []string
			observe := func(e Event) {
				if !e.Begin {
					order = append(order, actionKey(e.Run, e.Action))
				}
			}
			d := &Driver{Actor: actor, Saver: saverFunc(func(context.Context, *v1alpha1.UpgradeRun) error { return nil }), Now: time.Now, Observe: observe}
			if err := d.Drive(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			if r.Status.Phase != v1alpha1.RunSucceeded {
				t.Fatalf("run %s, want Succeeded", r.Status.Phase)
			}
			gate, backup, step := "gate:control-plane/0", "backup:data-plane", "step:fabric"
			if !started[backup].Before(ended[gate]) || !started[gate].Before(ended[backup]) {
				t.Errorf("the gate (%s–%s) and the next stage's backup (%s–%s) did not run side by side",
					started[gate].Format(time.StampMicro), ended[gate].Format(time.StampMicro), started[backup].Format(time.StampMicro), ended[backup].Format(time.StampMicro))
			}
			if started[step].Before(ended[gate]) || started[step].Before(ended[backup]) {
				t.Errorf("the next stage's step started before the gate and its backup had both landed")
			}
			gi, bi := index(order, gate), index(order, backup)
			if gi < 0 || bi < 0 || gi > bi {
				t.Errorf("outcomes recorded in the order %v: want the gate's before the next stage's backup", order)
			}
		})
	}
}

func index(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// The backup ahead is taken only beside a stage's last gate (an earlier
// gate's failure would leave a backup of a stage that never starts), and
// not beside a soak, whose length is the plan's to say.
func TestBackupAheadOnlyBesideALastGateThatIsNoSoak(t *testing.T) {
	soak := v1alpha1.Gate{Soak: &v1alpha1.SoakGate{Duration: metav1.Duration{Duration: time.Minute}}}
	for _, tc := range []struct {
		name  string
		gates []v1alpha1.Gate
		at    int
		ahead bool
	}{
		{"the last gate", []v1alpha1.Gate{httpGate("http://127.0.0.1/0"), httpGate("http://127.0.0.1/1")}, 1, true},
		{"an earlier gate", []v1alpha1.Gate{httpGate("http://127.0.0.1/0"), httpGate("http://127.0.0.1/1")}, 0, false},
		{"a soak", []v1alpha1.Gate{httpGate("http://127.0.0.1/0"), soak}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now()
			r := NewRun(twoStages(tc.gates...), "sha256:plan", nil, now)
			for _, a := range []Action{{Kind: Backup}, {Kind: RunStep}} {
				Begin(r, a, now)
				Complete(r, a, Outcome{OK: true, Backup: &v1alpha1.BackupRef{Secrets: []string{"b"}, Objects: 1}}, now)
			}
			for j := 0; j < tc.at; j++ {
				Begin(r, Action{Kind: CheckGate, Index: j}, now)
				Complete(r, Action{Kind: CheckGate, Index: j}, Outcome{OK: true}, now)
			}
			got := NextActions(r)
			want := []Action{{Kind: CheckGate, Index: tc.at}}
			if tc.ahead {
				want = append(want, Action{Kind: Backup, Stage: 1})
			}
			if len(got) != len(want) || got[0] != want[0] || (len(want) == 2 && got[1] != want[1]) {
				t.Errorf("NextActions = %v, want %v", got, want)
			}
		})
	}
}
