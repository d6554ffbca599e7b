package rollout

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// stateFileVersion is the format version of the state file.
const stateFileVersion = 1

// stateFile is the JSON document written to Options.StateFile.
type stateFile struct {
	Version   int              `json:"version"`
	Languages map[string]Phase `json:"languages"`
}

// LoadState reads the phases saved in path. A missing file is no error:
// it returns an empty map.
func LoadState(path string) (map[string]Phase, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]Phase{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rollout: reading state file: %w", err)
	}
	var sf stateFile
	if err := json.Unmarshal(b, &sf); err != nil {
		return nil, fmt.Errorf("rollout: state file %s: %w", path, err)
	}
	if sf.Version != stateFileVersion {
		return nil, fmt.Errorf("rollout: state file %s has format version %d, want %d", path, sf.Version, stateFileVersion)
	}
	if sf.Languages == nil {
		sf.Languages = map[string]Phase{}
	}
	return sf.Languages, nil
}

// SaveState writes phases to path atomically: a temporary file in the same
// directory is written, synced and renamed over path, and the directory is
// synced, so a crash leaves either the old or the new state, never a mix.
func SaveState(path string, phases map[string]Phase) error {
	b, err := json.MarshalIndent(stateFile{Version: stateFileVersion, Languages: phases}, "", "  ")
	if err != nil {
		return fmt.Errorf("rollout: encoding state: %w", err)
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("rollout: writing state: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("rollout: writing state: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("rollout: syncing state: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("rollout: writing state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rollout: replacing state file: %w", err)
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // best effort: not every file system syncs directories
		_ = d.Close()
	}
	return nil
}
