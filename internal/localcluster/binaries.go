package localcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Environment variables that override where binaries live and are built.
// They avoid the ETCD_ prefix on purpose: etcd rejects unknown ETCD_* variables.
const (
	EnvBinDir  = "UPSHIFT_LOCALCLUSTER_BIN_DIR"
	EnvNoBuild = "UPSHIFT_LOCALCLUSTER_NO_BUILD"
)

// ErrNoGoToolchain is returned when a binary must be built and no go command
// is on PATH.
var ErrNoGoToolchain = errors.New("no Go toolchain found")

// DefaultBinDir is where built binaries are cached:
// os.UserCacheDir()/upshift/localcluster/<versions>/bin, or $UPSHIFT_LOCALCLUSTER_BIN_DIR.
func DefaultBinDir() (string, error) {
	return cacheDir(EnvBinDir, "localcluster", VersionsKey(), "bin")
}

// cacheDir returns $env if set, else os.UserCacheDir()/upshift/<parts>.
func cacheDir(env string, parts ...string) (string, error) {
	if d := os.Getenv(env); d != "" {
		return d, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the user cache directory: %w (set %s)", err, env)
	}
	return filepath.Join(append([]string{cache, "upshift"}, parts...)...), nil
}

// Binaries locates every tool in one directory.
type Binaries struct{ Dir string }

// Path returns the path of the named tool.
func (b Binaries) Path(name string) string { return filepath.Join(b.Dir, name) }

// EnsureOptions tunes EnsureBinaries.
type EnsureOptions struct {
	Dir      string    // binary directory; DefaultBinDir when empty
	Progress io.Writer // where build progress goes; io.Discard when nil
	NoBuild  bool      // report missing binaries instead of building them
	Force    bool      // rebuild even binaries that are present and run
}

// EnsureBinaries builds whatever is missing, corrupt or out of date, and
// checks that each binary runs and reports its pinned version. Binaries that
// were verified before are trusted by size and modification time, so a warm
// start costs a stat per binary, not an exec.
func EnsureBinaries(ctx context.Context, opts EnsureOptions) (Binaries, error) {
	dir := opts.Dir
	if dir == "" {
		d, err := DefaultBinDir()
		if err != nil {
			return Binaries{}, err
		}
		dir = d
	}
	out := opts.Progress
	if out == nil {
		out = io.Discard
	}
	noBuild := opts.NoBuild || os.Getenv(EnvNoBuild) != ""
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Binaries{}, fmt.Errorf("create binary directory: %w", err)
	}
	bins := Binaries{Dir: dir}
	stamps := loadStamps(dir)

	var todo []tool
	for _, t := range tools {
		p := bins.Path(t.name)
		fi, err := os.Stat(p)
		switch {
		case opts.Force:
			todo = append(todo, t)
		case errors.Is(err, os.ErrNotExist):
			todo = append(todo, t)
		case err != nil:
			return bins, fmt.Errorf("stat %s: %w", p, err)
		case stamps.matches(t.name, fi):
			// verified before and unchanged since
		default:
			if cerr := checkTool(ctx, p, t); cerr != nil {
				fmt.Fprintf(out, "%s at %s does not run (%v); rebuilding it\n", t.name, p, cerr)
				todo = append(todo, t)
				continue
			}
			stamps.record(t.name, fi)
		}
	}
	if len(todo) == 0 {
		return bins, stamps.save(dir)
	}
	if noBuild {
		var names []string
		for _, t := range todo {
			names = append(names, t.name)
		}
		return bins, fmt.Errorf("missing or unusable binaries in %s: %s; building is disabled (%s or --no-build): unset it, or point %s at a directory holding them",
			dir, strings.Join(names, ", "), EnvNoBuild, EnvBinDir)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return bins, fmt.Errorf("%w on PATH: building the local control plane (%s) needs Go 1.24 or newer; install it from https://go.dev/dl and retry, or set %s to a directory with prebuilt binaries",
			ErrNoGoToolchain, strings.Join(ToolNames(), ", "), EnvBinDir)
	}
	fmt.Fprintf(out, "building %d local control plane binaries into %s (the first build downloads ~260 MB of modules and takes about 9 minutes on 2 cores)\n", len(todo), dir)
	start := time.Now()
	for i, t := range todo {
		if err := buildTool(ctx, goBin, dir, t, fmt.Sprintf("[%d/%d]", i+1, len(todo)), out); err != nil {
			_ = stamps.save(dir)
			return bins, err
		}
		fi, err := os.Stat(bins.Path(t.name))
		if err != nil {
			return bins, err
		}
		stamps.record(t.name, fi)
		if err := stamps.save(dir); err != nil {
			return bins, err
		}
	}
	fmt.Fprintf(out, "built %d binaries in %s\n", len(todo), time.Since(start).Round(time.Second))
	return bins, nil
}

// checkTool runs the tool's cheap check and compares its version.
func checkTool(ctx context.Context, path string, t tool) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, t.check...)
	cmd.Env = scrubbedEnv()
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", t.name, strings.Join(t.check, " "), err, tail(b, 300))
	}
	if !bytes.Contains(b, []byte(t.want)) {
		return fmt.Errorf("%s reports %q, want version %s", t.name, strings.TrimSpace(string(tail(b, 200))), t.want)
	}
	return nil
}

// tail returns at most the last n bytes of b.
func tail(b []byte, n int) []byte {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		return append([]byte("…"), b[len(b)-n:]...)
	}
	return b
}

// scrubbedEnv drops ETCD_* variables, which etcd reads and rejects when unknown.
func scrubbedEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ETCD_") {
			env = append(env, kv)
		}
	}
	return env
}
