package plugin

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/upshift-dev/upshift/pkg/pluginsdk"
)

// A plugin that answers with an error about a cluster is not down: only
// silence (and a plugin too busy to answer) is.
func TestClassifyTellsAnAnswerFromSilence(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Class
	}{
		{fmt.Errorf("%w: GetVersion: connection refused", ErrPluginDown), Down},
		{status.Error(codes.Unavailable, "connection refused"), Down},
		{status.Error(codes.DeadlineExceeded, "slow"), Down},
		{status.Error(codes.ResourceExhausted, "rate limited"), Down},
		{status.Error(codes.Canceled, "stopping"), Down},
		{status.Error(codes.NotFound, "no cluster c7"), ClusterAnswer},
		{fmt.Errorf("ops plugin at x: GetVersion: %w", status.Error(codes.InvalidArgument, "bad id")), ClusterAnswer},
		{status.Error(codes.FailedPrecondition, "an upgrade runs"), ClusterAnswer},
		{status.Error(codes.PermissionDenied, "project p"), ClusterAnswer},
		{status.Error(codes.Internal, "boom"), ClusterAnswer},
		{errors.New("in-process plugin"), ClusterAnswer},
		{status.Error(codes.Unauthenticated, "token expired"), PluginAnswer},
		{status.Error(codes.Unimplemented, "no GetVersion"), PluginAnswer},
	} {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("Classify(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	wrapped := fmt.Errorf("ops plugin at x: GetVersion: %w", status.Error(codes.NotFound, "no cluster c7"))
	if got := Answer(wrapped); got != "NotFound: no cluster c7" {
		t.Errorf("Answer = %q", got)
	}
}

// Through a real gRPC server: the client's error of a NotFound answer is
// a cluster answer, and of a stopped plugin, Down.
func TestClassifyTheClientsErrors(t *testing.T) {
	impl := &fakePlugin{getVersion: func(_ context.Context, id string) (pluginsdk.ClusterVersion, error) {
		return pluginsdk.ClusterVersion{}, status.Errorf(codes.NotFound, "no cluster %s", id)
	}}
	c := dial(t, Endpoint{Address: startPlugin(t, impl, pluginsdk.Insecure()), Insecure: true}, quick)
	_, err := c.GetVersion(callCtx(t), "c7")
	if Classify(err) != ClusterAnswer || Answer(err) != "NotFound: no cluster c7" {
		t.Errorf("NotFound: class %d, answer %q (%v)", Classify(err), Answer(err), err)
	}
	gone := dial(t, Endpoint{Address: "127.0.0.1:1", Insecure: true}, quick)
	if _, err := gone.GetVersion(callCtx(t), "c7"); Classify(err) != Down {
		t.Errorf("nothing listening: class %d (%v), want Down", Classify(err), err)
	}
}
