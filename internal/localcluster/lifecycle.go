package localcluster

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// prepareDir makes sure the cluster directory is free: a running cluster is
// an error, a stale one (its processes gone) is cleaned, and a directory that
// is not a cluster's is never touched.
func prepareDir(o Options) error {
	st, err := readState(o.Dir)
	switch {
	case err == nil:
		if running := st.Running(); len(running) > 0 {
			return fmt.Errorf("%w: cluster %q at %s (%d of %d processes up); use it with `export KUBECONFIG=%s`, or stop it first with `upshift cluster down --name %s`",
				ErrAlreadyRunning, st.Name, st.Server, len(running), len(st.Processes), st.Kubeconfig, st.Name)
		}
		fmt.Fprintf(o.Progress, "cleaning stale state of cluster %q in %s (its processes are gone)\n", st.Name, o.Dir)
		return removeClusterDir(o.Dir)
	case errors.Is(err, ErrNotFound):
		entries, rerr := os.ReadDir(o.Dir)
		if errors.Is(rerr, os.ErrNotExist) || (rerr == nil && len(entries) == 0) {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("cluster directory %s: %w", o.Dir, rerr)
		}
		// A start that failed before writing its state leaves pki/ behind.
		if _, perr := os.Stat(filepath.Join(o.Dir, "pki", "ca.crt")); perr == nil {
			return removeClusterDir(o.Dir)
		}
		return fmt.Errorf("directory %s exists and is not a local cluster's: choose another --name, or remove it yourself", o.Dir)
	default:
		return err
	}
}

// removeClusterDir deletes a cluster's directory after checking it looks
// like one, so a wrong path never wipes someone's files.
func removeClusterDir(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "pki", "ca.crt")); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(dir); errors.Is(serr, os.ErrNotExist) {
				return nil
			}
		}
		return fmt.Errorf("refusing to remove %s: it does not look like a local cluster directory", dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove cluster directory: %w", err)
	}
	return nil
}

// Down stops the named cluster's processes (those it recorded, by PID and
// start time) and removes its directory.
func Down(name string, progress io.Writer) error {
	dir, err := dirOf(name)
	if err != nil {
		return err
	}
	return DownDir(dir, progress)
}

// DownDir is Down for a cluster directory.
func DownDir(dir string, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	st, err := readState(dir)
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%w: no local cluster in %s; `upshift cluster status` lists the clusters there are", ErrNotFound, dir)
	}
	if err != nil {
		return err
	}
	running := st.Running()
	if err := stopAll(st.Processes); err != nil {
		return fmt.Errorf("stop cluster %q: %w", st.Name, err)
	}
	if err := removeClusterDir(dir); err != nil {
		return err
	}
	fmt.Fprintf(progress, "cluster %q stopped (%d processes) and its data removed\n", st.Name, len(running))
	return nil
}

// Get reads the named cluster's state.
func Get(name string) (*State, error) {
	dir, err := dirOf(name)
	if err != nil {
		return nil, err
	}
	st, err := readState(dir)
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: %q (no state in %s); start it with `upshift cluster up --name %s`", ErrNotFound, name, dir, name)
	}
	return st, err
}

// List returns the state of every cluster under ClustersDir, by name.
func List() ([]*State, error) {
	root, err := ClustersDir()
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*State
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		st, err := readState(filepath.Join(root, e.Name()))
		if err != nil {
			continue // not a cluster, or one that never finished writing its state
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func dirOf(name string) (string, error) {
	o, err := Options{Name: name}.withDefaults()
	if err != nil {
		return "", err
	}
	return o.Dir, nil
}
