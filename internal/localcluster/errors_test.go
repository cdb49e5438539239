package localcluster_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upshift-dev/upshift/internal/localcluster"
)

// realBinDir is where the tests' binaries were built.
func realBinDir(t *testing.T) string {
	t.Helper()
	d, err := localcluster.DefaultBinDir()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// binDirWith makes a binary directory whose tools link to the real ones,
// except those given contents here.
func binDirWith(t *testing.T, replaced map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range localcluster.ToolNames() {
		p := filepath.Join(dir, name)
		if content, ok := replaced[name]; ok {
			if content != "" {
				if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			continue
		}
		if err := os.Symlink(filepath.Join(realBinDir(t), name), p); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestMissingBinaryWithoutGoToolchainSaysHowToFix(t *testing.T) {
	dir := binDirWith(t, map[string]string{"kube-apiserver": ""}) // "" = missing
	t.Setenv("PATH", t.TempDir())                                 // no go here
	_, err := localcluster.EnsureBinaries(context.Background(), localcluster.EnsureOptions{Dir: dir})
	if !errors.Is(err, localcluster.ErrNoGoToolchain) {
		t.Fatalf("err = %v, want ErrNoGoToolchain", err)
	}
	for _, want := range []string{"install it", localcluster.EnvBinDir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestFailedBuildReportsTheLogAndWhatToDo(t *testing.T) {
	dir := binDirWith(t, map[string]string{"kwok": ""})
	fakeGo := t.TempDir()
	script := "#!/bin/sh\necho 'go: simulated: module proxy unreachable' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(fakeGo, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", fakeGo+":/usr/bin:/bin")
	var progress strings.Builder
	_, err := localcluster.EnsureBinaries(context.Background(), localcluster.EnsureOptions{Dir: dir, Progress: &progress})
	if err == nil {
		t.Fatal("a failing go build was reported as success")
	}
	for _, want := range []string{"build kwok failed", "simulated: module proxy unreachable", "full log:", "proxy is reachable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	if _, serr := os.Stat(filepath.Join(dir, "kwok")); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("a failed build left a kwok binary behind (stat: %v)", serr)
	}
}

func TestCorruptBinaryIsDetected(t *testing.T) {
	dir := binDirWith(t, map[string]string{"etcd": "\x7fELF truncated"})
	var progress strings.Builder
	_, err := localcluster.EnsureBinaries(context.Background(), localcluster.EnsureOptions{Dir: dir, Progress: &progress, NoBuild: true})
	if err == nil {
		t.Fatal("a corrupt etcd binary was accepted")
	}
	if !strings.Contains(progress.String(), "etcd at "+filepath.Join(dir, "etcd")+" does not run") {
		t.Errorf("progress does not say etcd does not run:\n%s", progress.String())
	}
	if !strings.Contains(err.Error(), "etcd") || !strings.Contains(err.Error(), localcluster.EnvBinDir) {
		t.Errorf("error does not name etcd and the way out: %v", err)
	}
	// The other binaries were checked and pass.
	if strings.Contains(err.Error(), "kube-apiserver") {
		t.Errorf("error blames kube-apiserver too: %v", err)
	}
}

func TestPortInUseIsReportedBeforeAnythingStarts(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	dir := filepath.Join(t.TempDir(), "c")
	_, err = localcluster.Start(context.Background(), localcluster.Options{Name: "busy", Dir: dir, APIServerPort: port, BinDir: realBinDir(t), NoBuild: true})
	if !errors.Is(err, localcluster.ErrPortInUse) {
		t.Fatalf("err = %v, want ErrPortInUse", err)
	}
	if !strings.Contains(err.Error(), "--port") {
		t.Errorf("error does not say how to choose another port: %v", err)
	}
	if left := processesMentioning(dir); len(left) > 0 {
		t.Errorf("processes started despite the error: %v", left)
	}
}

func TestSecondStartOfARunningClusterIsRefused(t *testing.T) {
	c := startTied(t, "twice")
	_, err := localcluster.Start(context.Background(), localcluster.Options{Name: "twice", Dir: c.Dir, BinDir: realBinDir(t)})
	if !errors.Is(err, localcluster.ErrAlreadyRunning) {
		t.Fatalf("err = %v, want ErrAlreadyRunning", err)
	}
	if !strings.Contains(err.Error(), "upshift cluster down --name twice") || !strings.Contains(err.Error(), c.Server) {
		t.Errorf("error does not say where it runs and how to stop it: %v", err)
	}
	// The running cluster was not disturbed.
	if _, err := clientset(t, c).CoreV1().Nodes().List(context.Background(), metav1ListOptions); err != nil {
		t.Fatalf("running cluster broken by the refused start: %v", err)
	}
}

func TestDownOfUnknownClusterSaysSo(t *testing.T) {
	t.Setenv(localcluster.EnvClustersDir, t.TempDir())
	err := localcluster.Down("nosuch", nil)
	if !errors.Is(err, localcluster.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), "upshift cluster status") {
		t.Errorf("error does not point at `upshift cluster status`: %v", err)
	}
}

func TestInvalidOptionsAreRejected(t *testing.T) {
	for _, tc := range []struct {
		opts localcluster.Options
		want string
	}{
		{localcluster.Options{Name: "Bad_Name"}, "invalid cluster name"},
		{localcluster.Options{Nodes: -1}, "--nodes"},
		{localcluster.Options{APIServerPort: 70000}, "--port"},
	} {
		_, err := localcluster.Start(context.Background(), tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Start(%+v) = %v, want error mentioning %q", tc.opts, err, tc.want)
		}
	}
}
