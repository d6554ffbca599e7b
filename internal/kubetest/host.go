package kubetest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// What the node changes on the host, and what down undoes. The kubelet
// and containerd hard-code some host paths; the rest lives in the state
// directory.
const (
	netnsDir      = "/var/run/netns"  // containerd's CRI plugin creates Pod network namespaces here
	shimSocketDir = "/run/containerd" // containerd shims put their sockets in its s/ directory
	// forwardComment marks the iptables rule that lets Pods on the bridge
	// reach each other where the FORWARD policy is DROP (Docker sets it).
	forwardComment = "fleetkit-kubetest"
)

// hostPaths are the host paths the node may create. down removes a path
// only if it did not exist before the node started; the rmdir ones only if
// empty too, as other software (Docker's containerd) may share them.
var hostPaths = []struct {
	path  string
	rmdir bool
}{
	{"/var/lib/kubelet", false},
	{"/var/log/containers", false},
	{"/var/log/pods", false},
	{"/var/lib/cni", false},            // libcni's result cache (containerd 1.6 cannot move it)
	{"/usr/libexec/kubernetes", false}, // the kubelet's default volume plugin directory
	{"/run/mount", true},               // libmount's, when the kubelet runs mount(8)
	{netnsDir, true},
	{filepath.Join(shimSocketDir, "s"), true},
	{filepath.Join(shimSocketDir, "fifo"), true},
	{shimSocketDir, true},
}

// kernelSysctls are the settings the kubelet changes at start unless
// protectKernelDefaults is set (which makes it refuse to start on hosts
// with other values instead); down puts the host's values back.
var kernelSysctls = []string{
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
}

// hostRecord is what the host looked like before the node started, kept
// in the state directory so that a later run can undo a crashed one.
type hostRecord struct {
	Existed map[string]bool   `json:"existed"` // hostPaths
	Netns   []string          `json:"netns"`   // network namespaces already there
	Sysctls map[string]string `json:"sysctls"`
	// Tables are the iptables tables there were, per command (iptables,
	// ip6tables): the kubelet and kube-proxy create the ones missing.
	Tables map[string][]string `json:"tables"`
	// Nfacct are kube-proxy's nfacct counters that were already there.
	Nfacct []string `json:"nfacct"`
}

const hostRecordFile = "host.json"

// recordHost writes what down needs to restore into dir.
func recordHost(dir string) (*hostRecord, error) {
	r := &hostRecord{Existed: map[string]bool{}, Sysctls: map[string]string{}}
	for _, p := range hostPaths {
		_, err := os.Lstat(p.path)
		r.Existed[p.path] = err == nil
	}
	r.Netns = listNetns()
	r.Tables = map[string][]string{}
	for _, cmd := range iptablesCommands {
		r.Tables[cmd] = iptablesTables(cmd)
	}
	for _, name := range nfacctCounters {
		if ok, err := nfacctExists(name); err == nil && ok {
			r.Nfacct = append(r.Nfacct, name)
		}
	}
	for _, s := range kernelSysctls {
		b, err := os.ReadFile(filepath.Join("/proc/sys", s))
		if err == nil {
			r.Sysctls[s] = strings.TrimSpace(string(b))
		}
	}
	return r, r.save(dir)
}

func (r *hostRecord) save(dir string) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, hostRecordFile), b, 0o600)
}

func listNetns() []string {
	ents, _ := os.ReadDir(netnsDir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// cleanHost stops and removes everything a node with this state directory
// left on the host, whether it was stopped or its test binary died:
// containers and their shims, processes in the kubepods cgroups, mounts
// under the state directory, Pod network namespaces, the bridge and the
// forwarding rule, kube-proxy's iptables rules, the kernel settings and
// host paths the kubelet changed, and finally the state directory. It is
// idempotent and keeps going past errors, which it returns joined.
func cleanHost(state, binDir string) error {
	var errs []error
	var rec *hostRecord
	if b, err := os.ReadFile(filepath.Join(state, hostRecordFile)); err == nil {
		rec = &hostRecord{}
		if err := json.Unmarshal(b, rec); err != nil {
			errs = append(errs, fmt.Errorf("reading the host record: %w", err))
			rec = nil
		}
	}
	if _, err := os.Stat(state); err == nil {
		errs = append(errs, killContainers(state)...)
		errs = append(errs, killProcesses(state)...)
	}
	errs = append(errs, removeShimSockets(state)...)
	errs = append(errs, killCgroups()...)
	if rec != nil {
		errs = append(errs, removeNetns(rec.Netns)...)
	}
	errs = append(errs, unmountUnder(state)...)
	if rec != nil {
		// StartNode refuses hosts with Kubernetes' chains, so these are the
		// node's.
		errs = append(errs, removeIPTables(rec.Tables)...)
		for _, name := range nfacctCounters {
			if !slices.Contains(rec.Nfacct, name) {
				if err := nfacctDelete(name); err != nil {
					errs = append(errs, err)
				}
			}
		}
	} else {
		errs = append(errs, removeIPTables(nil)...) // only our forwarding rule: no record, no kubelet
	}
	if err := run("ip", "link", "delete", Bridge); err != nil && !strings.Contains(err.Error(), "Cannot find device") {
		errs = append(errs, err)
	}
	if rec != nil {
		for k, v := range rec.Sysctls {
			cur, err := os.ReadFile(filepath.Join("/proc/sys", k))
			if err == nil && strings.TrimSpace(string(cur)) != v {
				if err := os.WriteFile(filepath.Join("/proc/sys", k), []byte(v), 0o644); err != nil {
					errs = append(errs, fmt.Errorf("restoring %s: %w", k, err))
				}
			}
		}
		for _, p := range hostPaths {
			if existed, ok := rec.Existed[p.path]; !ok || existed {
				continue
			}
			errs = append(errs, unmountUnder(p.path)...)
			var err error
			if p.rmdir {
				err = os.Remove(p.path)
				if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
					err = nil // shared with someone else now: leave it
				}
			} else {
				err = os.RemoveAll(p.path)
			}
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if ms := mountsUnder(state); len(ms) > 0 {
		// Never remove a tree that still has something mounted in it.
		errs = append(errs, fmt.Errorf("still mounted, state directory kept: %s", strings.Join(ms, ", ")))
	} else if err := os.RemoveAll(state); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// killContainers deletes every container of the node's runc root: runc
// kills the container's processes and removes its cgroups.
func killContainers(state string) []error {
	var errs []error
	roots, _ := filepath.Glob(filepath.Join(state, "containerd", "runc", "*"))
	for _, root := range roots {
		out, err := exec.Command("runc", "--root", root, "list", "-q").Output()
		if err != nil {
			continue // no runc, or nothing there
		}
		for _, id := range strings.Fields(string(out)) {
			if err := run("runc", "--root", root, "delete", "--force", id); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// nodeBinaries are the programs killProcesses may kill.
var nodeBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler",
	"kubelet", "kube-proxy", "containerd", "containerd-shim-runc-v2"}

// killProcesses kills the node's programs working in the state directory:
// its own (started there) and containerd's shims (working in their bundles
// under it); a shell that happens to be there is left alone. Container
// processes are runc's and the cgroups'.
func killProcesses(state string) []error {
	var pids []int
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", p.Name(), "cwd"))
		if err != nil || (cwd != state && !strings.HasPrefix(cwd, state+"/")) {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", p.Name(), "exe"))
		if err == nil && slices.Contains(nodeBinaries, filepath.Base(strings.TrimSuffix(exe, " (deleted)"))) {
			pids = append(pids, pid)
		}
	}
	return killAndWait(pids, "processes in "+state)
}

// killAndWait sends SIGKILL to pids and waits until they are gone (zombies
// count as gone: their parent may be dead and init slow to reap).
func killAndWait(pids []int, what string) []error {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				return []error{fmt.Errorf("%s: pid %d survives SIGKILL", what, pid)}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return nil
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}

// removeShimSockets removes the sockets of the node's shims, which each
// shim names in an "address" file in its bundle; a killed shim leaves its
// socket behind.
func removeShimSockets(state string) []error {
	var errs []error
	files, _ := filepath.Glob(filepath.Join(state, "containerd", "state", "io.containerd.runtime.v2.task", "*", "*", "address"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sock := strings.TrimPrefix(strings.TrimSpace(string(b)), "unix://")
		if filepath.Dir(sock) != filepath.Join(shimSocketDir, "s") {
			continue // not a path a shim of ours makes: leave it
		}
		if err := os.Remove(sock); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errs
}

// killCgroups kills what is left in the kubepods cgroups (the kubelet's,
// under every hierarchy) and removes them, deepest first.
func killCgroups() []error {
	tops, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	if _, err := os.Stat("/sys/fs/cgroup/kubepods"); err == nil { // cgroup v2
		tops = append(tops, "/sys/fs/cgroup/kubepods")
	}
	var errs []error
	for _, top := range tops {
		var dirs []string
		_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		var pids []int
		for _, d := range dirs {
			b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
		}
		errs = append(errs, killAndWait(pids, "processes in "+top)...)
		slices.Reverse(dirs) // children before parents
		for _, d := range dirs {
			if err := rmdirCgroup(d); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// rmdirCgroup removes an empty cgroup; a cgroup whose last process just
// died may be busy for a moment.
func rmdirCgroup(d string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := syscall.Rmdir(d)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("removing cgroup %s: %w", d, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// removeNetns removes the Pod network namespaces (containerd names them
// cni-*) that were not there before the node started.
func removeNetns(before []string) []error {
	var errs []error
	for _, n := range listNetns() {
		if !strings.HasPrefix(n, "cni-") || slices.Contains(before, n) {
			continue
		}
		p := filepath.Join(netnsDir, n)
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", p, err))
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errs
}

// mountsUnder returns the mount points at or below dir, deepest first.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var ms []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			ms = append(ms, mp)
		}
	}
	slices.SortFunc(ms, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(ms)
}

// unescapeMount decodes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unmountUnder unmounts everything at or below dir, deepest first; a busy
// mount is detached.
func unmountUnder(dir string) []error {
	var errs []error
	// A mount point may be stacked several times (the kubelet's self-bind).
	for range 5 {
		ms := mountsUnder(dir)
		if len(ms) == 0 {
			return nil
		}
		for _, m := range ms {
			if err := syscall.Unmount(m, 0); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
					errs = append(errs, fmt.Errorf("unmounting %s: %w", m, err))
				}
			}
		}
	}
	return errs
}

// iptablesCommands are the families the kubelet and kube-proxy write.
var iptablesCommands = []string{"iptables", "ip6tables"}

// iptablesTables returns the tables cmd's iptables-save shows.
func iptablesTables(cmd string) []string {
	out, err := exec.Command(cmd + "-save").Output()
	if err != nil {
		return nil
	}
	var tables []string
	for _, line := range strings.Split(string(out), "\n") {
		if t, ok := strings.CutPrefix(line, "*"); ok {
			tables = append(tables, t)
		}
	}
	return tables
}

// removeIPTables removes, in both families, the node's forwarding rule and,
// unless before is nil, every KUBE-* chain with the rules jumping to them
// (the kubelet's canaries, kube-proxy's Services), and then the tables that
// were not there before and hold nothing now.
func removeIPTables(before map[string][]string) []error {
	var errs []error
	for _, cmd := range iptablesCommands {
		out, err := exec.Command(cmd + "-save").Output()
		if err != nil {
			continue // no such family or no iptables: nothing was added
		}
		script := iptablesCleanup(string(out), before != nil)
		if script == "" {
			continue
		}
		c := exec.Command(cmd+"-restore", "-w", "--noflush")
		c.Stdin = strings.NewReader(script)
		if out, err := c.CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("%s-restore: %v: %s\n%s", cmd, err, lastLine(out), script))
		}
	}
	if before == nil {
		return errs
	}
	if _, err := exec.LookPath("nft"); err != nil {
		return errs // iptables-legacy, or no nft to drop the empty tables with
	}
	for _, cmd := range iptablesCommands {
		family := map[string]string{"iptables": "ip", "ip6tables": "ip6"}[cmd]
		out, err := exec.Command(cmd + "-save").Output()
		if err != nil {
			continue
		}
		for table, body := range splitTables(string(out)) {
			if slices.Contains(before[cmd], table) || !emptyTable(body) {
				continue
			}
			if err := run("nft", "delete", "table", family, table); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// iptablesCleanup returns an iptables-restore --noflush script that
// deletes the node's rules from iptables-save output: the forwarding rule
// (forwardComment), and with kube the KUBE-* chains and the rules jumping
// to them. It returns "" when there is nothing to delete.
func iptablesCleanup(save string, kube bool) string {
	var b strings.Builder
	tables := splitTables(save)
	for _, table := range slices.Sorted(maps.Keys(tables)) {
		body := tables[table]
		var dels, flush []string
		for _, line := range body {
			if chain, ok := strings.CutPrefix(line, ":"); ok {
				name := strings.Fields(chain)[0]
				if kube && strings.HasPrefix(name, "KUBE-") {
					flush = append(flush, name)
				}
				continue
			}
			rest, ok := strings.CutPrefix(line, "-A ")
			if !ok {
				continue
			}
			chain := strings.Fields(rest)[0]
			ours := strings.Contains(line, "--comment "+forwardComment)
			jumpsKube := kube && !strings.HasPrefix(chain, "KUBE-") && (strings.Contains(line, " -j KUBE-") || strings.Contains(line, " -g KUBE-"))
			if ours || jumpsKube {
				dels = append(dels, "-D "+rest)
			}
		}
		if len(dels)+len(flush) == 0 {
			continue
		}
		fmt.Fprintf(&b, "*%s\n", table)
		for _, d := range dels {
			fmt.Fprintln(&b, d)
		}
		for _, c := range flush { // flush all before deleting any: they jump to each other
			fmt.Fprintf(&b, "-F %s\n", c)
		}
		for _, c := range flush {
			fmt.Fprintf(&b, "-X %s\n", c)
		}
		b.WriteString("COMMIT\n")
	}
	return b.String()
}

// splitTables splits iptables-save output into its tables' lines.
func splitTables(save string) map[string][]string {
	tables := map[string][]string{}
	table := ""
	for _, line := range strings.Split(save, "\n") {
		switch {
		case strings.HasPrefix(line, "*"):
			table = line[1:]
			tables[table] = nil
		case line == "" || line == "COMMIT" || strings.HasPrefix(line, "#") || table == "":
		default:
			tables[table] = append(tables[table], line)
		}
	}
	return tables
}

// emptyTable reports whether a table holds only built-in chains that
// accept, and no rules.
func emptyTable(body []string) bool {
	for _, line := range body {
		if strings.HasPrefix(line, "-A ") {
			return false
		}
		if chain, ok := strings.CutPrefix(line, ":"); ok {
			f := strings.Fields(chain)
			if len(f) < 2 || f[1] != "ACCEPT" { // a user chain ("-") or a DROP policy
				return false
			}
		}
	}
	return true
}

// run runs a command and returns an error with its output's last line.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, lastLine(out))
	}
	return nil
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
