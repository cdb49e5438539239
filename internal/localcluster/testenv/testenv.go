// Package testenv gives integration tests a real local control plane: one
// cluster per test package, started in TestMain, tied to the test process
// (it dies with it, even on SIGKILL) and stopped when the tests end.
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		c := testenv.Cluster(t)
//		cfg := c.RESTConfig()
//		…
//	}
//
// With `go test -short` the cluster is not started and Cluster skips the
// test, so pure-logic tests still run without binaries.
package testenv

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// DirPrefix starts the name of every test cluster's directory; `make test`
// checks that no process mentioning it is left after the tests.
const DirPrefix = "upshift-test-"

var (
	shared   *localcluster.Cluster
	startErr error
)

// Main starts the package's cluster, runs the tests, stops the cluster and
// exits with the tests' code.
func Main(m *testing.M) {
	flag.Parse()
	code := run(m)
	os.Exit(code)
}

func run(m *testing.M) int {
	defer removeBinary()
	if !testing.Short() {
		c, err := StartTied(localcluster.Options{Name: "pkg"})
		if err != nil {
			startErr = err
			fmt.Fprintln(os.Stderr, "testenv: start local cluster:", err)
		}
		shared = c
		defer func() {
			if shared != nil {
				if err := shared.Stop(); err != nil {
					fmt.Fprintln(os.Stderr, "testenv: stop local cluster:", err)
				}
			}
		}()
	}
	return m.Run()
}

// Cluster returns the package's cluster. It skips the test under -short and
// fails it if the cluster could not start.
func Cluster(t testing.TB) *localcluster.Cluster {
	t.Helper()
	SkipIfShort(t)
	if startErr != nil {
		t.Fatalf("local cluster did not start: %v", startErr)
	}
	if shared == nil {
		t.Fatal("testenv.Cluster called without testenv.Main in TestMain")
	}
	return shared
}

// StartTied starts an extra cluster tied to this process, in a fresh
// directory named upshift-test-<name>-*. The caller stops it.
func StartTied(o localcluster.Options) (*localcluster.Cluster, error) {
	o.Detached = false
	if o.Progress == nil {
		o.Progress = os.Stderr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute) // covers a first build
	defer cancel()
	dir, err := os.MkdirTemp("", DirPrefix+o.Name+"-")
	if err != nil {
		return nil, err
	}
	o.Dir = dir
	// Start itself starts again on other ports when one was taken between
	// choosing and binding it.
	c, err := localcluster.Start(ctx, o)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// SkipIfShort skips a test that starts or uses a real control plane when
// `go test -short` asks for pure-logic tests only (`make unit`).
func SkipIfShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this test runs against a real local control plane (seconds per cluster); run it with `make test`")
	}
}
