package runstore

import (
	"bytes"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// written remembers, per run, the keys of the record as this Store last
// read or wrote them and at which resourceVersion, so a save can send only
// the keys a transition changed. A save at another version (the run was
// read elsewhere, or written by another process) sends every key.
type written struct {
	mu   sync.Mutex
	runs map[string]snapshot
}

type snapshot struct {
	version string
	keys    map[string][]byte
}

func (w *written) remember(run, version string, keys map[string][]byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runs == nil {
		w.runs = map[string]snapshot{}
	}
	w.runs[run] = snapshot{version: version, keys: keys}
}

// rememberRead records a record's keys as read.
func (w *written) rememberRead(run string, sec *corev1.Secret) {
	if _, ok := sec.Data[keySpec]; !ok {
		w.forget(run) // a record of an earlier version: the next save rewrites it whole
		return
	}
	keys := map[string][]byte{}
	for k, v := range sec.Data {
		if k == keySpec || k == keyStatus || strings.HasPrefix(k, stagePrefix) {
			keys[k] = v
		}
	}
	w.remember(run, runVersion(sec), keys)
}

func (w *written) forget(run string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.runs, run)
}

// changed is what a save of keys at version must send: the keys that
// differ from what is known to be stored at that version, and the removal
// of stored stage keys beyond the run's; or, when nothing is known at that
// version, every key and the removal of a legacy record's whole-run key.
func (w *written) changed(run, version string, keys map[string][]byte) map[string]any {
	w.mu.Lock()
	last, ok := w.runs[run]
	w.mu.Unlock()
	out := map[string]any{}
	if !ok || last.version != version {
		for k, v := range keys {
			out[k] = v
		}
		out[KeyRun] = nil
		return out
	}
	for k, v := range keys {
		if !bytes.Equal(last.keys[k], v) {
			out[k] = v
		}
	}
	for k := range last.keys {
		if _, still := keys[k]; !still {
			out[k] = nil
		}
	}
	return out
}
