package lease

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// writeSkewedLease writes, as a holder whose clock is off by skew, a
// Lease renewed now that lasts seconds.
func writeSkewedLease(t *testing.T, f fixture, name string, skew time.Duration, seconds int32) {
	t.Helper()
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}}
	stealLease(l, holderIdentity(bob(), "0b"), seconds)
	skewed := metav1.NewMicroTime(time.Now().Add(skew))
	l.Spec.RenewTime, l.Spec.AcquireTime = &skewed, &skewed
	if _, err := f.cs.CoordinationV1().Leases(f.ns).Create(f.ctx, l, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A holder whose clock runs an hour ahead renews once and dies: its lease
// must count as expired one duration (+1 s) of server time later, not in
// an hour.
func TestHolderExpiryIgnoresAClockAhead(t *testing.T) {
	t.Parallel()
	f := setup(t)
	const seconds = 2
	writeSkewedLease(t, f, "ahead", time.Hour, seconds)
	written := time.Now()
	id, valid, err := Holder(f.ctx, f.cs, f.ns, "ahead")
	if err != nil || !valid || id != bob() {
		t.Fatalf("Holder right after the renewal = %v, %v, %v; want bob, valid", id, valid, err)
	}
	// Past duration + 1 s (the server's timestamps have whole seconds)
	// with a margin of one more second for the two truncations.
	time.Sleep(time.Until(written.Add(seconds*time.Second + 2*time.Second)))
	if _, valid, err := Holder(f.ctx, f.cs, f.ns, "ahead"); err != nil || valid {
		t.Fatalf("Holder %s after the last renewal of a %ds lease = valid %v, %v; want expired", time.Since(written).Round(time.Millisecond), seconds, valid, err)
	}
}

// A holder whose clock runs an hour behind renews just now: its lease is
// valid, although its renewTime lies an hour in the past.
func TestHolderValidityIgnoresAClockBehind(t *testing.T) {
	t.Parallel()
	f := setup(t)
	writeSkewedLease(t, f, "behind", -time.Hour, 10)
	id, valid, err := Holder(f.ctx, f.cs, f.ns, "behind")
	if err != nil || !valid || id != bob() {
		t.Fatalf("Holder right after the renewal = %v, %v, %v; want bob, valid", id, valid, err)
	}
}

// What Holder relies on, checked on a real API server: client-go's
// renewals move the time of the managedFields entry that owns renewTime,
// so a lease renewed every 500 ms stays valid over many durations, and the
// server's record of the last renewal is never more than a second or two
// old.
func TestRenewalsMoveTheServersRecord(t *testing.T) {
	t.Parallel()
	f := setup(t)
	h, err := Acquire(f.ctx, f.cs, f.config(alice()))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	seen := map[time.Time]bool{}
	for end := time.Now().Add(3 * testDuration); time.Now().Before(end); time.Sleep(testRenew / 2) {
		now, err := serverNow(f.ctx, f.cs)
		if err != nil {
			t.Fatal(err)
		}
		l, err := f.cs.CoordinationV1().Leases(f.ns).Get(f.ctx, DefaultName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		renewed, ok := renewedAt(l)
		if !ok {
			t.Fatalf("no managedFields entry owns spec.renewTime: %+v", l.ManagedFields)
		}
		if age := now.Sub(renewed); age > 2*time.Second {
			t.Fatalf("the server recorded the last renewal %s before its Date (renewing every %s)", age, testRenew)
		}
		seen[renewed] = true
		if !validAt(l, now) {
			t.Fatalf("lease renewed every %s not valid at server time %s: %+v", testRenew, now, l.ManagedFields)
		}
	}
	if len(seen) < 4 {
		t.Errorf("over %s the record of the last renewal took %d value(s), want it to move every second", 3*testDuration, len(seen))
	}
}

// skewedLease is a Lease the server stored at stored (the managedFields
// entry of its holder's Update) whose holder wrote renewTime by its own
// clock.
func skewedLease(stored, renewTime time.Time, seconds int32) *coordinationv1.Lease {
	rt := metav1.NewMicroTime(renewTime)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate, Time: ptr.To(metav1.NewTime(stored.Add(time.Hour))),
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{"f:team":{}}}}`)}},
			{Manager: "upshift", Operation: metav1.ManagedFieldsOperationUpdate, Time: ptr.To(metav1.NewTime(stored)),
				FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:acquireTime":{},"f:holderIdentity":{},"f:leaseDurationSeconds":{},"f:renewTime":{}}}`)}},
		}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("x"), RenewTime: &rt, LeaseDurationSeconds: ptr.To(seconds)},
	}
}

// Validity counts server seconds from the stored renewal, whatever the
// holder wrote into renewTime, and errs on the side of valid by the one
// second the server's timestamps lack.
func TestValidAtUsesTheServersRecord(t *testing.T) {
	stored := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		renewTime time.Time // what the holder wrote
		now       time.Time // the server's Date
		want      bool
	}{
		{"just renewed", stored, stored, true},
		{"one duration later", stored, stored.Add(10 * time.Second), true},
		{"one second past: could be 10.01 s", stored, stored.Add(11 * time.Second), false},
		{"holder's clock an hour ahead, unrenewed", stored.Add(time.Hour), stored.Add(11 * time.Second), false},
		{"holder's clock an hour behind, just renewed", stored.Add(-time.Hour), stored.Add(time.Second), true},
		{"Date within the renewal's second", stored, stored.Add(999 * time.Millisecond), true},
	}
	for _, tt := range tests {
		if got := validAt(skewedLease(stored, tt.renewTime, 10), tt.now); got != tt.want {
			t.Errorf("%s: valid = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Without a server record of the renewal, renewTime is compared with the
// server's clock.
func TestValidAtWithoutManagedFields(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	l := skewedLease(now, now.Add(-5*time.Second), 10)
	l.ManagedFields = nil
	if !validAt(l, now) {
		t.Error("renewed 5 s ago with a 10 s duration: not valid")
	}
	if validAt(l, now.Add(6*time.Second)) {
		t.Error("renewed 11 s ago with a 10 s duration: valid")
	}
}

// Holder reads a Lease that another tool wrote without failing.
func TestHolderOfForeignLease(t *testing.T) {
	t.Parallel()
	f := setup(t)
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: f.ns}}
	stealLease(l, "kube-scheduler_abc", 15)
	if _, err := f.cs.CoordinationV1().Leases(f.ns).Create(f.ctx, l, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	id, valid, err := Holder(f.ctx, f.cs, f.ns, "other")
	if err != nil || !valid || id.String() != "kube-scheduler_abc" {
		t.Fatalf("Holder = %v, %v, %v", id, valid, err)
	}
}
