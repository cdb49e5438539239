package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/upshift-dev/upshift/internal/clients"
	"github.com/upshift-dev/upshift/internal/server"
	"github.com/upshift-dev/upshift/internal/server/auth"
	"github.com/upshift-dev/upshift/internal/server/web"
)

// serveFlags are `upshift serve`'s.
type serveFlags struct {
	listen, stateDir, tlsCert, tlsKey    string
	insecureHTTP, rotateKey              bool
	allowIgnoreHostPreflights            bool
	passwordFile, viewerFile, passSecret string
	tokenTTL                             time.Duration
	catalog, catalogCA, appPlan, target  string
	airgapBundle, airgapRegistry         string
	airgapRegistryCA                     string
}

func newServeCommand(kf *kubeFlags) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --catalog CATALOG --password-file FILE",
		Short: "Serve the HTTP API and the web UI (the upgrade wizard) over the same engine",
		Long: `Serve the HTTP API and the web UI: the upgrade wizard (check, infrastructure
upgrade through the catalog's hops, app preflights, app upgrade), the runs
with their live transitions, approvals, aborts, rollbacks and retries.
Every run is an UpgradeRun like the CLI's; the lease keeps the server and
a CLI from driving the cluster at once. A restarted server drives on what
it was driving. See docs/api.md.

TLS by default: without --tls-cert/--tls-key a self-signed certificate is
generated on first start and kept in --state-dir. Passwords come from
files or a Secret, never from a flag value.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serve(cmd, kf, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8443", "address to serve on (host:port)")
	fl.StringVar(&f.stateDir, "state-dir", defaultStateDir(), "where the generated certificate and the token signing key are kept")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "serving certificate (PEM); with --tls-key")
	fl.StringVar(&f.tlsKey, "tls-key", "", "serving key (PEM); with --tls-cert")
	fl.BoolVar(&f.insecureHTTP, "insecure-http", false, "serve plain HTTP (only on a loopback --listen address)")
	fl.StringVar(&f.passwordFile, "password-file", "", "file holding the admin password")
	fl.StringVar(&f.viewerFile, "viewer-password-file", "", "file holding a read-only password (optional)")
	fl.StringVar(&f.passSecret, "password-secret", "", "NAMESPACE/NAME of a Secret with keys password and viewerPassword (instead of the files)")
	fl.DurationVar(&f.tokenTTL, "token-ttl", 12*time.Hour, "how long a login token is valid (an events stream ends with its token)")
	fl.BoolVar(&f.rotateKey, "rotate-key", false, "replace the token signing key in --state-dir before serving: every token issued before is refused")
	fl.StringVar(&f.catalog, "catalog", "", "the release catalog of the infrastructure upgrade: a directory with catalog.yaml, the file, an https:// URL, or configmap/NAME (in -n's namespace)")
	fl.StringVar(&f.catalogCA, "catalog-ca-file", "", "a CA certificate (PEM) trusted for an https:// catalog")
	fl.StringVar(&f.appPlan, "app-plan", "", "the app phase's UpgradePlan file (optional)")
	fl.BoolVar(&f.allowIgnoreHostPreflights, "allow-ignore-host-preflights", false, "let an infrastructure upgrade start with ignoreHostPreflights: true past failed host preflights (embedded-cluster's allowIgnoreHostPreflights)")
	fl.StringVar(&f.airgapBundle, "airgap-bundle", "", "an airgap bundle (an OCI image layout as .tar or .tar.gz, each manifest annotated org.opencontainers.image.ref.name): processed (POST .../airgap/process) before the infrastructure phase; with --airgap-registry")
	fl.StringVar(&f.airgapRegistry, "airgap-registry", "", "the registry the airgap bundle is pushed to, over https: HOST[:PORT][/PREFIX]; with --airgap-bundle")
	fl.StringVar(&f.airgapRegistryCA, "airgap-registry-ca-file", "", "a CA certificate (PEM) trusted for --airgap-registry")
	fl.StringVar(&f.target, "target", "", "the version an upgrade reaches when its request names none, as embedded-cluster's client's (default: the catalog's newest release)")
	return cmd
}

// defaultStateDir is ~/.config/upshift/serve (the user's config dir).
func defaultStateDir() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ".upshift-serve"
	}
	return filepath.Join(dir, "upshift", "serve")
}

func (f *serveFlags) validate() error {
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return fmt.Errorf("--listen %q: write it as host:port (127.0.0.1:8443, :8443)", f.listen)
	}
	if f.insecureHTTP {
		ip := net.ParseIP(host)
		if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return fmt.Errorf("--insecure-http with --listen %s: plain HTTP is served on a loopback address only (127.0.0.1:PORT); leave --insecure-http out for TLS", f.listen)
		}
		if f.tlsCert != "" || f.tlsKey != "" {
			return errors.New("--insecure-http and --tls-cert/--tls-key: choose one")
		}
	}
	switch {
	case f.passwordFile == "" && f.passSecret == "":
		return errors.New("no password: give --password-file FILE (or --password-secret NAMESPACE/NAME); a password is never a flag value")
	case f.passwordFile != "" && f.passSecret != "":
		return errors.New("--password-file and --password-secret: choose one")
	case f.viewerFile != "" && f.passSecret != "":
		return errors.New("--viewer-password-file and --password-secret: the Secret's viewerPassword key holds the viewer password")
	}
	if f.target != "" {
		if _, err := semver.NewVersion(f.target); err != nil {
			return fmt.Errorf("--target %q is not a semantic version: write it as 1.2.3 or v1.2.3 (one of the catalog's releases)", f.target)
		}
	}
	switch {
	case f.airgapBundle != "" && f.airgapRegistry == "":
		return errors.New("--airgap-bundle without --airgap-registry: name the registry the bundle is pushed to (--airgap-registry HOST[:PORT][/PREFIX])")
	case f.airgapBundle == "" && (f.airgapRegistry != "" || f.airgapRegistryCA != ""):
		return errors.New("--airgap-registry or --airgap-registry-ca-file without --airgap-bundle: give the bundle (--airgap-bundle FILE) and where it goes (--airgap-registry HOST[:PORT][/PREFIX]), or neither")
	}
	if f.passSecret != "" {
		if ns, name, ok := strings.Cut(f.passSecret, "/"); !ok || ns == "" || name == "" {
			return fmt.Errorf("--password-secret %q: write it as NAMESPACE/NAME", f.passSecret)
		}
	}
	return nil
}

func serve(cmd *cobra.Command, kf *kubeFlags, f *serveFlags) error {
	if err := f.validate(); err != nil {
		return err
	}
	ctx := cmd.Context()
	cfg, err := kf.restConfig()
	if err != nil {
		return err
	}
	passwords, err := f.passwords(ctx, cfg)
	if err != nil {
		return err
	}
	loadKey := auth.LoadOrCreateKey
	if f.rotateKey {
		loadKey = auth.RotateKey
	}
	key, err := loadKey(f.stateDir)
	if err != nil {
		return fmt.Errorf("--state-dir: %w", err)
	}
	tokens, err := auth.NewTokens(key, f.tokenTTL)
	if err != nil {
		return err
	}
	ns, _, err := kf.cf.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		ns = "default"
	}
	errOut := cmd.ErrOrStderr()
	srv, err := server.New(server.Config{
		Rest: cfg, Session: kf.sessionOptions(), Catalog: f.catalog, CatalogNamespace: ns, CatalogCAFile: f.catalogCA,
		AppPlan: f.appPlan, Target: f.target, AllowIgnoreHostPreflights: f.allowIgnoreHostPreflights, Passwords: passwords, Tokens: tokens, UI: webUI(),
		AirgapBundle: f.airgapBundle, AirgapRegistry: f.airgapRegistry, AirgapRegistryCAFile: f.airgapRegistryCA,
		Log: func(msg string) { fmt.Fprintf(errOut, "%s %s\n", time.Now().Format(time.RFC3339), msg) },
	})
	if err != nil {
		return err
	}
	if err := srv.Start(ctx); err != nil {
		return err
	}
	defer srv.Stop()
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", f.listen, err)
	}
	hs := server.HTTPServer(srv.Handler())
	shutDown := make(chan struct{})
	go func() {
		defer close(shutDown)
		<-ctx.Done()
		srv.Drain()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shut)
	}()
	url := "https://" + ln.Addr().String()
	if f.insecureHTTP {
		url = "http://" + ln.Addr().String()
		fmt.Fprintf(cmd.OutOrStdout(), "serving %s (plain HTTP, loopback only)\n", url)
		err = hs.Serve(ln)
	} else {
		host, _, _ := net.SplitHostPort(f.listen)
		files, cerr := server.EnsureCertificate(f.stateDir, f.tlsCert, f.tlsKey, host)
		if cerr != nil {
			ln.Close()
			return cerr
		}
		fmt.Fprintf(cmd.OutOrStdout(), "serving %s (certificate %s)\n", url, files.Cert)
		err = hs.ServeTLS(ln, files.Cert, files.Key)
	}
	if errors.Is(err, http.ErrServerClosed) {
		<-shutDown // the handlers are done: no drive starts after Stop
		return nil
	}
	return err
}

// passwords reads the passwords from the files (again on every use, so
// a changed file takes effect at once) or the Secret (at start).
func (f *serveFlags) passwords(ctx context.Context, cfg *rest.Config) (auth.Source, error) {
	if f.passwordFile != "" {
		return auth.WatchFiles(f.passwordFile, f.viewerFile)
	}
	cs, err := clients.New(cfg)
	if err != nil {
		return nil, err
	}
	ns, name, _ := strings.Cut(f.passSecret, "/")
	return auth.PasswordsFromSecret(ctx, cs.Clientset, ns, name)
}

// webUI is the embedded web UI.
func webUI() http.Handler { return web.Handler() }
