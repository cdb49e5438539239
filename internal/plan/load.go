package plan

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/upshift-dev/upshift/api/v1alpha1"
)

// Loaded is a parsed plan and the directory its relative paths start from.
type Loaded struct {
	Plan    *v1alpha1.UpgradePlan
	BaseDir string
}

// Load reads a plan file strictly: an unknown field is an error, so a typo
// never silently drops a setting.
func Load(path string) (*Loaded, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	var p v1alpha1.UpgradePlan
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w (check the field names and value types against the UpgradePlan schema)", path, err)
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	return &Loaded{Plan: &p, BaseDir: abs}, nil
}
