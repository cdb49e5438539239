package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/runner"
	"github.com/upshift-dev/upshift/internal/runstore"
	"github.com/upshift-dev/upshift/internal/supportbundle"
)

func newSupportBundleCommand(kf *kubeFlags) *cobra.Command {
	var (
		output     string
		namespaces []string
		ref        runRef
	)
	cmd := &cobra.Command{
		Use:   "support-bundle [RUN...] [-o FILE] [-n NAMESPACE]",
		Short: "Write a support bundle: the runs, their reports, events, objects, container logs and nodes, redacted, in one .tar.gz",
		Long: `Write a support bundle: one gzip'd tar of what someone who was not there
needs to understand an upgrade.

It holds the runs named (all runs of the runs namespace when none is) with
their reports, and for the runs namespace, every namespace the runs' plans
name and every --collect-namespace: the events, the workloads, Jobs, Services,
ConfigMaps, Secrets (values hidden) and pods, and the last lines each
container logged; and the nodes. Everything is redacted as every output is:
Secret values, inline env values and credentials in URLs are hidden.

Collecting is best effort: what cannot be read (no RBAC for it) is listed
in the bundle's summary.txt, and the rest is written.`,
		Example: `  upshift support-bundle                       # every run
  upshift support-bundle web-1.1.0 -o web.tar.gz
  upshift support-bundle --collect-namespace kotsadm   # and a namespace the plans do not name`,
		RunE: func(cmd *cobra.Command, args []string) error {
			sess, err := openSession(kf)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			runs, err := bundleRuns(ctx, sess, &ref, args)
			if err != nil {
				return err
			}
			for _, r := range runs {
				namespaces = append(namespaces, supportbundle.SourceNamespaces(ctx, sess.Store(), r)...)
			}
			now := time.Now()
			if output == "" {
				output = "upshift-support-" + now.UTC().Format("20060102-150405") + ".tar.gz"
			}
			// 0600: the bundle is redacted, but it describes the cluster.
			f, err := os.OpenFile(output, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
			if err != nil {
				return fmt.Errorf("--output: %w (choose another file; an existing one is never overwritten)", err)
			}
			sum, err := supportbundle.Write(ctx, f, sess.Clientset(), supportbundle.Options{
				Runs: runs, RunsNamespace: sess.Store().Namespace(), Namespaces: namespaces, Now: now})
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				_ = os.Remove(output) // a part of a bundle is no bundle; the name is free again
				return fmt.Errorf("write %s: %w", output, err)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "wrote %s: %d runs, %d files, namespaces %v\n", output, len(runs), len(sum.Files), sum.Namespaces)
			if len(sum.Missing) > 0 {
				fmt.Fprintf(w, "not collected (%d, listed in its summary.txt): %s\n", len(sum.Missing), sum.Missing[0])
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "the file to write (default upshift-support-<time>.tar.gz); never overwritten")
	cmd.Flags().StringSliceVar(&namespaces, "collect-namespace", nil, "another namespace to collect (repeatable)")
	ref.add(cmd)
	return cmd
}

// bundleRuns are the runs named, or every run when none is.
func bundleRuns(ctx context.Context, sess *runner.Session, ref *runRef, names []string) ([]*v1alpha1.UpgradeRun, error) {
	var runs []*v1alpha1.UpgradeRun
	if len(names) == 0 {
		all, err := sess.Store().List(ctx)
		if err != nil {
			return nil, err
		}
		for i := range all {
			runs = append(runs, &all[i])
		}
	}
	for _, name := range names {
		name, err := ref.resolve(ctx, sess, name)
		if err != nil {
			return nil, err
		}
		run, err := sess.Store().Get(ctx, name)
		if errors.Is(err, runstore.ErrNotFound) {
			return nil, fmt.Errorf("no run named %q in namespace %s (upshift history lists them)", name, sess.Store().Namespace())
		}
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}
