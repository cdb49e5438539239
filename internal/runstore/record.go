package runstore

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// The record's data keys. The plan is written once (keySpec); the run's
// status without its stages (keyStatus) and each stage's status
// (stageKey) are keys of their own, so a save patches only what the
// transition changed: the run's counters and one or two stages, not the
// whole plan. Records of earlier versions keep the whole run in KeyRun.
const (
	keySpec     = "spec.json"
	keyStatus   = "status.json"
	stagePrefix = "stage-"
)

func stageKey(i int) string { return fmt.Sprintf("%s%03d.json", stagePrefix, i) }

// encodeRun is the run as stored: named, typed, and without the server
// metadata the Secret owns (a stored resourceVersion would be stale the
// moment it is written), split into its keys.
func encodeRun(run *v1alpha1.UpgradeRun) (map[string][]byte, error) {
	c := *run
	c.ObjectMeta = *run.ObjectMeta.DeepCopy()
	c.ResourceVersion = ""
	c.CreationTimestamp = metav1.Time{}
	c.ManagedFields = nil
	if c.APIVersion == "" {
		c.APIVersion = v1alpha1.APIVersion
	}
	if c.Kind == "" {
		c.Kind = v1alpha1.RunKind
	}
	status := c.Status
	status.Stages = nil
	c.Status = v1alpha1.RunStatus{}
	out := map[string][]byte{}
	var err error
	if out[keySpec], err = json.Marshal(&c); err != nil {
		return nil, fmt.Errorf("encode run %s: %w", run.Name, err)
	}
	if out[keyStatus], err = json.Marshal(&status); err != nil {
		return nil, fmt.Errorf("encode run %s: %w", run.Name, err)
	}
	for i := range run.Status.Stages {
		if out[stageKey(i)], err = json.Marshal(&run.Status.Stages[i]); err != nil {
			return nil, fmt.Errorf("encode run %s: %w", run.Name, err)
		}
	}
	return out, nil
}

// decodeRun reads the run that sec keeps for the run named name (any
// name when name is empty).
func decodeRun(sec *corev1.Secret, name string) (*v1alpha1.UpgradeRun, error) {
	var run v1alpha1.UpgradeRun
	where := func(key string) string { return fmt.Sprintf("%s of secret %s/%s", key, sec.Namespace, sec.Name) }
	if raw, ok := sec.Data[keySpec]; ok {
		if err := json.Unmarshal(raw, &run); err != nil {
			return nil, fmt.Errorf("decode %s: %w", where(keySpec), err)
		}
		if err := json.Unmarshal(sec.Data[keyStatus], &run.Status); err != nil {
			return nil, fmt.Errorf("decode %s: %w", where(keyStatus), err)
		}
		var keys []string
		for k := range sec.Data {
			if strings.HasPrefix(k, stagePrefix) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys) // stage-000.json, stage-001.json, …
		run.Status.Stages = make([]v1alpha1.StageStatus, len(keys))
		for i, k := range keys {
			if k != stageKey(i) {
				return nil, fmt.Errorf("decode secret %s/%s: %s found where %s belongs", sec.Namespace, sec.Name, k, stageKey(i))
			}
			if err := json.Unmarshal(sec.Data[k], &run.Status.Stages[i]); err != nil {
				return nil, fmt.Errorf("decode %s: %w", where(k), err)
			}
		}
		if len(run.Status.Stages) == 0 {
			run.Status.Stages = nil
		}
	} else {
		raw, ok := sec.Data[KeyRun]
		if !ok {
			return nil, fmt.Errorf("secret %s/%s has neither %s nor %s", sec.Namespace, sec.Name, keySpec, KeyRun)
		}
		if err := json.Unmarshal(raw, &run); err != nil {
			return nil, fmt.Errorf("decode %s: %w", where(KeyRun), err)
		}
	}
	if name != "" && run.Name != name {
		// Two long names whose shortened Secret names collide.
		return nil, fmt.Errorf("secret %s/%s keeps run %q, not %q", sec.Namespace, sec.Name, run.Name, name)
	}
	run.ResourceVersion = runVersion(sec)
	run.CreationTimestamp = sec.CreationTimestamp
	return &run, nil
}

// runVersion is the Secret's resourceVersion at which its run was last
// written: the version a reader of the run holds.
func runVersion(sec *corev1.Secret) string {
	if v := sec.Annotations[annotationRunVersion]; v != "" {
		return v
	}
	return sec.ResourceVersion
}

// annotationsFor mirrors what `kubectl describe` should show: the phase and
// the target version, never content.
func annotationsFor(run *v1alpha1.UpgradeRun) map[string]string {
	return map[string]string{
		AnnotationPhase:       string(run.Status.Phase),
		AnnotationPlanVersion: run.Spec.Plan.Version,
	}
}
