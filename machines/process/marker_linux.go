package process

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// findMarked returns the PID of the live process whose environment holds
// the entry kv ("KEY=value"), or 0.
func findMarked(kv string) int {
	want := []byte(kv)
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil {
			continue
		}
		for e := range bytes.SplitSeq(env, []byte{0}) {
			if bytes.Equal(e, want) {
				pid, _ := strconv.Atoi(filepath.Base(d))
				if _, alive := startTime(pid); alive {
					return pid
				}
			}
		}
	}
	return 0
}
