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
	if old, err := os.ReadFile(filepath.Join(dir, stampsFile)); err == nil && string(old) == string(b) {
		return nil
	}
	// A unique temporary name: several clusters may start at once.
	f, err := os.CreateTemp(dir, stampsFile+".*.tmp")
	if err != nil {
		return fmt.Errorf("record verified binaries: %w", err)
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), filepath.Join(dir, stampsFile))
	}
	if werr != nil {
		return errors.Join(fmt.Errorf("record verified binaries: %w", werr), os.Remove(f.Name()))
	}
	return nil
}
