package localcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// stamps remembers the size and modification time of each binary that passed
// its check, so later starts skip the exec. A binary that was replaced or
// truncated no longer matches and is checked again.
type stamps map[string]stamp

type stamp struct {
	Size    int64     `json:"size"`
	ModTime time.Time `json:"modTime"`
}

const stampsFile = ".verified.json"

func loadStamps(dir string) stamps {
	s := stamps{}
	b, err := os.ReadFile(filepath.Join(dir, stampsFile))
	if err == nil {
		_ = json.Unmarshal(b, &s) // a corrupt file only costs a re-check
	}
	return s
}

func (s stamps) matches(name string, fi os.FileInfo) bool {
	st, ok := s[name]
	return ok && st.Size == fi.Size() && st.ModTime.Equal(fi.ModTime())
}

func (s stamps) record(name string, fi os.FileInfo) {
	s[name] = stamp{Size: fi.Size(), ModTime: fi.ModTime()}
}

func (s stamps) save(dir string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, stampsFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("record verified binaries: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, stampsFile)); err != nil {
		return errors.Join(fmt.Errorf("record verified binaries: %w", err), os.Remove(tmp))
	}
	return nil
}
