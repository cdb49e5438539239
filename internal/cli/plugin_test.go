package cli

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/upshift-dev/upshift/internal/plugin"
	"github.com/upshift-dev/upshift/pkg/pluginsdk"
	"github.com/upshift-dev/upshift/pkg/pluginsdk/plugintest"
)

// startPluginSim runs `upshift plugin sim args...` until the test ends and
// returns the address it printed.
func startPluginSim(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	cmd := NewRootCommand()
	cmd.SetOut(pw)
	cmd.SetArgs(append([]string{"plugin", "sim", "--listen", "127.0.0.1:0"}, args...))
	done := make(chan error, 1)
	go func() {
		done <- cmd.ExecuteContext(ctx)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("upshift plugin sim after its context ended: %v", err)
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("upshift plugin sim printed nothing: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	m := regexp.MustCompile(` on (127\.0\.0\.1:\d+), `).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no address in %q", line)
	}
	return m[1]
}

func simClient(t *testing.T, ep plugin.Endpoint) *plugin.Client {
	t.Helper()
	c, err := plugin.Dial(ep, plugin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The command serves the simulated clusters it was asked for, failing
// what --fail says, over mutual TLS.
func TestPluginSimMutualTLS(t *testing.T) {
	ca := plugintest.NewCA(t)
	server, client := ca.Issue(t), ca.Issue(t, "fleet")
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	addr := startPluginSim(t, "--clusters", "3", "--fail", "UpgradeNodePool:sim-0002",
		"--tls-cert", write("tls.crt", server.CertPEM), "--tls-key", write("tls.key", server.KeyPEM), "--client-ca", write("ca.crt", ca.CertPEM))

	c := simClient(t, plugin.Endpoint{Address: addr, CA: ca.CertPEM, Cert: client.CertPEM, Key: client.KeyPEM})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := c.GetVersion(ctx, "sim-0003")
	if err != nil || v.Master != "1.31.0" || len(v.NodePools) != 2 {
		t.Fatalf("GetVersion: %+v, %v", v, err)
	}
	op, err := c.UpgradeNodePool(ctx, "sim-0002", "pool-1", "1.31.0")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Wait(ctx, "sim-0002", op)
	if err != nil || rep.Status != pluginsdk.OperationFailed || !strings.Contains(rep.Message, "injected failure") {
		t.Errorf("the --fail operation: %+v, %v", rep, err)
	}

	anonymous := simClient(t, plugin.Endpoint{Address: addr, CA: ca.CertPEM})
	if _, err := anonymous.GetVersion(ctx, "sim-0001"); err == nil {
		t.Error("a client without a certificate was answered")
	}
}

// --insecure serves plaintext on loopback.
func TestPluginSimInsecure(t *testing.T) {
	addr := startPluginSim(t, "--insecure", "--clusters", "1")
	c := simClient(t, plugin.Endpoint{Address: addr, Insecure: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if st, err := c.GetClusterStatus(ctx, "sim-0001"); err != nil || !st.Available {
		t.Errorf("GetClusterStatus: %+v, %v", st, err)
	}
}

// The command refuses what it cannot serve safely or simulate.
func TestPluginSimRefuses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:39000", "--insecure"}, "loopback address only"},
		{[]string{"--listen", "127.0.0.1:0"}, "give --tls-cert and --tls-key"},
		{[]string{"--listen", "127.0.0.1:0", "--insecure", "--tls-cert", "c"}, "choose one"},
		{[]string{"--listen", "127.0.0.1:0", "--insecure", "--fail", "UpgradeNodePool"}, "OPERATION:CLUSTER[:AFTER]"},
		{[]string{"--listen", "127.0.0.1:0", "--insecure", "--fail", "UpgradeNodePool:sim-0009"}, "no such cluster"},
		{[]string{"--listen", "127.0.0.1:0", "--insecure", "--fail", "Reboot:sim-0001"}, `failure of "Reboot"`},
		{[]string{"--listen", "127.0.0.1:0", "--tls-cert", "/nonexistent/tls.crt", "--tls-key", "k"}, "certificate file"},
	} {
		_, _, err := run(t, append([]string{"plugin", "sim"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("plugin sim %v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}

// `upshift plugin local` refuses what it cannot serve, naming the flag.
func TestPluginLocalRefuses(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--insecure"}, "--cluster: give at least one"},
		{[]string{"--insecure", "--cluster", "east"}, "write it as ID=KUBECONFIG"},
		{[]string{"--insecure", "--cluster", "east=" + kc}, "read kubeconfig " + kc},
		{[]string{"--cluster", "east=" + kc}, "give --tls-cert and --tls-key"},
	} {
		_, _, err := run(t, append([]string{"plugin", "local", "--listen", "127.0.0.1:0"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("plugin local %v: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}
