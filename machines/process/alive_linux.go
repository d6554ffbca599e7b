package process

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// startTime returns when process pid started (clock ticks after boot, from
// /proc/<pid>/stat) and whether it runs: a zombie does not. The start time
// tells a machine from a process that reuses its PID.
func startTime(pid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// pid (comm) state ppid ... field 22 is starttime; comm may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || f[0][0] == 'Z' || f[0][0] == 'X' {
		return 0, false
	}
	st, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return 0, false
	}
	return st, true
}
