package localcluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"time"
)

// buildTool writes the tool's recipe module to a scratch directory and runs
// `go build` in it. The binary is written under a temporary name and renamed
// into place only after it passed its check, so an interrupted build never
// leaves a half-written binary behind.
func buildTool(ctx context.Context, goBin, binDir string, t tool, label string, out io.Writer) error {
	src, err := writeRecipe(filepath.Join(filepath.Dir(binDir), "src"), t.recipe)
	if err != nil {
		return err
	}
	final := filepath.Join(binDir, t.name)
	tmp := final + ".partial"
	logPath := filepath.Join(filepath.Dir(binDir), "build-"+t.name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("create build log: %w", err)
	}
	defer logFile.Close()

	args := []string{"build", "-trimpath", "-ldflags", "-s -w " + t.ldflags, "-o", tmp, t.pkg}
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = src
	// A clean, predictable build: no workspace, no vendor flags from the
	// user's environment, no cgo (nothing here needs it).
	cmd.Env = append(scrubbedEnv(), "GOWORK=off", "GOFLAGS=-mod=readonly", "CGO_ENABLED=0")
	var buf bytes.Buffer
	cmd.Stdout = io.MultiWriter(logFile, &buf)
	cmd.Stderr = io.MultiWriter(logFile, &buf)

	start := time.Now()
	fmt.Fprintf(out, "%s building %s (%s)\n", label, t.name, t.pkg)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start go build for %s: %w", t.name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ticker := time.NewTicker(15 * time.Second)
	defer ticker.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				_ = os.Remove(tmp)
				if ctx.Err() != nil {
					return fmt.Errorf("build %s: interrupted: %w", t.name, ctx.Err())
				}
				return fmt.Errorf("build %s failed after %s: %w\n%s\nfull log: %s\n(check that the Go module proxy is reachable and the disk has ~5 GB free, then run the command again)",
					t.name, time.Since(start).Round(time.Second), err, tail(buf.Bytes(), 1500), logPath)
			}
			if err := checkTool(ctx, tmp, t); err != nil {
				_ = os.Remove(tmp)
				return fmt.Errorf("built %s does not run: %w (log: %s)", t.name, err, logPath)
			}
			if err := os.Rename(tmp, final); err != nil {
				return fmt.Errorf("install %s: %w", t.name, err)
			}
			fmt.Fprintf(out, "%s built %s in %s\n", label, t.name, time.Since(start).Round(time.Second))
			return nil
		case <-ticker.C:
			fmt.Fprintf(out, "%s still building %s… %s\n", label, t.name, time.Since(start).Round(time.Second))
		}
	}
}

// WriteRecipe writes the module that builds the named tool (go.mod and
// go.sum: "kubernetes", "etcd", "kwok", "helm") under root/<name> and
// returns its directory: what `go mod download` of a tool's module needs
// to check it against go.sum instead of the checksum database.
func WriteRecipe(root, name string) (string, error) { return writeRecipe(root, name) }

// writeRecipe materializes recipe/<name>/{go.mod,go.sum} under root/<name>.
func writeRecipe(root, name string) (string, error) {
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create recipe directory: %w", err)
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := recipes.ReadFile(path.Join("recipe", name, f+".txt"))
		if err != nil {
			return "", fmt.Errorf("read embedded recipe %s/%s: %w", name, f, err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return "", fmt.Errorf("write recipe %s/%s: %w", name, f, err)
		}
	}
	return dir, nil
}
