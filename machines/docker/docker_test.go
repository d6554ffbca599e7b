package docker_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/internal/dockertest"
	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/docker"
	"github.com/fleetkit/fleetkit/machines/internal/linterbin"
	"github.com/fleetkit/fleetkit/machines/machinestest"
)

// runID makes this run's images and provider names unique, so that
// concurrent runs and leftovers of old ones do not meet.
var (
	runID  = randomID()
	bin    *linterbin.Builder
	images imageSet
)

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fleetkit-docker-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = linterbin.New(dir)
	code := testenv.Run(m)
	images.removeAll()
	_ = os.RemoveAll(dir)
	os.Exit(testenv.CheckLeaks(code))
}

// imageSet builds the linter images of this run once each and removes
// them when the tests end.
type imageSet struct {
	// mu guards built and cli.
	mu    sync.Mutex
	built map[string]error
	cli   *client.Client
}

// linterImage returns the tag of the linter image of version, built FROM
// scratch from a static linter binary and examples/linter/Dockerfile.
func (s *imageSet) linterImage(t testing.TB, cli *client.Client, version string) string {
	t.Helper()
	tag := fmt.Sprintf("fleetkit-test/linter:%s-%s", runID, version)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.built == nil {
		s.built = map[string]error{}
		var err error
		s.cli, err = client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
		require.NoError(t, err)
	}
	err, done := s.built[tag]
	if !done {
		dir := t.TempDir()
		b, rerr := os.ReadFile(bin.Path(t))
		require.NoError(t, rerr)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "linter"), b, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), linterbin.Dockerfile(t), 0o644))
		buildCtx, cerr := docker.ContextFromDir(dir)
		require.NoError(t, cerr)
		var out bytes.Buffer
		err = docker.BuildImage(t.Context(), cli, buildCtx, tag, docker.BuildOptions{
			BuildArgs: map[string]string{"VERSION": version},
			Labels:    map[string]string{"io.fleetkit.test-run": runID},
			Output:    &out,
		})
		if err != nil {
			err = fmt.Errorf("%w\n%s", err, out.String())
		}
		s.built[tag] = err
	}
	require.NoError(t, err, "building %s", tag)
	return tag
}

func (s *imageSet) removeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cli == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for tag := range s.built {
		_, _ = s.cli.ImageRemove(ctx, tag, image.RemoveOptions{Force: true, PruneChildren: true})
	}
	_ = s.cli.Close()
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// providerName is unique to this run and test.
func providerName(t testing.TB) string {
	return unsafeName.ReplaceAllString(fmt.Sprintf("test-%s-%s", runID, t.Name()), "_")
}

// newProvider returns a provider owning the containers labelled with name,
// and removes every such container when the test ends, whatever happened.
func newProvider(t testing.TB, cli *client.Client, name string) *docker.Provider {
	t.Helper()
	return newProviderWith(t, cli, docker.Options{Name: name, StopTimeout: 2 * time.Second})
}

func newProviderWith(t testing.TB, cli *client.Client, opts docker.Options) *docker.Provider {
	t.Helper()
	name := opts.Name
	p, err := docker.New(opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cs, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(
			filters.Arg("label", machines.LabelProvider+"="+name))})
		if err == nil {
			for _, c := range cs {
				_ = cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
			}
		}
		_ = p.Close()
	})
	return p
}

func linterSpec(t testing.TB, cli *client.Client, language, version string) machines.Spec {
	s := linterbin.Spec(language, version)
	s.Image = images.linterImage(t, cli, version)
	s.HealthPath = machines.DefaultHealthPath
	s.StartTimeout = 30 * time.Second
	s.Labels["test"] = "docker"
	return s
}

func TestCreateLintRemove(t *testing.T) {
	testenv.Short(t)
	cli := dockertest.Engine(t)
	name := providerName(t)
	p := newProvider(t, cli, name)

	m, err := p.Create(t.Context(), linterSpec(t, cli, "python", "1.0"))
	require.NoError(t, err)
	assert.Equal(t, machines.StateRunning, m.State)
	assert.True(t, strings.HasPrefix(m.Address, "127.0.0.1:"), m.Address)
	assert.Equal(t, "true", m.Labels[machines.LabelManaged])
	assert.Equal(t, name, m.Labels[machines.LabelProvider])

	status, h := linterbin.GetHealth(t, m)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, linterbin.Health{Version: "1.0", Language: "python"}, h)

	status, lb := linterbin.Lint(t, m, "print('hello world')\n")
	require.Equal(t, http.StatusOK, status)
	assert.True(t, lb.Result, lb.Details)
	assert.Equal(t, "1.0", lb.Version)

	ms, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	assert.Equal(t, m.ID, ms[0].ID)
	assert.Equal(t, m.Address, ms[0].Address)
	assert.Equal(t, m.Labels, ms[0].Labels)
	assert.True(t, m.CreatedAt.Equal(ms[0].CreatedAt))

	require.NoError(t, p.Remove(t.Context(), m.ID))
	_, err = cli.ContainerInspect(t.Context(), m.ID)
	assert.True(t, cerrdefs.IsNotFound(err), "the container is still there: %v", err)
	ms, err = p.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, ms)
	require.ErrorIs(t, p.Remove(t.Context(), m.ID), machines.ErrNotFound)
}

func TestDeadContainerIsSeen(t *testing.T) {
	testenv.Short(t)
	cli := dockertest.Engine(t)
	p := newProvider(t, cli, providerName(t))
	events := make(chan machines.Event, 4)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Watch(ctx, func(e machines.Event) { events <- e }) })
	t.Cleanup(func() { cancel(); wg.Wait() })

	m, err := p.Create(t.Context(), linterSpec(t, cli, "python", "1.2"))
	require.NoError(t, err)
	status, _ := linterbin.Lint(t, m, "")
	assert.GreaterOrEqual(t, status, 500)

	select {
	case e := <-events:
		assert.Equal(t, m.ID, e.Machine.ID)
		assert.Equal(t, m.Address, e.Machine.Address)
		_, version := linterbin.LanguageVersion(e.Machine)
		assert.Equal(t, "1.2", version)
		assert.Equal(t, machines.StateExited, e.Machine.State)
		assert.Equal(t, 3, e.ExitCode)
	case <-time.After(20 * time.Second):
		t.Fatal("no event for the dead container")
	}
	// The engine sends "die" a moment before its container list says exited.
	var ms []machines.Machine
	require.Eventually(t, func() bool {
		var err error
		ms, err = p.List(t.Context(), nil)
		return err == nil && len(ms) == 1 && ms[0].State == machines.StateExited
	}, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, m.Address, ms[0].Address, "an exited machine keeps the address it had")

	require.NoError(t, p.Remove(t.Context(), m.ID))
	ms, err = p.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, ms)
	select {
	case e := <-events:
		t.Fatalf("Remove was reported as an exit: %+v", e)
	case <-time.After(300 * time.Millisecond):
	}
}

func TestRediscovery(t *testing.T) {
	testenv.Short(t)
	cli := dockertest.Engine(t)
	name := providerName(t)
	first := newProvider(t, cli, name)
	a, err := first.Create(t.Context(), linterSpec(t, cli, "python", "1.0"))
	require.NoError(t, err)
	b, err := first.Create(t.Context(), linterSpec(t, cli, "java", "1.0"))
	require.NoError(t, err)
	require.NoError(t, first.Close())

	// A restarted manager: a new provider with the same name.
	second := newProvider(t, cli, name)
	ms, err := second.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	for i, want := range []machines.Machine{a, b} {
		got := ms[i]
		assert.Equal(t, want.ID, got.ID)
		assert.Equal(t, want.Address, got.Address)
		assert.Equal(t, want.Labels, got.Labels)
		assert.Equal(t, machines.StateRunning, got.State)
	}

	// Another provider owns none of them and may not remove them.
	other := newProvider(t, cli, name+"-other")
	ms, err = other.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, ms)
	require.ErrorIs(t, other.Remove(t.Context(), a.ID), machines.ErrNotFound)

	require.NoError(t, second.Remove(t.Context(), a.ID))
	ms, err = second.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	assert.Equal(t, b.ID, ms[0].ID)
}

func TestCreateFailuresLeaveNothing(t *testing.T) {
	testenv.Short(t)
	cli := dockertest.Engine(t)
	tests := []struct {
		name    string
		mutate  func(*machines.Spec)
		wantErr error
	}{
		{"never healthy", func(s *machines.Spec) { s.HealthPath = "/never-200"; s.StartTimeout = 2 * time.Second }, machines.ErrStartTimeout},
		{"exits at once", func(s *machines.Spec) { s.Args = linterbin.Spec("cobol", "1.0").Args }, machines.ErrExited},
		{"no image", func(s *machines.Spec) { s.Image = "" }, machines.ErrInvalidSpec},
		{"image not on the engine", func(s *machines.Spec) { s.Image = "fleetkit-test/none:" + runID }, machines.ErrInvalidSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, cli, providerName(t))
			spec := linterSpec(t, cli, "python", "1.0")
			tt.mutate(&spec)
			_, err := p.Create(t.Context(), spec)
			require.ErrorIs(t, err, tt.wantErr)
			ms, err := p.List(t.Context(), nil)
			require.NoError(t, err)
			assert.Empty(t, ms, "a failed create must leave no container")
		})
	}
}

func TestNetworkMode(t *testing.T) {
	testenv.Short(t)
	cli := dockertest.Engine(t)
	name := providerName(t)
	_, err := cli.NetworkCreate(t.Context(), name, network.CreateOptions{Labels: map[string]string{"io.fleetkit.test-run": runID}})
	require.NoError(t, err)
	// Registered before newProvider's cleanup, so it runs after the
	// containers are gone.
	t.Cleanup(func() { _ = cli.NetworkRemove(context.Background(), name) })

	p := newProviderWith(t, cli, docker.Options{Name: name, Network: name, StopTimeout: time.Second})

	spec := linterSpec(t, cli, "java", "1.0")
	spec.StartTimeout = 10 * time.Second
	m, err := p.Create(t.Context(), spec)
	if errors.Is(err, machines.ErrStartTimeout) {
		testenv.Missing(t, "container IPs are not reachable from this host: %v", err)
	}
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(m.Address, ":8080"), m.Address)
	assert.False(t, strings.HasPrefix(m.Address, "127."), m.Address)
	status, lb := linterbin.Lint(t, m, "class A {\n}\n")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "1.0", lb.Version)

	ms, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	assert.Equal(t, m.Address, ms[0].Address)
	require.NoError(t, p.Remove(t.Context(), m.ID))
}

// The Docker provider passes the suite every provider passes; a new
// provider with the same name adopts the containers of an old one.
func TestConformance(t *testing.T) {
	testenv.Short(t)
	cli := dockertest.Engine(t)
	machinestest.RunConformance(t, machinestest.Harness{
		New: func(t *testing.T, name string) machines.Provider {
			return newProvider(t, cli, name)
		},
		Spec: func(t *testing.T, language, version string) machines.Spec {
			return linterSpec(t, cli, language, version)
		},
		Adopts: true,
	})
}

// BenchmarkCreateToHealthy measures Create of a python 1.0 linter
// container (create, start, port published, /health answers 200).
func BenchmarkCreateToHealthy(b *testing.B) {
	cli := dockertest.Engine(b)
	p := newProvider(b, cli, providerName(b))
	spec := linterSpec(b, cli, "python", "1.0")
	ctx := context.Background()
	for b.Loop() {
		m, err := p.Create(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := p.Remove(ctx, m.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
