package testenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	binaryOnce sync.Once
	binaryDir  string
	binaryPath string
	binaryErr  error
)

// UpshiftBinary builds cmd/upshift once per test process, for tests that
// run the real binary as a user would (`upshift controller`, `upshift
// demo`); Main removes it when the tests end.
func UpshiftBinary(t testing.TB) string {
	t.Helper()
	binaryOnce.Do(func() {
		binaryDir, binaryErr = os.MkdirTemp("", "upshift-bin-")
		if binaryErr != nil {
			return
		}
		binaryPath = filepath.Join(binaryDir, "upshift")
		cmd := exec.Command("go", "build", "-o", binaryPath, "./cmd/upshift")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			binaryErr = errors.New(string(out))
		}
	})
	if binaryErr != nil {
		t.Fatalf("build upshift: %v", binaryErr)
	}
	return binaryPath
}

// removeBinary deletes what UpshiftBinary built.
func removeBinary() {
	if binaryDir != "" {
		_ = os.RemoveAll(binaryDir)
	}
}

// repoRoot is three directories up from this file.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}
