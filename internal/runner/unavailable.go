package runner

import "errors"

// ErrAPIUnavailable: the API server could not be reached after the
// executors' own retries. The run stops as saved (nothing is rolled back
// for it: an outage says nothing about the upgrade) and `apply` resumes
// it. An API server that answers, even with a refusal or a 5xx, is not
// unavailable: that fails the step (kube.Unreachable draws the line).
var ErrAPIUnavailable = errors.New("the API server is unavailable")
