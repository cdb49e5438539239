// Package server is the third driver of the engine: an HTTP API (REST
// with JSON, server-sent events of run transitions) and the embedded web
// UI, served by `upshift serve`. docs/api.md is its reference and
// /api/openapi.json its OpenAPI document.
//
// Everything goes through the same packages as the CLI: internal/upgrade
// solves and runs the catalog's hops, internal/runner drives each run
// under the cluster's lease and saves every transition in the run store.
// The server adds the wizard (package wizard: which call is allowed in
// which state), kept in a ConfigMap so a restarted server drives on what
// it was driving, and one shared watch of the runs that serves every
// event stream and status read.
//
// Handlers do no work of their own beyond decoding, checking and
// answering: a start answers at once and the run is driven in a
// goroutine bound to the server's lifetime, not the request's.
package server
