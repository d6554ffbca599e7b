package rollout

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fleetkit/fleetkit/internal/atomicfile"
)

// stateFileVersion is the format version of the state file.
const stateFileVersion = 1

// stateFile is the JSON document written to Options.StateFile.
type stateFile struct {
	Version   int              `json:"version"`
	Languages map[string]Phase `json:"languages"`
	Machines  map[string]int   `json:"machines,omitempty"`
}

// State is what a Manager keeps across restarts.
type State struct {
	// Phases are the rollout phases by language.
	Phases map[string]Phase
	// Machines is the desired number of machines of each language (what
	// /create and /remove set); a language missing from it has none
	// recorded, and its live machines are taken as the desired number.
	Machines map[string]int
}

// LoadState reads the state saved in path. A missing file is no error:
// it returns an empty State.
func LoadState(path string) (State, error) {
	st := State{Phases: map[string]Phase{}, Machines: map[string]int{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("rollout: reading state file: %w", err)
	}
	var sf stateFile
	if err := json.Unmarshal(b, &sf); err != nil {
		return st, fmt.Errorf("rollout: state file %s: %w", path, err)
	}
	if sf.Version != stateFileVersion {
		return st, fmt.Errorf("rollout: state file %s has format version %d, want %d", path, sf.Version, stateFileVersion)
	}
	for lang, n := range sf.Machines {
		if n < 0 {
			return st, fmt.Errorf("rollout: state file %s: %s has %d machines", path, lang, n)
		}
	}
	if sf.Languages != nil {
		st.Phases = sf.Languages
	}
	if sf.Machines != nil {
		st.Machines = sf.Machines
	}
	return st, nil
}

// SaveState writes st to path atomically: a temporary file in the same
// directory is written, synced and renamed over path, and the directory is
// synced, so a crash leaves either the old or the new state, never a mix.
func SaveState(path string, st State) error {
	b, err := json.MarshalIndent(stateFile{Version: stateFileVersion, Languages: st.Phases, Machines: st.Machines}, "", "  ")
	if err != nil {
		return fmt.Errorf("rollout: encoding state: %w", err)
	}
	if err := atomicfile.Write(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("rollout: writing state file: %w", err)
	}
	return nil
}
