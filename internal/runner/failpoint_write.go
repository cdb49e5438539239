package runner

import (
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"

	"k8s.io/client-go/rest"
)

// KillAfterStepWriteEnv is a test-only failpoint: it names a step, and the
// process SIGKILLs itself as soon as the API server has answered that
// step's first write, before the step's completion can be saved. Tests
// use it to show that every step kind, re-entered after such a crash,
// finishes its job without doing it twice.
const KillAfterStepWriteEnv = "UPSHIFT_TEST_KILL_AFTER_STEP_WRITE"

// runningStep is the step the actor runs now, for the failpoint.
var runningStep atomic.Value // string

// withStepWriteFailpoint wraps cfg when KillAfterStepWriteEnv is set;
// otherwise cfg is returned as it is and nothing is added to any request.
func withStepWriteFailpoint(cfg *rest.Config, runsNamespace string) *rest.Config {
	target := os.Getenv(KillAfterStepWriteEnv)
	if target == "" {
		return cfg
	}
	c := rest.CopyConfig(cfg)
	own := "/namespaces/" + runsNamespace + "/"
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil && resp.StatusCode < 300 && isWrite(r) && !strings.Contains(r.URL.Path, own) &&
				r.URL.Query().Get("dryRun") == "" && runningStep.Load() == target {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the signal is on its way
			}
			return resp, err
		})
	})
	return c
}

func isWrite(r *http.Request) bool {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		// Access reviews are POSTs that change nothing.
		return !strings.Contains(r.URL.Path, "/apis/authorization.k8s.io/")
	}
	return false
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
