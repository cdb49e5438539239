package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/plan"
	"github.com/upshift-dev/upshift/internal/redact"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/server/auth"
	"github.com/upshift-dev/upshift/internal/server/wizard"
)

// Config is what a Server serves and with what.
type Config struct {
	// Rest is the driver's access to the cluster (the kubeconfig's).
	Rest *rest.Config
	// Session tunes the runner's sessions (namespace, lease timings).
	Session runner.Options
	// Catalog is the release catalog of the infrastructure upgrade, as
	// catalog.ParseRef reads it (a local path is allowed here, from the
	// operator's flag, never from a request); CatalogNamespace is where
	// configmap/NAME refs live, CatalogCAFile a CA for https catalogs.
	Catalog, CatalogNamespace, CatalogCAFile string
	// AppPlan is the app phase's UpgradePlan file; "" for none.
	AppPlan string
	// AllowIgnoreHostPreflights lets a start bypass failed host
	// preflights (ignoreHostPreflights), as embedded-cluster's
	// allowIgnoreHostPreflights does.
	AllowIgnoreHostPreflights bool
	// Target is the version an upgrade request without targetVersion
	// reaches (embedded-cluster's client sends none); "" is the
	// catalog's newest release.
	Target string
	// AirgapBundle is the airgap bundle's file (an OCI layout as .tar or
	// .tar.gz) and AirgapRegistry where it is pushed (HOST[:PORT][/PREFIX]),
	// both or neither; AirgapRegistryCAFile a CA trusted for it. With a
	// bundle, the infrastructure phase waits for its processing.
	AirgapBundle, AirgapRegistry, AirgapRegistryCAFile string
	// Passwords log in (those in force when asked: a changed password
	// refuses older tokens); Tokens sign and check the bearer tokens.
	Passwords auth.Source
	Tokens    *auth.Tokens
	// UI serves the web UI's files; nil serves none.
	UI http.Handler
	// Log receives the server's own lines (already redacted).
	Log func(string)
}

// Server is the API.
type Server struct {
	cfg   Config
	deps  *clients.Set
	state *stateStore
	runs  *runWatch
	// mu serialises this process's wizard transitions; the ConfigMap's
	// optimistic concurrency covers other processes.
	mu sync.Mutex
	// ctx bounds the drives: they outlive requests, not the server.
	ctx    context.Context
	cancel context.CancelFunc
	drives sync.WaitGroup
	// stopping refuses new drives once Stop began (the state stays
	// driving: the next server drives on); stopMu guards it and the
	// drives' Add.
	stopMu   sync.Mutex
	stopping bool
	// streams ends the event streams first when the server shuts down,
	// so they do not hold the HTTP server's graceful shutdown.
	streams      context.Context
	closeStreams context.CancelFunc
	// failedLogins slows password guessing.
	failedLogins *loginLimits
	// appPlanName is the app plan's name ("" without one).
	appPlanName string
	// apps reads and patches AppRollouts (apps.go).
	apps client.Client
	// windows are the maintenance windows the drives wait for.
	windows windowWaits
	// bundling: an infrastructure upgrade that ended collects its
	// support bundle (its status says so).
	bundling atomic.Bool
	// bundle is the airgap bundle (nil: not an airgap server).
	bundle *airgapBundle
}

// New connects to the cluster and watches its runs; Start begins
// serving what was driving.
func New(cfg Config) (*Server, error) {
	if cfg.Passwords == nil || cfg.Tokens == nil {
		return nil, errors.New("server: passwords and tokens are required")
	}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	if cfg.Session.Namespace == "" {
		cfg.Session.Namespace = runner.DefaultNamespace
	}
	if cfg.Target != "" {
		if _, err := semver.NewVersion(cfg.Target); err != nil {
			return nil, fmt.Errorf("--target %q is not a semantic version: write it as 1.2.3 or v1.2.3 (one of the catalog's releases)", cfg.Target)
		}
	}
	deps, err := clients.New(cfg.Rest)
	if err != nil {
		return nil, err
	}
	appPlanName := ""
	if cfg.AppPlan != "" {
		// A broken app plan is said at start, not after the upgrade.
		l, err := plan.Load(cfg.AppPlan)
		if err != nil {
			return nil, fmt.Errorf("--app-plan %s: %w", cfg.AppPlan, err)
		}
		if errs := plan.Validate(l); len(errs) > 0 {
			return nil, fmt.Errorf("--app-plan %s: %w", cfg.AppPlan, errs.ToAggregate())
		}
		appPlanName = l.Plan.Name
	}
	bundle, err := newAirgapBundle(cfg)
	if err != nil {
		return nil, err
	}
	ac, err := appsClient(cfg.Rest)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, deps: deps, apps: ac, bundle: bundle, state: &stateStore{cs: deps.Clientset, namespace: cfg.Session.Namespace, started: time.Now().UTC()},
		failedLogins: newLoginLimits(), appPlanName: appPlanName}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.streams, s.closeStreams = context.WithCancel(s.ctx)
	return s, nil
}

// Start readies the cluster (the run CRD and namespace), starts the
// runs' watch and drives on what the wizard was driving when a server
// stopped.
func (s *Server) Start(ctx context.Context) error {
	sess, err := s.session()
	if err != nil {
		return err
	}
	if _, err := sess.Store().EnsureCRD(ctx); err != nil {
		return err
	}
	if err := sess.Store().EnsureNamespace(ctx); err != nil {
		return err
	}
	if s.runs, err = startRunWatch(s.ctx, s.cfg.Rest, s.cfg.Session.Namespace); err != nil {
		return err
	}
	s.prunePreviews(ctx)
	rec, _, err := s.state.load(ctx)
	if err != nil {
		return err
	}
	if rec.State.Driving() {
		s.cfg.Log(fmt.Sprintf("the wizard was at %s when the server stopped: driving on", rec.State))
		s.drive(rec)
	}
	for _, cmd := range rec.Commands {
		s.cfg.Log(fmt.Sprintf("the %s of run %s was under way when the server stopped: driving it on", cmd.Kind, cmd.Run))
		s.command(sess, cmd, true)
	}
	return nil
}

// Drain ends the event streams; call it before the HTTP server's
// Shutdown, which waits for open requests.
func (s *Server) Drain() { s.closeStreams() }

// Stop ends the drives (each run stops at its next transition, saved,
// to be resumed) and waits for them. Call it after the HTTP server has
// shut down: no handler starts a drive then.
func (s *Server) Stop() {
	s.stopMu.Lock()
	s.stopping = true
	s.stopMu.Unlock()
	s.cancel()
	s.drives.Wait()
}

// goDrive runs f as a drive unless the server is stopping.
func (s *Server) goDrive(f func()) bool {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if s.stopping {
		return false
	}
	s.drives.Add(1)
	go func() {
		defer s.drives.Done()
		f()
	}()
	return true
}

// session opens a runner session whose notices go to the log.
func (s *Server) session() (*runner.Session, error) { return s.sessionFor(nil) }

// sessionFor opens a session that drives runs for owner (nil: none).
func (s *Server) sessionFor(owner *v1alpha1.RunOwner) (*runner.Session, error) {
	opts := s.cfg.Session
	opts.Owner = owner
	opts.Notice = func(msg string) { s.cfg.Log(redact.Text(msg)) }
	return runner.Open(s.cfg.Rest, opts)
}

// drive starts the goroutine that works in rec's driving state.
func (s *Server) drive(rec *record) {
	s.goDrive(func() {
		switch rec.State {
		case wizard.InfrastructureUpgrading:
			s.driveInfra(rec)
		case wizard.AppPreflightsRunning:
			s.driveAppPreflights(rec)
		case wizard.AppUpgrading:
			s.driveApp(rec)
		case wizard.AirgapProcessing:
			s.driveAirgap()
		}
	})
}

// transition moves the wizard from its current state to `to` when the
// state machine allows it, applying change to the record; a refusal is a
// *wizard.ConflictError or errStateChanged (409).
func (s *Server) transition(ctx context.Context, to wizard.State, change func(*record) error) (*record, error) {
	// A client that goes away must not cut a transition in two (saved,
	// but its drive never started): the write is bounded, not cancelled.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, version, err := s.state.load(ctx)
	if err != nil {
		return nil, err
	}
	if err := wizard.Check(rec.State, to); err != nil {
		return nil, err
	}
	if change != nil {
		if err := change(rec); err != nil {
			return nil, err
		}
	}
	rec.State, rec.LastUpdated = to, time.Now().UTC()
	if rec.ID == "" {
		rec.ID = uuid.NewUUID()
	}
	if _, err := s.state.save(ctx, rec, version); err != nil {
		return nil, err
	}
	return rec, nil
}

// end records where a drive ended. It retries a conflict (a request
// read the state meanwhile) and gives up only when the server stops,
// leaving the state driving for the next server to drive on.
func (s *Server) end(to wizard.State, change func(*record)) {
	// A drive that ended on its own is recorded even while the server
	// stops, within a bound: else the next server would find the phase
	// still driving.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 30*time.Second)
	defer cancel()
	for {
		_, err := s.transition(ctx, to, func(r *record) error { change(r); return nil })
		if err == nil || ctx.Err() != nil {
			return
		}
		var conflict *wizard.ConflictError
		if errors.As(err, &conflict) {
			s.cfg.Log(fmt.Sprintf("the wizard's state moved to %s meanwhile; %s not recorded", conflict.From, to))
			return
		}
		s.cfg.Log(fmt.Sprintf("record %s: %v; retrying", to, err))
		select {
		case <-ctx.Done():
			s.cfg.Log(fmt.Sprintf("record %s: gave up: %v", to, err))
			return
		case <-time.After(time.Second):
		}
	}
}

// update changes the record without a transition (a failed phase's
// description); change returns false to leave it. Conflicts are retried
// a few times: the change is a note, not a decision.
func (s *Server) update(change func(*record) bool) {
	for range 5 {
		s.mu.Lock()
		rec, version, err := s.state.load(s.ctx)
		if err == nil && change(rec) {
			rec.LastUpdated = time.Now().UTC()
			_, err = s.state.save(s.ctx, rec, version)
		}
		s.mu.Unlock()
		if !errors.Is(err, errStateChanged) {
			if err != nil {
				s.cfg.Log(fmt.Sprintf("note in the wizard's state: %v", err))
			}
			return
		}
	}
	s.cfg.Log("note in the wizard's state: it kept changing meanwhile; not noted")
}
