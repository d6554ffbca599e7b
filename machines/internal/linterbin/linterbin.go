// Package linterbin builds the linter service binary (examples/linter) for
// the integration tests of the machines providers: once per test binary,
// statically (CGO_ENABLED=0), so that the same file runs as a local process
// and in a FROM scratch image.
package linterbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fleetkit/fleetkit/internal/testenv"
)

// Package is the import path of the linter service.
const Package = "github.com/fleetkit/fleetkit/examples/linter"

// EnvPackage names an environment variable that replaces Package, e.g.
// with machines/internal/testserver while the linter does not build.
const EnvPackage = "FLEETKIT_TEST_LINTER"

// Builder builds the binary on first use. The zero value is not usable;
// use New.
type Builder struct {
	dir  string
	once sync.Once
	path string
	err  error
}

// New returns a Builder that writes into dir (a test binary's temp dir,
// made in TestMain).
func New(dir string) *Builder { return &Builder{dir: dir} }

// Path returns the binary, building it on first call. A missing go tool is
// reported with testenv.Missing; a failed build fails the test.
func (b *Builder) Path(t testing.TB) string {
	t.Helper()
	goTool := testenv.LookPath(t, "go")
	b.once.Do(func() {
		out := filepath.Join(b.dir, "linter")
		pkg := Package
		if v := os.Getenv(EnvPackage); v != "" {
			pkg = v
		}
		cmd := exec.Command(goTool, "build", "-trimpath", "-o", out, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, strings.TrimSpace(string(msg)))
			return
		}
		b.path = out
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Dockerfile returns the linter's Dockerfile (examples/linter/Dockerfile),
// found from the module root.
func Dockerfile(t testing.TB) []byte {
	t.Helper()
	goTool := testenv.LookPath(t, "go")
	gomod, err := exec.Command(goTool, "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	p := filepath.Join(filepath.Dir(strings.TrimSpace(string(gomod))), "examples", "linter", "Dockerfile")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("reading the linter's Dockerfile: %v", err)
	}
	return b
}
