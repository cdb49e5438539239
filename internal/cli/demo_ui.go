package cli

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/upshift-dev/upshift/internal/server/auth"
)

// demoUI installs the demo platform's 1.0.0 and serves the API and the
// wizard over it, with the demo's catalog (1.1.0 and a broken 2.0.0) and
// its app.
func demoUI(cmd *cobra.Command, kubeconfig, dir, listen string) error {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "\n# install the demo platform's 1.0.0; the wizard upgrades it from there\n$ upshift apply -f examples/demo/1.0.0/plan.yaml\n")
	if code := runSubcommand(cmd, "apply", "-f", filepath.Join(dir, "1.0.0", "plan.yaml"), "--kubeconfig", kubeconfig); code != ExitOK {
		return fmt.Errorf("demo: installing 1.0.0 exited %d", code)
	}
	return demoServe(cmd, kubeconfig, listen, demoServed{
		try:   "try 1.1.0 (it waits for your approval), then 2.0.0 (it fails and rolls back)",
		shown: "--catalog examples/demo --app-plan examples/demo/app/plan.yaml",
		args:  []string{"--catalog", dir, "--app-plan", filepath.Join(dir, "app", "plan.yaml")},
	})
}

// demoServed is what a demo serves: upshift serve's args, as a user
// would type them (shown), and what to try.
type demoServed struct {
	try, shown string
	args       []string
}

// demoServe serves the API and the wizard until interrupted: it prints
// the URL, where the password is, and a login token, then what to try.
func demoServe(cmd *cobra.Command, kubeconfig, listen string, d demoServed) error {
	out := cmd.OutOrStdout()
	stateDir := filepath.Join(defaultStateDir(), "demo")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return err
	}
	secret := make([]byte, 12)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	passwordFile := filepath.Join(stateDir, "admin-password")
	password := hex.EncodeToString(secret)
	if err := os.WriteFile(passwordFile, []byte(password+"\n"), 0o600); err != nil {
		return err
	}
	passwords, err := auth.NewPasswords(password, "")
	if err != nil {
		return err
	}
	key, err := auth.LoadOrCreateKey(stateDir)
	if err != nil {
		return err
	}
	tokens, err := auth.NewTokens(key, 12*time.Hour)
	if err != nil {
		return err
	}
	token, _, err := tokens.Issue(auth.Admin, passwords)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n# the wizard: open the URL below (the certificate is self-signed: trust it or accept it once),\n"+
		"# log in with the password in %s,\n# or call the API with the token:\n#   curl --cacert %s -H 'Authorization: Bearer %s' %s/api/linux/upgrade/state\n"+
		"# %s. Ctrl-C stops the server; the cluster stays up.\n",
		passwordFile, filepath.Join(stateDir, "tls.crt"), token, "https://"+listen, d.try)
	fmt.Fprintf(out, "$ upshift serve %s --password-file %s\n", d.shown, passwordFile)
	args := append([]string{"serve", "--kubeconfig", kubeconfig, "--password-file", passwordFile, "--state-dir", stateDir, "--listen", listen}, d.args...)
	if code := runSubcommand(cmd, args...); code != ExitOK {
		return fmt.Errorf("demo: upshift serve exited %d", code)
	}
	return nil
}
