package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Cluster is a running local control plane.
type Cluster struct {
	State
	bins   Binaries
	layout layout
	rest   *rest.Config

	mu     sync.Mutex
	exited map[string]chan struct{} // closed when a child this process started exits
	logs   map[string]string

	progress io.Writer
}

// startTimeout bounds each start-up wait; a healthy cluster needs seconds.
const startTimeout = 60 * time.Second

// Start builds any missing binary, then starts etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok, registers the fake
// nodes, and returns once the API answers, every node is Ready and the
// default service account exists.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := prepareDir(o); err != nil {
		return nil, err
	}
	bins, err := EnsureBinaries(ctx, EnsureOptions{Dir: o.BinDir, Progress: o.Progress, NoBuild: o.NoBuild})
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	c, err := startOnFreePorts(ctx, o, bins)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "cluster %q ready in %s at %s\n", o.Name, time.Since(begin).Round(10*time.Millisecond), c.Server)
	return c, nil
}

// startOnce chooses ports, writes the cluster's files and boots it.
func startOnce(ctx context.Context, o Options, bins Binaries) (*Cluster, error) {
	ports, err := choosePorts(o.APIServerPort)
	if err != nil {
		return nil, err
	}
	l := layout{dir: o.Dir}
	if _, err := writeClusterFiles(l, o.Name, ports, o.PodReadyDelay, o.AuditRequestBodiesOf); err != nil {
		return nil, fmt.Errorf("prepare cluster %s: %w", o.Name, err)
	}
	c := &Cluster{
		State: State{
			Name: o.Name, Dir: o.Dir, Server: serverURL(ports), Kubeconfig: l.kubeconfig(),
			Ports: ports, Nodes: o.Nodes, Detached: o.Detached, OwnerPID: os.Getpid(), Started: time.Now(),
		},
		bins: bins, layout: l,
		exited: map[string]chan struct{}{}, logs: map[string]string{},
		progress: o.Progress,
	}
	if err := c.boot(ctx, o); err != nil {
		// Never leave half a cluster running: stop what started, keep the
		// logs for the error message and the next start to clean up.
		if serr := c.stopProcesses(); serr != nil {
			return nil, errors.Join(err, fmt.Errorf("%w: %w", errNotStopped, serr))
		}
		return nil, err
	}
	return c, nil
}

// boot starts the processes in order and waits for readiness.
func (c *Cluster) boot(ctx context.Context, o Options) error {
	l := c.layout
	if err := c.launch(etcdComponent(l, o.Name, c.Ports), o.Detached); err != nil {
		return err
	}
	if err := c.waitReady(ctx, "etcd", func(ctx context.Context) error { return etcdHealthy(ctx, l, c.Ports) }); err != nil {
		return err
	}
	if err := c.launch(apiserverComponent(l, c.Ports), o.Detached); err != nil {
		return err
	}
	cfg, err := restConfigFromKubeconfig(l.kubeconfig())
	if err != nil {
		return err
	}
	c.rest = cfg
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := c.waitReady(ctx, "kube-apiserver", func(ctx context.Context) error {
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	}); err != nil {
		return err
	}
	for _, comp := range []component{controllerManagerComponent(l, c.Ports), schedulerComponent(l, c.Ports), kwokComponent(l, c.Ports)} {
		if err := c.launch(comp, o.Detached); err != nil {
			return err
		}
	}
	if err := createNodes(ctx, cs, o.Nodes, o.KubeletVersion); err != nil {
		return err
	}
	if err := c.waitReady(ctx, "nodes", func(ctx context.Context) error { return nodesReady(ctx, cs, o.Nodes) }); err != nil {
		return err
	}
	if err := c.waitReady(ctx, "default service account", func(ctx context.Context) error {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	}); err != nil {
		return err
	}
	// The scheduler has no other sign of life here: wait until it serves,
	// so one that could not bind its port fails the start (and is retried)
	// instead of leaving pods unscheduled.
	return c.waitReady(ctx, "kube-scheduler", func(ctx context.Context) error {
		return servesOwnCert(ctx, l.path("pki", "scheduler", "kube-scheduler.crt"), c.Ports.Scheduler)
	})
}

// launch starts one component and records its PID before anything else can
// fail, so a later stop finds it.
func (c *Cluster) launch(comp component, detached bool) error {
	logPath := c.layout.log(comp.name)
	cmd, rec, err := startProcess(comp.name, c.bins.Path(comp.name), comp.args, logPath, detached)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.Processes = append(c.Processes, rec)
	done := make(chan struct{})
	c.exited[comp.name] = done
	c.logs[comp.name] = logPath
	c.mu.Unlock()
	go func(cmd *exec.Cmd) {
		_ = cmd.Wait() // reap it; an early exit is reported by waitReady
		close(done)
	}(cmd)
	return writeState(&c.State)
}

// waitReady polls check until it passes, the context ends, or a component
// this cluster started exits (then the error carries its log's tail).
func (c *Cluster) waitReady(ctx context.Context, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	var last error
	start := time.Now()
	defer func() {
		if last == nil {
			fmt.Fprintf(c.progress, "  %s ready (%s)\n", what, time.Since(start).Round(10*time.Millisecond))
		}
	}()
	for {
		if name, ok := c.anyExited(); ok {
			tail := c.logTail(name)
			err := fmt.Errorf("%s exited while starting the cluster:\n%s\n(full log: %s)", name, tail, c.logs[name])
			if strings.Contains(tail, "address already in use") {
				return &portTakenError{component: name, err: err}
			}
			return err
		}
		cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
		last = check(cctx)
		ccancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%s not ready after %s: %v (logs in %s)", what, startTimeout, last, c.layout.path("logs"))
			}
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(25 * time.Millisecond):
		}
	}
}

func (c *Cluster) anyExited() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, ch := range c.exited {
		select {
		case <-ch:
			return name, true
		default:
		}
	}
	return "", false
}

// logTail returns the last lines of a component's log.
func (c *Cluster) logTail(name string) string {
	b, err := os.ReadFile(c.logs[name])
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	out := strings.Join(lines, "\n")
	return out
}

// RESTConfig returns a copy of the admin client configuration.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.rest) }

// KubeconfigPath is the admin kubeconfig (user upshift-admin, group system:masters).
func (c *Cluster) KubeconfigPath() string { return c.Kubeconfig }

// AuditLogPath is the API server's audit log (JSON lines, Metadata level).
func (c *Cluster) AuditLogPath() string { return c.layout.auditLog() }

// Binaries returns where the cluster's binaries (kubectl, helm, …) are.
func (c *Cluster) Binaries() Binaries { return c.bins }

// Stop kills exactly the processes this cluster started and removes its
// directory.
func (c *Cluster) Stop() error {
	if err := c.stopProcesses(); err != nil {
		return err
	}
	return removeClusterDir(c.Dir)
}

func (c *Cluster) stopProcesses() error {
	c.mu.Lock()
	procs := append([]procRecord(nil), c.Processes...)
	c.mu.Unlock()
	return stopAll(procs)
}

// stopAll stops processes in reverse start order: kwok and the controllers
// before the API server, the API server before etcd.
func stopAll(procs []procRecord) error {
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		if err := procs[i].stop(5 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
