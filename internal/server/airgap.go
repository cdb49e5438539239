package server

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/upshift-dev/upshift/internal/airgap"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/server/wizard"
)

// Airgap answers the airgap routes (embedded-cluster's types.Airgap).
type Airgap struct {
	Status Status `json:"status"`
	Logs   string `json:"logs"`
}

// AirgapRecord is the last airgap processing's outcome, as kept.
type AirgapRecord struct {
	// Bundle says which bundle went to which registry (airgapBundle.id):
	// the infrastructure phase starts when the server's own was processed.
	Bundle string `json:"bundle"`
	Status Status `json:"status"`
	Logs   string `json:"logs"`
}

// airgapBundle is the server's bundle and where it is pushed, with the
// progress of the processing under way (lost with the server: a
// restarted one processes again).
type airgapBundle struct {
	file, caFile string
	registry     airgap.Registry
	id           string

	mu   sync.Mutex
	logs strings.Builder
	desc string
}

// errNoBundle answers a processing the server cannot do.
var errNoBundle = &APIError{StatusCode: http.StatusBadRequest, Message: "this server has no airgap bundle: start it with --airgap-bundle FILE --airgap-registry HOST[:PORT][/PREFIX]"}

// newAirgapBundle checks the airgap flags (both or neither); nil without.
func newAirgapBundle(cfg Config) (*airgapBundle, error) {
	switch {
	case cfg.AirgapBundle == "" && cfg.AirgapRegistry == "" && cfg.AirgapRegistryCAFile == "":
		return nil, nil
	case cfg.AirgapBundle == "":
		return nil, errors.New("--airgap-registry or --airgap-registry-ca-file without --airgap-bundle: give the bundle (--airgap-bundle FILE) and where it goes (--airgap-registry HOST[:PORT][/PREFIX]), or neither")
	case cfg.AirgapRegistry == "":
		return nil, errors.New("--airgap-bundle without --airgap-registry: name the registry the bundle is pushed to (--airgap-registry HOST[:PORT][/PREFIX])")
	}
	abs, err := filepath.Abs(cfg.AirgapBundle)
	if err != nil {
		return nil, fmt.Errorf("--airgap-bundle %s: %w", cfg.AirgapBundle, err)
	}
	st, err := os.Stat(abs)
	if err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("--airgap-bundle %s: not a readable file (%v): give the bundle's .tar or .tar.gz file", cfg.AirgapBundle, err)
	}
	reg, err := airgap.ParseRegistry(cfg.AirgapRegistry, "--airgap-registry")
	if err != nil {
		return nil, err
	}
	if cfg.AirgapRegistryCAFile != "" {
		if _, err := os.ReadFile(cfg.AirgapRegistryCAFile); err != nil {
			return nil, fmt.Errorf("--airgap-registry-ca-file: %w", err)
		}
	}
	return &airgapBundle{file: abs, caFile: cfg.AirgapRegistryCAFile, registry: reg,
		id: fmt.Sprintf("%s (%d bytes, modified %s) to %s", abs, st.Size(), st.ModTime().UTC().Format(time.RFC3339Nano), reg)}, nil
}

// log appends a line to the processing's logs; desc, when not "", is
// its status's description from now on.
func (a *airgapBundle) log(line, desc string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.logs.WriteString(redact.Text(line) + "\n")
	if desc != "" {
		a.desc = desc
	}
}

// progress is the logs and description so far.
func (a *airgapBundle) progress() (string, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return truncateLogs(a.logs.String()), a.desc
}

func (a *airgapBundle) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.logs.Reset()
	a.desc = ""
}

// handleAirgapProcess starts the processing: the wizard moves to
// AirgapProcessing and the bundle is verified and pushed in the background.
func (s *Server) handleAirgapProcess(w http.ResponseWriter, r *http.Request) {
	if s.bundle == nil {
		writeError(w, errNoBundle)
		return
	}
	rec, err := s.transition(r.Context(), wizard.AirgapProcessing, func(rec *record) error {
		rec.Airgap = &AirgapRecord{Bundle: s.bundle.id, Status: Status{State: StateRunning, Description: "Processing the airgap bundle", LastUpdated: time.Now().UTC()}}
		return nil
	})
	if err != nil {
		writeError(w, err)
		return
	}
	s.bundle.reset()
	s.drive(rec)
	writeJSON(w, http.StatusOK, Airgap{Status: rec.Airgap.Status})
}

func (s *Server) handleAirgapStatus(w http.ResponseWriter, r *http.Request) {
	rec, _, err := s.state.load(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.airgapStatus(rec))
}

// airgapStatus is the processing under way, the last one of this
// server's bundle, or Pending.
func (s *Server) airgapStatus(rec *record) Airgap {
	switch {
	case rec.State == wizard.AirgapProcessing && s.bundle != nil:
		logs, desc := s.bundle.progress()
		if desc == "" {
			desc = "Processing the airgap bundle"
		}
		return Airgap{Status: Status{State: StateRunning, Description: desc, LastUpdated: rec.LastUpdated}, Logs: logs}
	case rec.Airgap != nil && (s.bundle == nil || rec.Airgap.Bundle == s.bundle.id):
		return Airgap{Status: rec.Airgap.Status, Logs: rec.Airgap.Logs}
	case s.bundle == nil:
		return Airgap{Status: Status{State: StatePending, Description: "This server has no airgap bundle (--airgap-bundle): nothing to process", LastUpdated: rec.LastUpdated}}
	}
	return Airgap{Status: Status{State: StatePending, Description: "The airgap bundle has not been processed: POST /api/linux/upgrade/airgap/process", LastUpdated: rec.LastUpdated}}
}

// airgapGate refuses (409) the infrastructure phase of a server with a
// bundle until that bundle went to that registry.
func (s *Server) airgapGate(rec *record) error {
	if s.bundle == nil || (rec.Airgap != nil && rec.Airgap.Status.State == StateSucceeded && rec.Airgap.Bundle == s.bundle.id) {
		return nil
	}
	return &APIError{StatusCode: http.StatusConflict, Message: "the airgap bundle is not processed: process it first (POST /api/linux/upgrade/airgap/process), then run the host preflights and start the infrastructure upgrade"}
}

// The airgap processing's drive name (driveOn's what).
const airgapDrive = "the airgap processing"

// driveAirgap verifies and pushes the bundle and records how it ended.
// A server stopped meanwhile leaves AirgapProcessing for the next one,
// which processes again (the pushes are idempotent).
func (s *Server) driveAirgap() {
	s.driveOn(airgapDrive, s.runAirgap, func(to wizard.State, st Status) {
		s.cfg.Log("airgap processing: " + st.Description)
		logs, id := "", ""
		if s.bundle != nil {
			logs, _ = s.bundle.progress()
			id = s.bundle.id
		}
		s.end(to, func(r *record) { r.Airgap = &AirgapRecord{Bundle: id, Status: st, Logs: logs} })
	})
}

// runAirgap unpacks and verifies the whole bundle, then pushes it:
// a corrupt or missing blob fails it before anything is pushed.
func (s *Server) runAirgap() (wizard.State, Status, error) {
	a := s.bundle
	failed := func(err error) (wizard.State, Status, error) {
		if s.ctx.Err() != nil {
			return wizard.AirgapProcessingFailed, Status{}, s.ctx.Err()
		}
		msg := redact.Text(err.Error())
		if a != nil {
			a.log("[airgap] failed: "+msg, "")
		}
		return wizard.AirgapProcessingFailed, Status{State: StateFailed, Description: "Airgap processing failed: " + msg, LastUpdated: time.Now().UTC()}, err
	}
	if a == nil {
		return failed(errNoBundle)
	}
	a.log("[airgap] unpacking "+a.file, "Unpacking the airgap bundle")
	b, err := airgap.Open(s.ctx, a.file, "")
	if err != nil {
		return failed(err)
	}
	defer b.Close()
	a.log(fmt.Sprintf("[airgap] verifying the blobs of %d manifests", len(b.Manifests)), "Verifying the airgap bundle")
	n, err := b.Verify(s.ctx)
	if err != nil {
		return failed(err)
	}
	total := len(b.Manifests)
	a.log(fmt.Sprintf("[airgap] verified %d blobs", n), fmt.Sprintf("Pushing to %s: 0/%d", a.registry, total))
	opts, err := airgap.Options(s.ctx, a.registry, a.caFile)
	if err != nil {
		return failed(err)
	}
	err = b.Push(a.registry, opts, func(i int, m airgap.Manifest) {
		a.log(fmt.Sprintf("[airgap] pushed %s (%d/%d)", m.Ref, i+1, total), fmt.Sprintf("Pushing to %s: %d/%d", a.registry, i+1, total))
	})
	if err != nil {
		return failed(err)
	}
	desc := fmt.Sprintf("Airgap bundle processed: %d pushed to %s", total, a.registry)
	a.log("[airgap] "+desc, "")
	return wizard.AirgapProcessed, Status{State: StateSucceeded, Description: desc, LastUpdated: time.Now().UTC()}, nil
}
