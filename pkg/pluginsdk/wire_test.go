package pluginsdk

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/upshift-dev/upshift/pkg/pluginsdk/gen/plugin"
	opsv1 "github.com/upshift-dev/upshift/pkg/pluginsdk/gen/upshift/ops/v1"
)

// The wire contract, written out from the multicluster upgrade operator's
// src/plugin/plugin_api.proto (multicluster-upgrade-operator-proto v0.0.1):
// a plugin built for the operator must work with Upshift, so any change to
// plugin_api.proto that these tables do not also get is a mistake.

type wireMethod struct{ name, in, out string }

type wireField struct {
	name   string
	number protoreflect.FieldNumber
	kind   protoreflect.Kind
	// typ is the message or enum type of a message or enum field.
	typ      protoreflect.FullName
	repeated bool
}

type wireEnumValue struct {
	name   protoreflect.Name
	number protoreflect.EnumNumber
}

var operatorMethods = []wireMethod{
	{"/plugin.Cluster/HealthCheck", "google.protobuf.Empty", "google.protobuf.Empty"},
	{"/plugin.Cluster/GetVersion", "plugin.GetVersionRequest", "plugin.ClusterVersion"},
	{"/plugin.Cluster/GetClusterStatus", "plugin.GetClusterStatusRequest", "plugin.ClusterStatus"},
	{"/plugin.Cluster/GetOperationStatus", "plugin.GetOperationStatusRequest", "plugin.OperationStatus"},
	{"/plugin.Cluster/ServiceIn", "plugin.ServiceInRequest", "plugin.Operation"},
	{"/plugin.Cluster/ServiceOut", "plugin.ServiceOutRequest", "plugin.Operation"},
	{"/plugin.Cluster/UpgradeMaster", "plugin.MasterVersion", "plugin.Operation"},
	{"/plugin.Cluster/UpgradeNodePool", "plugin.NodePoolVersion", "plugin.Operation"},
}

const str, boolean, enum, msg = protoreflect.StringKind, protoreflect.BoolKind, protoreflect.EnumKind, protoreflect.MessageKind

var operatorMessages = map[protoreflect.FullName][]wireField{
	"plugin.GetVersionRequest":       {{name: "clusterID", number: 1, kind: str}},
	"plugin.GetClusterStatusRequest": {{name: "clusterID", number: 1, kind: str}},
	"plugin.GetOperationStatusRequest": {
		{name: "clusterID", number: 1, kind: str},
		{name: "operationID", number: 2, kind: str},
		{name: "type", number: 3, kind: str},
	},
	"plugin.ServiceInRequest":  {{name: "clusterID", number: 1, kind: str}},
	"plugin.ServiceOutRequest": {{name: "clusterID", number: 1, kind: str}},
	"plugin.Operation": {
		{name: "type", number: 1, kind: str},
		{name: "operationID", number: 2, kind: str},
	},
	"plugin.OperationStatus": {{name: "status", number: 1, kind: enum, typ: "plugin.OperationStatusType"}},
	"plugin.ClusterStatus": {
		{name: "status", number: 1, kind: enum, typ: "plugin.ClusterStatusType"},
		{name: "isAvailable", number: 2, kind: boolean},
	},
	"plugin.ClusterVersion": {
		{name: "master", number: 1, kind: msg, typ: "plugin.MasterVersion"},
		{name: "nodePools", number: 2, kind: msg, typ: "plugin.NodePoolVersion", repeated: true},
	},
	"plugin.MasterVersion": {
		{name: "clusterID", number: 1, kind: str},
		{name: "version", number: 2, kind: str},
	},
	"plugin.NodePoolVersion": {
		{name: "clusterID", number: 1, kind: str},
		{name: "nodePoolID", number: 2, kind: str},
		{name: "version", number: 3, kind: str},
	},
}

var operatorEnums = map[protoreflect.FullName][]wireEnumValue{
	"plugin.OperationStatusType": {{"UNKNOWN", 0}, {"RUNNING", 1}, {"DONE", 2}, {"FAILED", 3}},
	"plugin.ClusterStatusType":   {{"STATUS_SERVICE_IN", 0}, {"STATUS_SERVICE_OUT", 1}},
}

// Upshift's own service: plugins built against it rely on it as well.
var opsMethods = []wireMethod{
	{"/upshift.ops.v1.Ops/Capabilities", "google.protobuf.Empty", "upshift.ops.v1.OpsCapabilities"},
	{"/upshift.ops.v1.Ops/DescribeOperation", "upshift.ops.v1.OperationRequest", "upshift.ops.v1.OperationReport"},
	{"/upshift.ops.v1.Ops/WaitOperation", "upshift.ops.v1.WaitOperationRequest", "upshift.ops.v1.OperationReport"},
	{"/upshift.ops.v1.Ops/RevertCluster", "upshift.ops.v1.RevertClusterRequest", "plugin.Operation"},
	{"/upshift.ops.v1.Ops/FindOperation", "upshift.ops.v1.FindOperationRequest", "plugin.Operation"},
}

var opsMessages = map[protoreflect.FullName][]wireField{
	"upshift.ops.v1.OperationRequest": {
		{name: "clusterID", number: 1, kind: str},
		{name: "operation", number: 2, kind: msg, typ: "plugin.Operation"},
	},
	"upshift.ops.v1.WaitOperationRequest": {
		{name: "clusterID", number: 1, kind: str},
		{name: "operation", number: 2, kind: msg, typ: "plugin.Operation"},
		{name: "timeout", number: 3, kind: msg, typ: "google.protobuf.Duration"},
	},
	"upshift.ops.v1.OperationReport": {
		{name: "status", number: 1, kind: enum, typ: "plugin.OperationStatusType"},
		{name: "message", number: 2, kind: str},
		{name: "done", number: 3, kind: protoreflect.Int32Kind},
		{name: "total", number: 4, kind: protoreflect.Int32Kind},
	},
	"upshift.ops.v1.RevertClusterRequest": {
		{name: "clusterID", number: 1, kind: str},
		{name: "to", number: 2, kind: msg, typ: "plugin.ClusterVersion"},
	},
	"upshift.ops.v1.OpsCapabilities": {
		{name: "describeOperation", number: 1, kind: protoreflect.BoolKind},
		{name: "waitOperation", number: 2, kind: protoreflect.BoolKind},
		{name: "revertCluster", number: 3, kind: protoreflect.BoolKind},
		{name: "findOperation", number: 4, kind: protoreflect.BoolKind},
	},
	"upshift.ops.v1.FindOperationRequest": {
		{name: "clusterID", number: 1, kind: str},
		{name: "requestID", number: 2, kind: str},
	},
}

func TestWireMatchesOperator(t *testing.T) {
	f := plugin.File_plugin_plugin_api_proto
	if f.Package() != "plugin" {
		t.Errorf("package %s, want plugin", f.Package())
	}
	checkFile(t, f, "plugin.Cluster", operatorMethods, operatorMessages, operatorEnums)
}

func TestWireOps(t *testing.T) {
	f := opsv1.File_upshift_ops_v1_ops_proto
	checkFile(t, f, "upshift.ops.v1.Ops", opsMethods, opsMessages, nil)
}

// checkFile compares f with the tables, both ways: a method, message,
// field or enum value the tables do not list fails too.
func checkFile(t *testing.T, f protoreflect.FileDescriptor, service protoreflect.FullName, methods []wireMethod, messages map[protoreflect.FullName][]wireField, enums map[protoreflect.FullName][]wireEnumValue) {
	t.Helper()
	if f.Services().Len() != 1 || f.Services().Get(0).FullName() != service {
		t.Fatalf("%s: want the one service %s", f.Path(), service)
	}
	sd := f.Services().Get(0)
	if sd.Methods().Len() != len(methods) {
		t.Errorf("%s has %d methods, want %d", service, sd.Methods().Len(), len(methods))
	}
	for i := 0; i < sd.Methods().Len(); i++ {
		m := sd.Methods().Get(i)
		got := wireMethod{"/" + string(service) + "/" + string(m.Name()), string(m.Input().FullName()), string(m.Output().FullName())}
		if i >= len(methods) || got != methods[i] {
			t.Errorf("method %d: %+v, want %+v", i, got, at(methods, i))
		}
		if m.IsStreamingClient() || m.IsStreamingServer() {
			t.Errorf("%s streams; every method is unary", got.name)
		}
	}

	if f.Messages().Len() != len(messages) {
		t.Errorf("%s has %d messages, want %d", f.Path(), f.Messages().Len(), len(messages))
	}
	for i := 0; i < f.Messages().Len(); i++ {
		md := f.Messages().Get(i)
		want, ok := messages[md.FullName()]
		if !ok {
			t.Errorf("message %s is not in the contract", md.FullName())
			continue
		}
		checkFields(t, md, want)
	}

	if f.Enums().Len() != len(enums) {
		t.Errorf("%s has %d enums, want %d", f.Path(), f.Enums().Len(), len(enums))
	}
	for i := 0; i < f.Enums().Len(); i++ {
		ed := f.Enums().Get(i)
		want, ok := enums[ed.FullName()]
		if !ok {
			t.Errorf("enum %s is not in the contract", ed.FullName())
			continue
		}
		if ed.Values().Len() != len(want) {
			t.Errorf("enum %s has %d values, want %d", ed.FullName(), ed.Values().Len(), len(want))
		}
		for j := 0; j < ed.Values().Len(); j++ {
			v := ed.Values().Get(j)
			if got := (wireEnumValue{v.Name(), v.Number()}); j >= len(want) || got != want[j] {
				t.Errorf("enum %s value %d: %v, want %v", ed.FullName(), j, got, at(want, j))
			}
		}
	}
}

func checkFields(t *testing.T, md protoreflect.MessageDescriptor, want []wireField) {
	t.Helper()
	if md.Fields().Len() != len(want) {
		t.Errorf("message %s has %d fields, want %d", md.FullName(), md.Fields().Len(), len(want))
	}
	for j := 0; j < md.Fields().Len(); j++ {
		fd := md.Fields().Get(j)
		got := wireField{
			name:     string(fd.Name()),
			number:   fd.Number(),
			kind:     fd.Kind(),
			repeated: fd.Cardinality() == protoreflect.Repeated,
		}
		switch fd.Kind() {
		case protoreflect.MessageKind:
			got.typ = fd.Message().FullName()
		case protoreflect.EnumKind:
			got.typ = fd.Enum().FullName()
		}
		if j >= len(want) || got != want[j] {
			t.Errorf("message %s field %d: %+v, want %+v", md.FullName(), j, got, at(want, j))
		}
		if fd.HasPresence() && fd.Kind() != protoreflect.MessageKind {
			t.Errorf("message %s field %s is optional; proto3 scalars are plain", md.FullName(), fd.Name())
		}
	}
}

// at is s[i], or the zero value past its end (for error messages).
func at[T any](s []T, i int) T {
	var zero T
	if i < len(s) {
		return s[i]
	}
	return zero
}
