package controller

import (
	"context"
	"os"
	"syscall"

	"github.com/upshift-dev/upshift/api/v1alpha1"
	"github.com/upshift-dev/upshift/internal/fleet"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// intend saves a step's intents (fleet.Inputs.Intend) in line, before
// the step calls the plugin: the one save a fleet's status does not leave
// to the writer behind the reconciles (fleetStatus), because a call whose
// answer is lost must be found by its request id, not sent again. Its
// cost is a write per step that calls the plugin; the answers that follow
// go behind, as before.
func (r *FleetReconciler) intend(fs *fleetStatus) func(context.Context, v1alpha1.ClusterVersionStatus) error {
	return func(ctx context.Context, st v1alpha1.ClusterVersionStatus) error {
		return r.writer.saveInLine(ctx, fs, st)
	}
}

// KillAfterCallEnv names a plugin call (ServiceOut, UpgradeMaster, …)
// after whose answer the controller SIGKILLs itself, before it saves the
// answer: the kill tests' failpoint, as runner.KillAfterTransitionEnv is
// the engine's. Unset in production.
const KillAfterCallEnv = "UPSHIFT_TEST_KILL_AFTER_PLUGIN_CALL"

// killAfterCall wraps p with the failpoint when KillAfterCallEnv is set.
func killAfterCall(p fleet.Plugin) fleet.Plugin {
	action := os.Getenv(KillAfterCallEnv)
	if action == "" {
		return p
	}
	return killer{Plugin: p, action: v1alpha1.FleetAction(action)}
}

type killer struct {
	fleet.Plugin
	action v1alpha1.FleetAction
}

func (k killer) after(a v1alpha1.FleetAction, op pluginsdk.Operation, err error) (pluginsdk.Operation, error) {
	if err == nil && a == k.action {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
	return op, err
}

func (k killer) ServiceOut(ctx context.Context, id string) (pluginsdk.Operation, error) {
	op, err := k.Plugin.ServiceOut(ctx, id)
	return k.after(v1alpha1.ActionServiceOut, op, err)
}

func (k killer) ServiceIn(ctx context.Context, id string) (pluginsdk.Operation, error) {
	op, err := k.Plugin.ServiceIn(ctx, id)
	return k.after(v1alpha1.ActionServiceIn, op, err)
}

func (k killer) UpgradeMaster(ctx context.Context, id, version string) (pluginsdk.Operation, error) {
	op, err := k.Plugin.UpgradeMaster(ctx, id, version)
	return k.after(v1alpha1.ActionUpgradeMaster, op, err)
}

func (k killer) UpgradeNodePool(ctx context.Context, id, pool, version string) (pluginsdk.Operation, error) {
	op, err := k.Plugin.UpgradeNodePool(ctx, id, pool, version)
	return k.after(v1alpha1.ActionUpgradeNodePool, op, err)
}
