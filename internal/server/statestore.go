package server

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/server/wizard"
	"github.com/upshift-dev/upshift/internal/supportbundle"
)

// StateConfigMap names the ConfigMap, in the runs namespace, that keeps
// the wizard's state.
const StateConfigMap = "upshift-serve-state"

// stateKey is its data key.
const stateKey = "state.json"

// record is the wizard's state as kept: small (names, versions, the
// phases' outcomes), written on the wizard's transitions only; the runs'
// progress is in the runs themselves. It holds no secret value: the
// request's values are the catalog's plan settings, as a PlatformUpgrade
// holds them in its spec.
type record struct {
	// ID names this wizard's upgrade: set when the record is first
	// written, new when it is deleted to start over. The runs its hops
	// start record it (spec.owner.uid), and it resumes only those.
	ID      types.UID      `json:"id,omitempty"`
	State   wizard.State   `json:"state"`
	Request UpgradeRequest `json:"request"`
	Current string         `json:"current,omitempty"`
	// Infra are the hops to run, App the app plan's run (at most one).
	Infra []PlannedRun `json:"infra,omitempty"`
	App   []PlannedRun `json:"app,omitempty"`
	// InfraStatus and AppStatus are the phases' outcomes once ended (the
	// description of a failure); while driving they are computed.
	InfraStatus   Status         `json:"infraStatus"`
	AppStatus     Status         `json:"appStatus"`
	AppPreflights *AppPreflights `json:"appPreflights,omitempty"`
	// HostPreflights are the last host preflights' results.
	HostPreflights *HostPreflights `json:"hostPreflights,omitempty"`
	// SupportBundle is the one the last infrastructure upgrade collected
	// when it ended.
	SupportBundle *supportbundle.Saved `json:"supportBundle,omitempty"`
	// Airgap is the last airgap processing's outcome.
	Airgap *AirgapRecord `json:"airgap,omitempty"`
	// RetryOf is the failed run the next drive of the phase gives a new
	// attempt, and at which attempt it failed: the retry is done once,
	// never again after a restart once the run moved past that attempt.
	RetryOf *RetryOf `json:"retryOf,omitempty"`
	// Commands are the run commands (rollback, retry) the server drives
	// outside the wizard's phases: a server stopped meanwhile leaves them
	// here, and the next one drives them on.
	Commands    []Command `json:"commands,omitempty"`
	LastUpdated time.Time `json:"lastUpdated"`
}

// RetryOf names a run to retry and the attempt that failed.
type RetryOf struct {
	Run     string `json:"run"`
	Attempt int    `json:"attempt"`
}

// Command is a run command the server drives in the background.
type Command struct {
	Run  string `json:"run"`
	Kind string `json:"kind"` // "rollback" or "retry"
}

// The kinds of Command.
const (
	CommandRollback = "rollback"
	CommandRetry    = "retry"
)

// stateStore reads and writes the record with optimistic concurrency:
// two servers (or two requests) that read the same version cannot both
// write.
type stateStore struct {
	cs        kubernetes.Interface
	namespace string
	// started is when the server started: a record never written was
	// last updated then (never Go's zero time, which a client would show).
	started time.Time
}

// load returns the record and the version it was read at; a record never
// written is New.
func (s *stateStore) load(ctx context.Context) (*record, string, error) {
	cm, err := s.cs.CoreV1().ConfigMaps(s.namespace).Get(ctx, StateConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return &record{State: wizard.New, LastUpdated: s.started}, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read the wizard's state (configmap %s/%s): %w", s.namespace, StateConfigMap, err)
	}
	rec := &record{}
	if err := json.Unmarshal([]byte(cm.Data[stateKey]), rec); err != nil || !rec.State.Valid() {
		return nil, "", fmt.Errorf("configmap %s/%s holds no wizard state Upshift can read (%v): delete it to start over", s.namespace, StateConfigMap, err)
	}
	return rec, cm.ResourceVersion, nil
}

// WizardKind is the owner kind of the runs the wizard's hops start.
const WizardKind = "UpgradeWizard"

// owner is what the runs of rec's hops record as their owner.
func (s *stateStore) owner(rec *record) *v1alpha1.RunOwner {
	return &v1alpha1.RunOwner{Kind: WizardKind, Namespace: s.namespace, Name: StateConfigMap, UID: rec.ID}
}

// errStateChanged: another request or server wrote the state since it
// was read.
var errStateChanged = fmt.Errorf("the wizard's state changed meanwhile: read it again (GET /api/linux/upgrade/state)")

// save writes rec if the ConfigMap is still at version (""= absent).
func (s *stateStore) save(ctx context.Context, rec *record, version string) (string, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return "", err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: StateConfigMap, Namespace: s.namespace, ResourceVersion: version,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "upshift", "app.kubernetes.io/component": "serve"}},
		Data: map[string]string{stateKey: string(b)},
	}
	var out *corev1.ConfigMap
	if version == "" {
		out, err = s.cs.CoreV1().ConfigMaps(s.namespace).Create(ctx, cm, metav1.CreateOptions{})
	} else {
		out, err = s.cs.CoreV1().ConfigMaps(s.namespace).Update(ctx, cm, metav1.UpdateOptions{})
	}
	switch {
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
		return "", errStateChanged
	case err != nil:
		return "", fmt.Errorf("write the wizard's state (configmap %s/%s): %w", s.namespace, StateConfigMap, err)
	}
	return out.ResourceVersion, nil
}
