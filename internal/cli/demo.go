package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	demoplatform "github.com/upshift-dev/upshift/examples/demo"
	"github.com/upshift-dev/upshift/internal/localcluster"
)

// demoSteps are the commands the demo runs and the exit code each must
// end with: 1.0.0 installs, 1.1.0 upgrades, 2.0.0 ships a broken proxy
// image, fails at its data-plane stage and rolls back on its own.
var demoSteps = []struct {
	version  string
	approval bool // the plan stops for an approval before its data plane
	want     int
	why      string
}{
	{"1.0.0", false, ExitOK, "install the platform and its Helm add-on"},
	{"1.1.0", true, ExitOK, "upgrade it, stage by stage (a migration, the add-on's release, an approval before the data plane, ipam and proxy side by side, gateways re-created)"},
	{"2.0.0", true, ExitRolledBack, "try a release whose proxy image crash-loops: it fails after its migration and add-on upgrade ran, and rolls back by itself: down-migration run, release back to its 1.1.0 revision"},
}

// demoLong is the demo command's help.
const demoLong = `Start a local cluster named "demo" (or reuse it), install the demo platform
(examples/demo: CRDs, a controller-manager, a fabric DaemonSet, ipam and proxy,
gateway templates, per-tenant gateways and a Helm add-on) at 1.0.0, upgrade
it to 1.1.0 with
live progress, then try 2.0.0, whose proxy image crash-loops: the run fails
at its stage and rolls back on its own. Then show upshift history and status,
and do the 2.0.0 upgrade once more through the controller: the plan file
bundled for the cluster (its files served over HTTPS on 127.0.0.1), applied
as an UpgradePlan resource that upshift controller runs as a ServiceAccount,
followed as kubectl get upgradeplans -w shows it, approved with an
annotation, and rolled back by the controller. Last, an app on top:
Deployment cart rolled out by an AppRollout as a canary at 20%, judged by
a Prometheus the demo runs (the prometheus binary on PATH; without one
this part is skipped, saying how to get it): v2's error ratio breaches its
analysis and it is rolled back by itself, v3 is promoted to 100% with
upshift app promote.

Exits 0 only if 1.1.0 succeeded and 2.0.0 ended rolled back (exit code 2),
both times, and the app's v2 was rolled back and v3 promoted.
Each run starts the demo cluster afresh (about 4 seconds), so the demo shows
the same story every time; --reuse keeps a running one and its saved runs.
The cluster stays up; the last lines say how to stop it.

With --ui, install 1.0.0 and serve the web UI and the API instead (upshift
serve with the demo's catalog and app): the URL, where the password is and
a login token are printed; the wizard takes the platform to 1.1.0 (an
approval on the way) or to the broken 2.0.0 (a failure, rolled back).

With --profile embedded-cluster, the demo is embedded-cluster's
infrastructure upgrade (examples/embedded-cluster), on a cluster named
demo-ec: 2.16.0 installed, 2.17.0 reached stage by stage in
embedded-cluster's component order (artifacts copied by a Job per node,
k0s's ClusterConfig, the add-ons, an extension dropped, the Installation
record), then 2.17.1, whose admin console fails, rolled back; with --ui the
wizard does it. It needs k0s's and embedded-cluster's CRDs (--crds FILE),
which Upshift does not ship. The nodes are kwok's, where k0s cannot run:
they report 2.17.0's k0s from the start, so the autopilot step finds
nothing to move.`

func newDemoCommand() *cobra.Command {
	o := localcluster.Options{Name: "demo", Detached: true}
	var reuse, ui bool
	var profile, crdsFile string
	listen := "127.0.0.1:8443"
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start a local cluster (or reuse it) and upgrade the demo platform on it: 1.0.0, 1.1.0, then a broken 2.0.0 that rolls back",
		Long:  demoLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Progress = cmd.ErrOrStderr()
			out := cmd.OutOrStdout()
			if profile == profileEC {
				return runDemoEC(cmd, o, reuse, crdsFile, ui, listen)
			}
			if profile != "platform" {
				return fmt.Errorf("--profile %q: use platform (the default) or %s", profile, profileEC)
			}
			if crdsFile != "" {
				return fmt.Errorf("--crds is for --profile %s: the platform demo installs its own CRDs", profileEC)
			}
			kubeconfig, err := demoCluster(cmd, o, reuse)
			if err != nil {
				return err
			}
			dir, err := demoFiles(demoplatform.FS, "the demo platform")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			if ui {
				return demoUI(cmd, kubeconfig, dir, listen)
			}
			if err := demoCLI(cmd, kubeconfig, dir); err != nil {
				return err
			}
			if err := demoController(cmd, kubeconfig, dir); err != nil {
				return err
			}
			if err := demoApp(cmd, kubeconfig, dir); err != nil {
				return err
			}
			fmt.Fprintf(out, "\nthe cluster stays up: export KUBECONFIG=%s\nstop it with: upshift cluster down --name %s\n", kubeconfig, o.Name)
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Name, "name", o.Name, "name of the local cluster to use or start")
	cmd.Flags().BoolVar(&reuse, "reuse", false, "reuse a running demo cluster and its saved runs instead of starting afresh")
	cmd.Flags().BoolVar(&ui, "ui", false, "install the demo platform's 1.0.0 and serve the web UI (the upgrade wizard) and the API over it instead; prints the URL and a login token")
	cmd.Flags().StringVar(&listen, "listen", listen, "with --ui: where to serve (host:port)")
	cmd.Flags().StringVar(&profile, "profile", "platform", "the demo: platform (examples/demo) or embedded-cluster (examples/embedded-cluster, needs --crds)")
	cmd.Flags().StringVar(&crdsFile, "crds", "", "with --profile embedded-cluster: a YAML file holding k0s's Plan and ClusterConfig CRDs and embedded-cluster's Installation CRD")
	addBinFlags(cmd, &o.BinDir, &o.NoBuild)
	return cmd
}

// demoCLI upgrades the demo platform with the CLI, as a person would at
// a terminal (each command printed before it runs), checks each exit
// code, then shows the history and the failed run's status.
func demoCLI(cmd *cobra.Command, kubeconfig, dir string) error {
	out := cmd.OutOrStdout()
	for _, s := range demoSteps {
		plan := filepath.Join(dir, s.version, "plan.yaml")
		fmt.Fprintf(out, "\n# %s\n", s.why)
		if s.approval {
			// Stop at the approval, approve as an operator would,
			// and go on: the flow a person sees.
			fmt.Fprintf(out, "$ upshift apply -f examples/demo/%s/plan.yaml --no-wait\n", s.version)
			if code := runSubcommand(cmd, "apply", "-f", plan, "--no-wait", "--kubeconfig", kubeconfig); code != ExitWaiting {
				return fmt.Errorf("demo: upgrading to %s exited %d, expected %d (waiting for approval)", s.version, code, ExitWaiting)
			}
			fmt.Fprintf(out, "exit code %d: waiting for approval\n\n$ upshift approve demo-%s\n", ExitWaiting, s.version)
			if code := runSubcommand(cmd, "approve", "demo-"+s.version, "--kubeconfig", kubeconfig); code != ExitOK {
				return fmt.Errorf("demo: approve demo-%s exited %d", s.version, code)
			}
		}
		fmt.Fprintf(out, "$ upshift apply -f examples/demo/%s/plan.yaml\n", s.version)
		code := runSubcommand(cmd, "apply", "-f", plan, "--kubeconfig", kubeconfig)
		if code != s.want {
			return fmt.Errorf("demo: upgrading to %s exited %d, expected %d", s.version, code, s.want)
		}
		fmt.Fprintf(out, "exit code %d, as expected\n", code)
	}
	fmt.Fprintf(out, "\n$ upshift history\n")
	if code := runSubcommand(cmd, "history", "--kubeconfig", kubeconfig); code != ExitOK {
		return fmt.Errorf("demo: upshift history exited %d", code)
	}
	fmt.Fprintf(out, "\n$ upshift status demo-2.0.0\n")
	if code := runSubcommand(cmd, "status", "demo-2.0.0", "--kubeconfig", kubeconfig); code != ExitOK {
		return fmt.Errorf("demo: upshift status exited %d", code)
	}
	return nil
}

// runSubcommand runs another upshift command in this process, printing to
// the same streams, and returns its exit code.
func runSubcommand(parent *cobra.Command, args ...string) int {
	root := NewRootCommand()
	root.SetArgs(args)
	root.SetOut(parent.OutOrStdout())
	root.SetErr(parent.ErrOrStderr())
	err := root.ExecuteContext(parent.Context())
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(parent.ErrOrStderr(), "error:", err)
	return exitCode(err)
}

// demoFiles writes a demo's embedded files into a new temporary
// directory, which the caller removes.
func demoFiles(files fs.FS, what string) (string, error) {
	dir, err := os.MkdirTemp("", "upshift-demo-")
	if err != nil {
		return "", err
	}
	if err := os.CopyFS(dir, files); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("write %s: %w", what, err)
	}
	return dir, nil
}

// demoCluster starts the demo cluster afresh, or reuses a running one.
func demoCluster(cmd *cobra.Command, o localcluster.Options, reuse bool) (string, error) {
	st, err := localcluster.Get(o.Name)
	if err == nil && reuse && len(st.Running()) == len(st.Processes) {
		fmt.Fprintf(cmd.OutOrStdout(), "using the running cluster %q at %s\n", st.Name, st.Server)
		return st.Kubeconfig, nil
	}
	if err != nil && !errors.Is(err, localcluster.ErrNotFound) {
		return "", err
	}
	if err == nil { // an earlier demo's cluster: start afresh
		fmt.Fprintf(cmd.OutOrStdout(), "stopping the earlier %q cluster to start the demo afresh (--reuse keeps it)\n", o.Name)
		if derr := localcluster.Down(o.Name, io.Discard); derr != nil {
			return "", derr
		}
	}
	c, err := localcluster.Start(cmd.Context(), o)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "cluster %q is up at %s\n", c.Name, c.Server)
	return c.KubeconfigPath(), nil
}
