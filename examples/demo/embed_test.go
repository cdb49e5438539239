package demo_test

import (
	"io/fs"
	"testing"

	demo "github.com/upshift-dev/upshift/examples/demo"
)

// The binary carries every version (upshift demo writes FS to disk and
// applies from there), identical to the files here.
func TestFSEmbedsEveryVersion(t *testing.T) {
	err := fs.WalkDir(demo.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		embedded, _ := fs.ReadFile(demo.FS, p)
		onDisk, err := fs.ReadFile(dirFS, p)
		if err != nil || string(embedded) != string(onDisk) {
			t.Errorf("%s: embedded copy differs from the file (%v)", p, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		if _, err := fs.Stat(demo.FS, v+"/plan.yaml"); err != nil {
			t.Errorf("FS: %v", err)
		}
	}
}
