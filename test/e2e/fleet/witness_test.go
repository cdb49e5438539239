package fleet_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/local"
)

// witness is the local plugin with a record of every operation it was
// asked to start, so the test can say none was started twice.
type witness struct {
	*local.Plugin
	mu    sync.Mutex
	calls map[string]int // "cluster action [pool] version" → times
	// beforeServiceIn, when set, sees each service in before the plugin
	// makes it.
	beforeServiceIn func(id string)
}

func newWitness(p *local.Plugin) *witness { return &witness{Plugin: p, calls: map[string]int{}} }

func (w *witness) note(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls[fmt.Sprintf(format, args...)]++
}

// times says how often a call was made.
func (w *witness) times(format string, args ...any) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls[fmt.Sprintf(format, args...)]
}

func (w *witness) ServiceIn(ctx context.Context, id string) (pluginsdk.Operation, error) {
	w.note("%s ServiceIn", id)
	w.mu.Lock()
	before := w.beforeServiceIn
	w.mu.Unlock()
	if before != nil {
		before(id)
	}
	return w.Plugin.ServiceIn(ctx, id)
}

func (w *witness) ServiceOut(ctx context.Context, id string) (pluginsdk.Operation, error) {
	w.note("%s ServiceOut", id)
	return w.Plugin.ServiceOut(ctx, id)
}

func (w *witness) UpgradeMaster(ctx context.Context, id, version string) (pluginsdk.Operation, error) {
	w.note("%s UpgradeMaster %s", id, version)
	return w.Plugin.UpgradeMaster(ctx, id, version)
}

func (w *witness) UpgradeNodePool(ctx context.Context, id, pool, version string) (pluginsdk.Operation, error) {
	w.note("%s UpgradeNodePool %s %s", id, pool, version)
	return w.Plugin.UpgradeNodePool(ctx, id, pool, version)
}

// router samples which clusters serve, as a load balancer in front of the
// fleet would, and keeps the fewest seen serving at once; and in each
// member, the fewest web pods Ready.
type router struct {
	p       *local.Plugin
	ids     []string
	members map[string]kubernetes.Interface
	mu      sync.Mutex
	fewest  int
	web     map[string]int
	stop    chan struct{}
	done    chan struct{}
}

func startRouter(p *local.Plugin, members map[string]kubernetes.Interface, ids []string) *router {
	r := &router{p: p, ids: ids, members: members, fewest: len(ids), web: map[string]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	for _, id := range ids {
		r.web[id] = 3
	}
	go func() {
		defer close(r.done)
		for {
			select {
			case <-r.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			serving := 0
			for _, id := range r.ids {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				s, err := r.p.GetClusterStatus(ctx, id)
				cancel()
				if err == nil && s.Service == pluginsdk.ServiceIn && s.Available {
					serving++
				}
				if n := readyWeb(r.members[id]); n >= 0 {
					r.mu.Lock()
					r.web[id] = min(r.web[id], n)
					r.mu.Unlock()
				}
			}
			r.mu.Lock()
			r.fewest = min(r.fewest, serving)
			r.mu.Unlock()
		}
	}()
	return r
}

// end stops sampling and returns the fewest clusters seen serving.
func (r *router) end() int {
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fewest
}

// fewestWeb returns the fewest web pods seen Ready in the member.
func (r *router) fewestWeb(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.web[id]
}

// readyWeb counts the web pods Running, Ready and not going away; -1
// when the member does not answer.
func readyWeb(cs kubernetes.Interface) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		return -1
	}
	n := 0
	for _, p := range pods.Items {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
				n++
			}
		}
	}
	return n
}
