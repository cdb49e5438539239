package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/clients"
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
	// Passwords log in; Tokens sign and check the bearer tokens.
	Passwords *auth.Passwords
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
	// failedLogins slows password guessing: ten failures at once, then
	// one every 10 s, for every client together (a guesser changes
	// address; the admin waits seconds at worst).
	failedLogins *rate.Limiter
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
	deps, err := clients.New(cfg.Rest)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, deps: deps, state: &stateStore{cs: deps.Clientset, namespace: cfg.Session.Namespace},
		failedLogins: rate.NewLimiter(rate.Every(10*time.Second), 10)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
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
	return nil
}

// Stop ends the drives (each run stops at its next transition, saved,
// to be resumed) and waits for them.
func (s *Server) Stop() {
	s.cancel()
	s.drives.Wait()
}

// session opens a runner session whose notices go to the log.
func (s *Server) session() (*runner.Session, error) {
	opts := s.cfg.Session
	opts.Notice = func(msg string) { s.cfg.Log(redact.Text(msg)) }
	return runner.Open(s.cfg.Rest, opts)
}

// drive starts the goroutine that works in rec's driving state.
func (s *Server) drive(rec *record) {
	s.drives.Add(1)
	go func() {
		defer s.drives.Done()
		switch rec.State {
		case wizard.InfrastructureUpgrading:
			s.driveInfra(rec)
		case wizard.AppPreflightsRunning:
			s.driveAppPreflights(rec)
		case wizard.AppUpgrading:
			s.driveApp(rec)
		}
	}()
}

// transition moves the wizard from its current state to `to` when the
// state machine allows it, applying change to the record; a refusal is a
// *wizard.ConflictError or errStateChanged (409).
func (s *Server) transition(ctx context.Context, to wizard.State, change func(*record) error) (*record, error) {
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
	if _, err := s.state.save(ctx, rec, version); err != nil {
		return nil, err
	}
	return rec, nil
}

// end records where a drive ended. It retries a conflict (a request
// read the state meanwhile) and gives up only when the server stops,
// leaving the state driving for the next server to drive on.
func (s *Server) end(to wizard.State, change func(*record)) {
	for {
		_, err := s.transition(s.ctx, to, func(r *record) error { change(r); return nil })
		if err == nil || s.ctx.Err() != nil {
			return
		}
		var conflict *wizard.ConflictError
		if errors.As(err, &conflict) {
			s.cfg.Log(fmt.Sprintf("the wizard's state moved to %s meanwhile; %s not recorded", conflict.From, to))
			return
		}
		s.cfg.Log(fmt.Sprintf("record %s: %v; retrying", to, err))
		select {
		case <-s.ctx.Done():
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
			return
		}
	}
}
