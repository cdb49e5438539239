package runstore

import "sync"

// written remembers, per run, its status as this Store last read or wrote
// it and at which resourceVersion, so a save can send only what a
// transition changed. A save at another version (the run was
// read elsewhere, or written by another process) sends the whole status.
type written struct {
	mu   sync.Mutex
	runs map[string]snapshot
}

type snapshot struct {
	version string
	status  storedStatus
}

func (w *written) remember(run, version string, st storedStatus) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runs == nil {
		w.runs = map[string]snapshot{}
	}
	w.runs[run] = snapshot{version: version, status: st}
}

func (w *written) forget(run string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.runs, run)
}

// at is the status known to be stored at version, or nil.
func (w *written) at(run, version string) *storedStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.runs[run]
	if !ok || last.version != version {
		return nil
	}
	return &last.status
}
