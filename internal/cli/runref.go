package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/internal/engine"
	"github.com/upshift-dev/upshift/internal/runner"
)

// runRef is how a command names a run: NAME, the run's or its plan's,
// with -n for the namespace of an UpgradePlan (its run is named
// <namespace>.<name>), as kubectl names objects.
type runRef struct{ namespace string }

func (r *runRef) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&r.namespace, "namespace", "n", "", "the namespace of the UpgradePlan whose run NAME is (needed only when plans of that name in several namespaces have runs)")
}

// resolve is the name of the run name names (engine.FindRun); a name no
// run answers to comes back as given, for the command's own not-found
// message. With -n nothing is read.
func (r *runRef) resolve(ctx context.Context, sess *runner.Session, name string) (string, error) {
	if r.namespace != "" {
		return engine.RunName(r.namespace, name), nil
	}
	runs, err := sess.Store().List(ctx)
	if err != nil {
		return "", err
	}
	found, err := engine.FindRun(runs, "", name)
	if err != nil || found == "" {
		return name, err
	}
	return found, nil
}
