package controller

import (
	"maps"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// answered remembers, by object UID, the action annotations this process
// answered and saved as handled in the object's status. A reconcile that
// follows the status patch at once (requeued to answer the next request)
// can read the object from a cache that has not seen the patch yet, and
// would answer the same request again: an approval twice, the second
// refused as "already approved". Only this process writes HandledActions,
// so what it saved is never older than what its cache shows.
type answered struct {
	mu sync.Mutex
	m  map[types.UID]map[string]string
}

// saved records the handled actions a status patch of the object saved.
func (a *answered) saved(uid types.UID, handled map[string]string) {
	if len(handled) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[types.UID]map[string]string{}
	}
	a.m[uid] = maps.Clone(handled)
}

// with is the object's handled actions as its status shows them, and as
// this process last saved them where the status lags.
func (a *answered) with(uid types.UID, fromStatus map[string]string) map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	saved := a.m[uid]
	if len(saved) == 0 {
		return fromStatus
	}
	out := maps.Clone(fromStatus)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, saved)
	return out
}
