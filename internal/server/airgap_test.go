package server

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/server/wizard"
)

// The airgap flags come both or neither; each refusal names its flag.
func TestAirgapFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bundle.tar")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		says string
	}{
		{Config{AirgapBundle: file}, "--airgap-bundle without --airgap-registry"},
		{Config{AirgapRegistry: "reg:5000"}, "without --airgap-bundle"},
		{Config{AirgapRegistryCAFile: "ca.pem"}, "without --airgap-bundle"},
		{Config{AirgapBundle: file + ".absent", AirgapRegistry: "reg:5000"}, "--airgap-bundle " + file + ".absent: not a readable file"},
		{Config{AirgapBundle: file, AirgapRegistry: "https://reg:5000"}, "--airgap-registry \"https://reg:5000\""},
		{Config{AirgapBundle: file, AirgapRegistry: "reg:5000", AirgapRegistryCAFile: file + ".absent"}, "--airgap-registry-ca-file"},
	} {
		if _, err := newAirgapBundle(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%+v: %v, want it to say %q", tc.cfg, err, tc.says)
		}
	}
	if b, err := newAirgapBundle(Config{}); b != nil || err != nil {
		t.Errorf("no flags: %v %v", b, err)
	}
	b, err := newAirgapBundle(Config{AirgapBundle: file, AirgapRegistry: "reg:5000/mirror"})
	if err != nil || !strings.Contains(b.id, file) || !strings.Contains(b.id, "reg:5000/mirror") {
		t.Errorf("both: %+v %v", b, err)
	}
}

// The infrastructure phase of an airgap server waits until its own
// bundle went to its own registry; a server without a bundle never
// waits.
func TestAirgapGate(t *testing.T) {
	s := &Server{bundle: &airgapBundle{id: "b to r"}}
	processed := func(id string, st State) *record {
		return &record{State: wizard.AirgapProcessed, Airgap: &AirgapRecord{Bundle: id, Status: Status{State: st}}}
	}
	for _, tc := range []struct {
		name string
		rec  *record
		ok   bool
	}{
		{"never processed", &record{State: wizard.New}, false},
		{"processed", processed("b to r", StateSucceeded), true},
		{"processing failed", processed("b to r", StateFailed), false},
		{"another bundle or registry", processed("other to r", StateSucceeded), false},
	} {
		err := s.airgapGate(tc.rec)
		var ae *APIError
		if tc.ok != (err == nil) || (err != nil && (!errors.As(err, &ae) || ae.StatusCode != http.StatusConflict || !strings.Contains(ae.Message, "POST /api/linux/upgrade/airgap/process"))) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if st := s.airgapStatus(tc.rec); tc.name == "another bundle or registry" && st.Status.State != StatePending {
			t.Errorf("%s: the status of another bundle's processing: %+v", tc.name, st)
		}
	}
	if err := (&Server{}).airgapGate(&record{State: wizard.New}); err != nil {
		t.Errorf("no bundle: %v", err)
	}
}
