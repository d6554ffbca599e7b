package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/fleettest"
	"github.com/fleetkit/fleetkit/fleet/sqlite"
	"github.com/fleetkit/fleetkit/internal/dockertest"
	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/docker"
)

func TestMain(m *testing.M) {
	// The process data plane runs os.Executable() — here this test binary —
	// with the instance subcommand: serve it as the real binary would.
	if (len(os.Args) > 1 && os.Args[1] == "instance") || os.Getenv(replicaEnv) != "" {
		main()
		os.Exit(0)
	}
	testenv.MainLeakChecked(m)
}

// lines is a concurrency-safe writer that hands the first line over.
type lines struct {
	once sync.Once
	c    chan string
}

func (l *lines) Write(p []byte) (int, error) {
	l.once.Do(func() { l.c <- string(p) })
	return len(p), nil
}

// manager is a fleet manager run in this process.
type manager struct {
	*fleettest.Client
	stop func() // cancels and waits for a clean return; idempotent
}

// start runs the fleet manager with args on a free port until stop or the
// end of the test. FLEETKIT_CACHE must be set (the development key).
func start(t testing.TB, args ...string) *manager {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &lines{c: make(chan string, 1)}
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), out) }()
	var banner string
	select {
	case banner = <-out.c:
	case err := <-done:
		cancel()
		t.Fatalf("run returned early: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("no banner")
	}
	m := regexp.MustCompile(`http://(\S+?)/api`).FindStringSubmatch(banner)
	require.Len(t, m, 2, banner)
	secret, err := devSecret()
	require.NoError(t, err)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				assert.NoError(t, err, "a clean shutdown")
			case <-time.After(30 * time.Second):
				t.Error("the fleet manager did not stop")
			}
		})
	}
	t.Cleanup(stop)
	return &manager{Client: &fleettest.Client{BaseURL: "http://" + m[1], Kind: fleet.Dinosaur, Secret: secret}, stop: stop}
}

// info asks an instance's host for GET /; ok is false when nothing answers.
func info(host string) (_ instanceInfo, ok bool) {
	resp, err := http.Get("http://" + host + "/")
	if err != nil {
		return instanceInfo{}, false
	}
	defer resp.Body.Close()
	var i instanceInfo
	return i, resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&i) == nil
}

var alice = fleettest.User{Name: "alice"}

// createReady creates a dinosaur named name as alice and returns its id
// and host once it is ready and its host answers with its id.
func (m *manager) createReady(t *testing.T, name string, timeout time.Duration) (id, host string) {
	t.Helper()
	r := m.Do(t, alice, http.MethodPost, "dinosaurs?async=true", map[string]any{"name": name})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	id = r.Str("id")
	host = m.WaitStatus(t, alice, id, "ready", timeout).Str("host")
	got, ok := info(host)
	require.True(t, ok, "a ready instance's host answers")
	assert.Equal(t, instanceInfo{ID: id, Kind: "dinosaur", Name: name}, got)
	return id, host
}

// TestProcessDataPlane runs the default: every instance a local process of
// the instance subcommand, through create, a manager restart and delete.
func TestProcessDataPlane(t *testing.T) {
	t.Setenv("FLEETKIT_CACHE", t.TempDir())
	db := filepath.Join(t.TempDir(), "fleet.db")
	fm := start(t, "-database-url", db)

	var tok bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"token", "-user", "alice"}, &tok))
	req, err := http.NewRequest(http.MethodGet, fm.BaseURL+fleet.Dinosaur.BasePath()+"/dinosaurs", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(tok.String()))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the token subcommand's token is accepted")

	id, host := fm.createReady(t, "rex", 30*time.Second)

	resp, err = http.Get(fm.BaseURL + "/metrics")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// Process machines stop with the manager; the next one runs them again.
	fm.stop()
	_, ok := info(host)
	require.False(t, ok, "the instance stopped with the manager")
	fm = start(t, "-database-url", db)
	require.Eventually(t, func() bool {
		r := fm.Do(t, alice, http.MethodGet, "dinosaurs/"+id, nil)
		got, ok := info(r.Str("host"))
		return r.Str("status") == "ready" && ok && got.ID == id
	}, 30*time.Second, 20*time.Millisecond, "the restarted manager runs the instance again")
	host = fm.Do(t, alice, http.MethodGet, "dinosaurs/"+id, nil).Str("host")

	require.Equal(t, http.StatusAccepted, fm.Do(t, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil).Status)
	fm.WaitStatus(t, alice, id, "gone", 30*time.Second)
	_, ok = info(host)
	assert.False(t, ok, "deleting removes the machine")
	fm.stop()

	st, err := sqlite.Open(context.Background(), db)
	require.NoError(t, err)
	defer st.Close()
	inst, err := st.GetInstance(context.Background(), id)
	require.NoError(t, err)
	assert.NotNil(t, inst.DeletedAt, "soft deleted: the row stays")
}

// TestDataPlanePerCluster: each configured cluster has its own provider;
// an instance placed on a cluster the data plane does not know fails.
func TestDataPlanePerCluster(t *testing.T) {
	clusters := []cluster.Cluster{{ID: "a"}, {ID: "b"}}
	dp, closeDP, err := newDataPlane(t.Context(), dataPlaneOptions{Provider: providerProcess, Name: "test"}, fleet.Dinosaur, clusters)
	require.NoError(t, err)
	defer closeDP()
	inst := fleet.Instance{ID: "i1", Kind: "dinosaur", Name: "rex", ClusterID: "b"}
	s, err := dp.Apply(t.Context(), inst)
	require.NoError(t, err)
	require.True(t, s.Ready)
	got, ok := info(s.Host)
	require.True(t, ok)
	assert.Equal(t, instanceInfo{ID: "i1", Kind: "dinosaur", Name: "rex"}, got)

	s, err = dp.Apply(t.Context(), fleet.Instance{ID: "i2", Kind: "dinosaur", Name: "rex", ClusterID: "c"})
	require.NoError(t, err)
	assert.NotEmpty(t, s.FailedReason)

	_, _, err = newDataPlane(t.Context(), dataPlaneOptions{Provider: providerProcess}, fleet.Dinosaur, nil)
	assert.Error(t, err, "no clusters, nowhere to run")
}

// TestDockerDataPlane runs every instance as a container of the fleet
// manager's image, built FROM scratch for this test; containers outlive a
// manager restart and are adopted by the next one.
func TestDockerDataPlane(t *testing.T) {
	testenv.Short(t)
	cli := dockertest.Engine(t)
	tag := instanceImage(t, cli)
	name := "test-" + randomID()
	provider := name + "-dinosaur-" + cluster.Defaults()[0].ID
	containers := func() []container.Summary {
		cs, err := cli.ContainerList(context.Background(), container.ListOptions{All: true,
			Filters: filters.NewArgs(filters.Arg("label", machines.LabelProvider+"="+provider))})
		require.NoError(t, err)
		return cs
	}
	t.Cleanup(func() {
		for _, c := range containers() {
			_ = cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		}
	})

	t.Setenv("FLEETKIT_CACHE", t.TempDir())
	db := filepath.Join(t.TempDir(), "fleet.db")
	args := []string{"-database-url", db, "-provider", "docker", "-instance-image", tag, "-name", name}
	fm := start(t, args...)
	id, host := fm.createReady(t, "rex", 60*time.Second)
	require.Len(t, containers(), 1)

	fm.stop()
	_, ok := info(host)
	require.True(t, ok, "containers outlive the manager")
	fm = start(t, args...)
	r := fm.WaitStatus(t, alice, id, "ready", 30*time.Second)
	assert.Equal(t, host, r.Str("host"), "the restarted manager adopts the container")
	assert.Len(t, containers(), 1)

	require.Equal(t, http.StatusAccepted, fm.Do(t, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil).Status)
	fm.WaitStatus(t, alice, id, "gone", 60*time.Second)
	_, ok = info(host)
	assert.False(t, ok, "deleting removes the container")
	assert.Empty(t, containers())
}

// instanceImage builds this package statically (CGO_ENABLED=0, stripped;
// the go build cache makes it quick after the first time) into an image
// FROM scratch with the Dockerfile next to this file, as
// scripts/build-images.sh does, and removes the image when the test ends.
func instanceImage(t *testing.T, cli *client.Client) string {
	t.Helper()
	goTool := testenv.LookPath(t, "go")
	dir := t.TempDir()
	cmd := exec.Command(goTool, "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "fleet-manager"), ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	dockerfile, err := os.ReadFile("Dockerfile")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), dockerfile, 0o644))
	buildCtx, err := docker.ContextFromDir(dir)
	require.NoError(t, err)
	tag := "fleetkit-test/fleet-manager:" + randomID()
	var log bytes.Buffer
	require.NoError(t, docker.BuildImage(t.Context(), cli, buildCtx, tag, docker.BuildOptions{Output: &log}), "%s", log.String())
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true})
	})
	return tag
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func TestBadFlags(t *testing.T) {
	t.Setenv("FLEETKIT_CACHE", t.TempDir())
	tests := []struct {
		name string
		args []string
	}{
		{"unknown kind", []string{"-kind", "unicorn"}},
		{"token without user", []string{"token"}},
		{"missing config", []string{"-config", "/nonexistent/fleet.yaml"}},
		{"unknown provider", []string{"-provider", "vm"}},
		{"unknown data plane", []string{"-data-plane", "vm"}},
		{"agent data plane without a token secret", []string{"-data-plane", "agent", "-database-url", "sqlite://:memory:"}},
		{"instance without id", []string{"instance", "-kind", "dinosaur", "-name", "rex"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Error(t, run(context.Background(), tt.args, &bytes.Buffer{}))
		})
	}
}

func TestExampleConfig(t *testing.T) {
	t.Setenv("FLEETKIT_CACHE", t.TempDir())
	cfg, err := LoadConfig("testdata/fleet.yaml")
	require.NoError(t, err)
	opts, api, err := cfg.Options(fleet.Kafka)
	require.NoError(t, err)
	require.Len(t, api.CloudProviders, 1)
	assert.Len(t, api.CloudProviders[0].Regions, 2)
	assert.Equal(t, 100, api.CloudProviders[0].Regions[0].Limits["standard"])
	require.Len(t, opts.Clusters, 2)
	assert.Equal(t, 50, opts.Clusters[0].Capacity)
	assert.Equal(t, 48*time.Hour, api.Trials["developer"])
	assert.Equal(t, 5*time.Minute, opts.Timeouts[fleet.StatusPreparing])
	require.NotNil(t, api.Quota)
	require.NotNil(t, opts.Denied)
	assert.True(t, opts.Denied("mallory", ""))
	_, err = fleet.New(noStore{}, opts)
	require.NoError(t, err, "the options are valid")
}

// noStore is never called: New only validates.
type noStore struct{ fleet.Store }

// TestConfigDeprovision: a cluster marked deprovision is created if new
// and retired at Run, so it is unregistered without being left out.
func TestConfigDeprovision(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`clusters:
  - {id: dp-1, cloud_provider: aws, region: us-east-1, multi_az: true}
  - {id: dp-2, cloud_provider: aws, region: us-east-1, multi_az: true, deprovision: true}
`), 0o600))
	cfg, err := LoadConfig(path)
	require.NoError(t, err)
	opts, _, err := cfg.Options(fleet.Dinosaur)
	require.NoError(t, err)
	assert.Len(t, opts.Clusters, 2)
	assert.Equal(t, []string{"dp-2"}, opts.Deprovision)
}
