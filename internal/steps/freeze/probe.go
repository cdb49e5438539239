package freeze

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/internal/kube"
)

// probeEvery is how often the probe asks: the API server's policy
// informer usually takes well under a second.
const probeEvery = 100 * time.Millisecond

// await asks the probe until the API server denies it with this freeze's
// policy and binding (enforced true) or allows it (enforced false).
func (e *Executor) await(ctx context.Context, enforced bool) error {
	if e.runs.Client == nil {
		return errors.New("no client for the runs namespace to probe the freeze with")
	}
	want := "to enforce"
	if !enforced {
		want = "to stop enforcing"
	}
	var last error
	for {
		denied, err := e.probe(ctx)
		switch {
		case err == nil && denied == enforced:
			return nil
		case err == nil:
			last = fmt.Errorf("the probe was %s", map[bool]string{true: "still denied", false: "not denied yet"}[denied])
		case apierrors.IsForbidden(err):
			return fmt.Errorf("the freeze proves itself by a dry-run create of Secret %s/%s, which these credentials may not do: %w; grant create on secrets in %s (the driver writes its backups there)", e.runs.Namespace, e.name, err, e.runs.Namespace)
		case !kube.Transient(err):
			return fmt.Errorf("probe the freeze: %w", err)
		default:
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waited for the API server %s ValidatingAdmissionPolicy %s: %w (last: %v)", want, e.name, context.Cause(ctx), last)
		case <-time.After(probeEvery):
		}
	}
}

// probe dry-runs the create of the probe Secret and says whether this
// freeze denied it. Admission runs before storage, so a Secret of that
// name that exists (AlreadyExists) still says the freeze let it through.
func (e *Executor) probe(ctx context.Context) (denied bool, err error) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: e.name, Namespace: e.runs.Namespace}}
	_, err = e.runs.Client.CoreV1().Secrets(e.runs.Namespace).Create(ctx, s, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		return false, nil
	case apierrors.IsForbidden(err) && e.deniedBy(err):
		return true, nil
	}
	return false, err
}

// deniedBy tells this freeze's denial from any other refusal: the API
// server names the policy and the binding ("ValidatingAdmissionPolicy 'p'
// with binding 'b' denied request: ...").
func (e *Executor) deniedBy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "ValidatingAdmissionPolicy '"+e.name+"'") && strings.Contains(msg, "binding '"+e.name+"'")
}
