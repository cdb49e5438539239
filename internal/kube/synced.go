package kube

import (
	"context"
	"time"
)

// syncPoll is how often WaitSynced checks an informer. client-go's
// cache.WaitForCacheSync checks every 100 ms, and its first check comes
// before the initial list has been read: every wait would pay up to
// 100 ms after the list arrived. The check is a lock and a flag.
const syncPoll = 2 * time.Millisecond

// WaitSynced waits until hasSynced is true (an informer has delivered its
// initial list) or ctx ends; it reports which.
func WaitSynced(ctx context.Context, hasSynced func() bool) bool {
	t := time.NewTicker(syncPoll)
	defer t.Stop()
	for !hasSynced() {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return true
}
