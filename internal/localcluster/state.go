package localcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// stateFile is the cluster's record in its directory: what runs and where.
const stateFile = "cluster.json"

// State is what a started cluster records about itself, so another process
// (`upshift cluster down`, `status`) can find and stop it.
type State struct {
	Name       string       `json:"name"`
	Dir        string       `json:"dir"`
	Server     string       `json:"server"`
	Kubeconfig string       `json:"kubeconfig"`
	Ports      Ports        `json:"ports"`
	Nodes      int          `json:"nodes"`
	Detached   bool         `json:"detached"`
	OwnerPID   int          `json:"ownerPID"`
	Started    time.Time    `json:"started"`
	Processes  []procRecord `json:"processes"`
}

// ErrNotFound is returned for a cluster that has no state on disk.
var ErrNotFound = errors.New("cluster not found")

// ErrAlreadyRunning is returned when starting a cluster that runs.
var ErrAlreadyRunning = errors.New("cluster already running")

func readState(dir string) (*State, error) {
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read cluster state: %w", err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("cluster state %s is corrupt (%v): remove the directory %s and start again", filepath.Join(dir, stateFile), err, dir)
	}
	return &s, nil
}

// writeState writes atomically: a reader never sees half a file.
func writeState(s *State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.Dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write cluster state: %w", err)
	}
	return os.Rename(tmp, filepath.Join(s.Dir, stateFile))
}

// Running lists the recorded processes that still run.
func (s *State) Running() []string {
	var names []string
	for _, p := range s.Processes {
		if p.alive() {
			names = append(names, p.Name)
		}
	}
	return names
}
