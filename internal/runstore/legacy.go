package runstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/chunks"
)

// Records of earlier versions: a Secret "upshift-run-<run>" of type
// SecretType per run. Get and List still read them, LoadSources loads
// their sources, and the first Save of such a run writes it as an
// UpgradeRun and deletes the Secret (migrate.go). Nothing writes them any
// more.
const (
	// SecretType marks a Secret as a run record of an earlier version.
	SecretType = "upshift.dev/run"
	// Their data keys: the plan as written (keySpec), the status without
	// its stages (keyStatus) and each stage's (stageKey); older still,
	// the whole run in KeyRun, and the resolved sources, gzip-compressed,
	// in legacyKeySources.
	keySpec          = "spec.json"
	keyStatus        = "status.json"
	stagePrefix      = "stage-"
	KeyRun           = "run.json"
	legacyKeySources = "sources.json.gz"
	// annotationRunVersion: the Secret's resourceVersion at which its run
	// was last written, when only its sources changed since.
	annotationRunVersion = "upshift.dev/run-resource-version"

	secretPrefix = "upshift-run-"
)

// SecretName is the name of the Secret that kept the run named run.
func SecretName(run string) string { return shorten(secretPrefix+run, maxNameLen) }

func stageKey(i int) string { return fmt.Sprintf("%s%03d.json", stagePrefix, i) }

// legacySecret reads the run's Secret of an earlier version; nil when
// there is none.
func (s *Store) legacySecret(ctx context.Context, name string) (*corev1.Secret, error) {
	var sec *corev1.Secret
	err := retry(ctx, func(int) error {
		var err error
		sec, err = s.cs.CoreV1().Secrets(s.namespace).Get(ctx, SecretName(name), metav1.GetOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get run %s: %w", name, err)
	}
	if sec.Type != SecretType {
		return nil, nil
	}
	return sec, nil
}

// decodeLegacy reads the run that sec keeps for the run named name (any
// name when name is empty). Its spec.plan is the plan as written.
func decodeLegacy(sec *corev1.Secret, name string) (*v1alpha1.UpgradeRun, error) {
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
	run.APIVersion, run.Kind = v1alpha1.APIVersion, v1alpha1.RunKind
	run.Namespace = sec.Namespace
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

// legacySources reads the sources a Secret record of an earlier version
// keeps in itself (an empty map when it has none).
func legacySources(sec *corev1.Secret) (map[string][]byte, error) {
	gz, ok := sec.Data[legacyKeySources]
	if !ok {
		return map[string][]byte{}, nil
	}
	raw, err := chunks.Unpack(gz)
	if err != nil {
		return nil, fmt.Errorf("load sources from secret %s/%s: %w", sec.Namespace, sec.Name, err)
	}
	st, err := decodeSources(raw)
	if err != nil {
		return nil, fmt.Errorf("load sources from secret %s/%s: %w", sec.Namespace, sec.Name, err)
	}
	return st.Files, nil
}
