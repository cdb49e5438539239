package plugin

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/upshift-dev/upshift/internal/fuzzcheck"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	pluginpb "github.com/upshift-dev/upshift/pkg/pluginsdk/gen/plugin"
	opsv1 "github.com/upshift-dev/upshift/pkg/pluginsdk/gen/upshift/ops/v1"
)

// FuzzPluginAnswers decodes what a plugin answers, as the gRPC client
// does (proto.Unmarshal of the wire bytes), and converts it into the
// fleet's types as the client does. A message that decodes converts,
// and the conversion loses nothing the fleet reads: converted back to
// the wire and again, it is the same. An error answer (a google.rpc.
// Status) is classified as exactly one of down, a cluster's answer or
// the plugin's, and Answer gives its code and message.
func FuzzPluginAnswers(f *testing.F) {
	seeds := []proto.Message{
		pluginsdk.WireClusterVersion("c1", pluginsdk.ClusterVersion{Master: "1.31.2", NodePools: []pluginsdk.NodePoolVersion{{ID: "pool-a", Version: "1.30.9"}}}),
		pluginsdk.WireClusterStatus(pluginsdk.ClusterStatus{Service: pluginsdk.ServiceOut, Available: true}),
		pluginsdk.WireOperation(pluginsdk.Operation{Type: "UpgradeMaster", ID: "op-7"}),
		pluginsdk.WireOperationReport(pluginsdk.OperationReport{Status: pluginsdk.OperationRunning, Message: "draining", Done: 3, Total: 5}),
		status.New(codes.NotFound, "no cluster c7").Proto(),
	}
	for i, m := range seeds {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		if len(b) > 64<<10 {
			return
		}
		defer fuzzcheck.Within("a plugin answer's decode", b)()
		switch kind % 5 {
		case 0:
			roundTrip(t, b, &pluginpb.ClusterVersion{}, func(w *pluginpb.ClusterVersion) any { return pluginsdk.ClusterVersionFromWire(w) },
				func(v any) proto.Message { return pluginsdk.WireClusterVersion("c", v.(pluginsdk.ClusterVersion)) })
		case 1:
			roundTrip(t, b, &pluginpb.ClusterStatus{}, func(w *pluginpb.ClusterStatus) any { return pluginsdk.ClusterStatusFromWire(w) },
				func(v any) proto.Message { return pluginsdk.WireClusterStatus(v.(pluginsdk.ClusterStatus)) })
		case 2:
			roundTrip(t, b, &pluginpb.Operation{}, func(w *pluginpb.Operation) any { return pluginsdk.OperationFromWire(w) },
				func(v any) proto.Message { return pluginsdk.WireOperation(v.(pluginsdk.Operation)) })
		case 3:
			roundTrip(t, b, &opsv1.OperationReport{}, func(w *opsv1.OperationReport) any { return pluginsdk.OperationReportFromWire(w) },
				func(v any) proto.Message { return pluginsdk.WireOperationReport(v.(pluginsdk.OperationReport)) })
		default:
			checkErrorAnswer(t, b)
		}
	})
}

// roundTrip decodes b into w, converts it, and checks that the converted
// value survives the wire and back.
func roundTrip[M proto.Message](t *testing.T, b []byte, w M, from func(M) any, to func(any) proto.Message) {
	t.Helper()
	if proto.Unmarshal(b, w) != nil {
		return
	}
	v := from(w)
	wire, err := proto.Marshal(to(v))
	if err != nil {
		t.Fatalf("%T converted back does not encode: %v", v, err)
	}
	w2 := w.ProtoReflect().New().Interface().(M)
	if err := proto.Unmarshal(wire, w2); err != nil {
		t.Fatalf("%T converted back does not decode: %v", v, err)
	}
	if v2 := from(w2); !reflect.DeepEqual(v, v2) {
		t.Fatalf("%T changed on the wire and back: %+v, then %+v", v, v, v2)
	}
}

func checkErrorAnswer(t *testing.T, b []byte) {
	t.Helper()
	var sp spb.Status
	if proto.Unmarshal(b, &sp) != nil || sp.Code == 0 {
		return // OK is no error
	}
	s := status.FromProto(&sp)
	for _, err := range []error{s.Err(), fmt.Errorf("GetVersion: %w", s.Err())} {
		switch c := Classify(err); c {
		case Down, ClusterAnswer, PluginAnswer:
		default:
			t.Fatalf("Classify(%v) = %d, no class", err, c)
		}
		if a := Answer(err); !strings.HasPrefix(a, s.Code().String()+": ") || !strings.HasSuffix(a, s.Message()) {
			t.Fatalf("Answer(%v) = %q, not its code and message", err, a)
		}
	}
}
