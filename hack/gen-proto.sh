#!/usr/bin/env bash
# Generates the Go code of the plugin protocol (pkg/pluginsdk/gen) from
# pkg/pluginsdk/proto with protoc and the pinned Go generators. The result
# is committed: building and testing never need protoc, only changing a
# .proto does (make proto).
set -euo pipefail
cd "$(dirname "$0")/.."

# Match go.mod: google.golang.org/protobuf v1.36.x and grpc v1.72.x
# (protoc-gen-go-grpc v1.5.1's code needs grpc >= 1.64).
PROTOC_GEN_GO=v1.36.5
PROTOC_GEN_GO_GRPC=v1.5.1

if ! command -v protoc >/dev/null; then
  echo "protoc not found: install it (Debian/Ubuntu: apt-get install protobuf-compiler; other systems: https://github.com/protocolbuffers/protobuf/releases)" >&2
  exit 1
fi

bin=$PWD/bin/tools
mkdir -p "$bin"
GOBIN=$bin go install google.golang.org/protobuf/cmd/protoc-gen-go@$PROTOC_GEN_GO
GOBIN=$bin go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$PROTOC_GEN_GO_GRPC

src=pkg/pluginsdk/proto
out=pkg/pluginsdk/gen
rm -rf "$out"
mkdir -p "$out"
# module= strips the module path from go_package, so files land under
# pkg/pluginsdk/gen/... whatever the checkout's directory.
PATH=$bin:$PATH protoc -I "$src" \
  --go_out="." --go_opt=module=github.com/upshift-dev/upshift \
  --go-grpc_out="." --go-grpc_opt=module=github.com/upshift-dev/upshift \
  plugin/plugin_api.proto upshift/ops/v1/ops.proto
