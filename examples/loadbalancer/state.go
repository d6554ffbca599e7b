package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetkit/fleetkit/balancer"
	"github.com/fleetkit/fleetkit/internal/atomicfile"
)

// stateVersion is the format version of the -state-file.
const stateVersion = 1

// savedState is the -state-file: what the admin API set.
type savedState struct {
	Version int `json:"version"`
	// Backends maps language → version → URIs.
	Backends map[string]map[string][]string `json:"backends"`
	// Ratios maps language → version → weight.
	Ratios map[string]map[string]int `json:"ratios"`
}

// loadState puts the backends and ratios of path into b; a missing file is
// a first start.
func loadState(ctx context.Context, b *balancer.Balancer, path string) error {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("-state-file: %w", err)
	}
	var st savedState
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("-state-file %s: %w", path, err)
	}
	if st.Version != stateVersion {
		return fmt.Errorf("-state-file %s has format version %d, want %d", path, st.Version, stateVersion)
	}
	for _, lang := range slices.Sorted(maps.Keys(st.Backends)) {
		for version, uris := range st.Backends[lang] {
			for _, u := range uris {
				if err := b.AddBackend(ctx, lang, version, u); err != nil {
					return fmt.Errorf("-state-file %s: %w", path, err)
				}
			}
		}
	}
	for lang, ratio := range st.Ratios {
		if err := b.SetRatio(ctx, lang, ratio); err != nil {
			return fmt.Errorf("-state-file %s: %w", path, err)
		}
	}
	return nil
}

// saveState writes what b holds to path.
func saveState(ctx context.Context, b *balancer.Balancer, path string) error {
	h, err := b.Health(ctx)
	if err != nil {
		return err
	}
	raw, err := json.MarshalIndent(savedState{Version: stateVersion, Backends: h.Backends, Ratios: h.Ratios}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(raw, '\n'), 0o600)
}

// stateSaveInterval is how often the balancer's Generation is compared
// with the one saved last.
const stateSaveInterval = 100 * time.Millisecond

// keepState saves b to path whenever its Generation changes, until ctx is
// done, then once more.
func keepState(ctx context.Context, b *balancer.Balancer, path string, log *slog.Logger) {
	saved := ""
	save := func(ctx context.Context) {
		gen, _ := b.Generation(ctx)
		if gen == saved {
			return
		}
		if err := saveState(ctx, b, path); err != nil {
			log.Warn("saving the state file failed", "path", path, "err", err)
			return
		}
		saved = gen
	}
	t := time.NewTicker(stateSaveInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			save(context.WithoutCancel(ctx))
			return
		case <-t.C:
			save(ctx)
		}
	}
}

// inherited returns the listening sockets a supervisor passed (systemd's
// socket activation protocol: LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES, the
// sockets from file descriptor 3), by name: "public" and "admin" (unnamed
// ones are taken in that order). A supervisor that holds the sockets keeps
// them open across a restart, so clients queue instead of being refused.
func inherited(getenv func(string) string) (map[string]net.Listener, error) {
	if getenv("LISTEN_PID") != strconv.Itoa(os.Getpid()) {
		return nil, nil
	}
	n, err := strconv.Atoi(getenv("LISTEN_FDS"))
	if err != nil || n <= 0 {
		return nil, nil
	}
	names := strings.Split(getenv("LISTEN_FDNAMES"), ":")
	out := map[string]net.Listener{}
	for i := range n {
		name := ""
		if i < len(names) {
			name = names[i]
		}
		if name == "" || name == "unknown" {
			name = []string{"public", "admin"}[min(i, 1)]
		}
		f := os.NewFile(uintptr(3+i), name)
		ln, err := net.FileListener(f)
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("LISTEN_FDS: file descriptor %d (%s): %w", 3+i, name, err)
		}
		out[name] = ln
	}
	return out, nil
}
