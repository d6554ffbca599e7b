package helm_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	helmtime "helm.sh/helm/v3/pkg/time"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
)

// Benchmark sizes, from the environment:
//
//	FLEETKIT_BENCH_RELEASES     releases (default 200; the figure is 10000)
//	FLEETKIT_BENCH_REVISIONS    revisions per release (default 3; the last is deployed)
//	FLEETKIT_BENCH_KDAVE_MAX    largest release count the kdave-offsets method is run for
//	                            (default 2000: it decodes every revision on every page)
//	FLEETKIT_BENCH_APISERVER=1  also run against a real kube-apiserver (internal/kubetest)
func benchEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

const benchObjects = 25 // objects per manifest

// benchManifest renders release i's manifest: 25 objects of current APIs,
// one HorizontalPodAutoscaler autoscaling/v2beta2 (removed in v1.26) and,
// in every tenth release, an extensions/v1beta1 Ingress.
func benchManifest(i int) string {
	var b strings.Builder
	kinds := []struct{ apiVersion, kind string }{{"apps/v1", "Deployment"}, {"v1", "Service"}, {"v1", "ConfigMap"},
		{"v1", "ServiceAccount"}, {"rbac.authorization.k8s.io/v1", "Role"}, {"networking.k8s.io/v1", "NetworkPolicy"}}
	for j := range benchObjects {
		k := kinds[j%len(kinds)]
		switch {
		case j == 0:
			k.apiVersion, k.kind = "autoscaling/v2beta2", "HorizontalPodAutoscaler"
		case j == 1 && i%10 == 0:
			k.apiVersion, k.kind = "extensions/v1beta1", "Ingress"
		}
		fmt.Fprintf(&b, `---
# Source: app-%d/templates/obj-%d.yaml
apiVersion: %s
kind: %s
metadata:
  name: app-%d-obj-%d
  labels:
    app.kubernetes.io/name: app-%d
    app.kubernetes.io/instance: app-%d
    app.kubernetes.io/managed-by: Helm
    helm.sh/chart: app-1.2.3
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: app-%d
  template:
    metadata:
      labels:
        app.kubernetes.io/name: app-%d
    spec:
      containers:
      - name: app
        image: "registry.example.com/app:1.2.3"
        ports:
        - containerPort: 8080
        resources:
          limits: {cpu: 500m, memory: 256Mi}
`, i, j, k.apiVersion, k.kind, i, j, i, i, i, i)
	}
	return b.String()
}

// benchSecret encodes revision rev of release i as Helm stores it.
func benchSecret(ns string, i, rev, revisions int) corev1.Secret {
	name := fmt.Sprintf("app-%d", i)
	manifest := benchManifest(i)
	status := release.StatusSuperseded
	if rev == revisions {
		status = release.StatusDeployed
	}
	rel := &release.Release{
		Name: name, Namespace: ns, Version: rev,
		Info: &release.Info{Status: status, LastDeployed: helmtime.Time{Time: time.Unix(1.7e9, 0)}},
		Chart: &chart.Chart{
			Metadata:  &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.2.3", AppVersion: "1.2.3"},
			Templates: []*chart.File{{Name: "templates/all.yaml", Data: []byte(manifest)}},
			Values:    map[string]any{"replicas": 2, "image": map[string]any{"tag": "1.2.3"}},
		},
		Manifest: manifest,
		Hooks:    []*release.Hook{{Name: "test", Kind: "Pod", Path: "app/templates/tests/test.yaml", Manifest: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: test\n"}},
	}
	js, err := json.Marshal(rel)
	if err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // as Helm's driver
	_, _ = zw.Write(js)
	_ = zw.Close()
	return corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, rev), Namespace: ns,
			Labels: map[string]string{"owner": "helm", "name": name, "status": string(status), "version": strconv.Itoa(rev)},
		},
		Type: "helm.sh/release.v1",
		Data: map[string][]byte{"release": []byte(base64.StdEncoding.EncodeToString(buf.Bytes()))},
	}
}

// benchSecrets builds n releases of revisions each, spread over 10
// namespaces, encoding on all CPUs.
func benchSecrets(n, revisions int) []corev1.Secret {
	out := make([]corev1.Secret, n*revisions)
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range n {
		g.Go(func() error {
			for rev := 1; rev <= revisions; rev++ {
				out[i*revisions+rev-1] = benchSecret(fmt.Sprintf("ns-%d", i%10), i, rev, revisions)
			}
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// memSecretsClient serves pre-built Secrets like the API server: label
// selectors, Limit/Continue (pages deep-copied, as the API server decodes
// a fresh page each time). The rest of the clientset is the fake's. It
// measures the scanner, not the fake's tracker, which deep-copies every
// object on every List.
type memSecretsClient struct {
	kubernetes.Interface
	items []corev1.Secret // sorted by namespace/name
	lists atomic.Int64
}

func newMemSecretsClient(items []corev1.Secret) *memSecretsClient {
	slices.SortFunc(items, func(a, b corev1.Secret) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return &memSecretsClient{Interface: newFake(), items: items}
}

func (c *memSecretsClient) CoreV1() corev1client.CoreV1Interface {
	return memCore{CoreV1Interface: c.Interface.CoreV1(), c: c}
}

type memCore struct {
	corev1client.CoreV1Interface
	c *memSecretsClient
}

func (m memCore) Secrets(ns string) corev1client.SecretInterface {
	return memSecrets{SecretInterface: m.CoreV1Interface.Secrets(ns), c: m.c, ns: ns}
}

type memSecrets struct {
	corev1client.SecretInterface
	c  *memSecretsClient
	ns string
}

func (s memSecrets) List(_ context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	s.c.lists.Add(1)
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, err
	}
	start := 0
	if opts.Continue != "" {
		start, _ = strconv.Atoi(opts.Continue)
	}
	list := &corev1.SecretList{}
	for i := start; i < len(s.c.items); i++ {
		it := &s.c.items[i]
		if (s.ns != "" && it.Namespace != s.ns) || !sel.Matches(labels.Set(it.Labels)) {
			continue
		}
		if opts.Limit > 0 && int64(len(list.Items)) == opts.Limit {
			list.Continue = strconv.Itoa(i)
			break
		}
		list.Items = append(list.Items, *it.DeepCopy())
	}
	return list, nil
}

// usage is what one scan cost: wall time, CPU time of this process, and
// memory above the data set held before the scan.
type usage struct {
	wall, cpu time.Duration
	// peak is the peak of heap objects (live and not yet collected); live
	// the peak of the live heap measured at the end of each GC cycle.
	peak, live uint64
}

func (u *usage) max(v usage) {
	u.wall, u.cpu = max(u.wall, v.wall), max(u.cpu, v.cpu)
	u.peak, u.live = max(u.peak, v.peak), max(u.live, v.live)
}

func (u usage) report(b *testing.B) {
	b.ReportMetric(u.wall.Seconds(), "s/scan")
	b.ReportMetric(u.cpu.Seconds(), "cpu-s/scan")
	b.ReportMetric(float64(u.peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(u.live)/(1<<20), "peak-live-MB")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs fn and samples the heap while it runs.
func measure(fn func()) usage {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(sample)
	base, baseLive := sample[0].Value.Uint64(), sample[1].Value.Uint64()
	var peak, live atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak.Store(max(peak.Load(), s[0].Value.Uint64()))
			live.Store(max(live.Load(), s[1].Value.Uint64()))
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	})
	start, cpu := time.Now(), cpuTime()
	fn()
	u := usage{wall: time.Since(start), cpu: cpuTime() - cpu}
	close(stop)
	wg.Wait()
	if p := peak.Load(); p > base {
		u.peak = p - base
	}
	if l := live.Load(); l > baseLive {
		u.live = l - baseLive
	}
	return u
}

// kdaveScan is kdave's method with Helm's SDK: action.List over all
// namespaces, 256 releases at a time with Offset, each page's releases
// checked by a pool of workers.
func kdaveScan(ctx context.Context, cfg *action.Configuration, checker *deprecation.Checker, workers int) (int, error) {
	releases := 0
	for offset := 0; ; offset += helm.DefaultPageSize {
		l := action.NewList(cfg)
		l.AllNamespaces, l.Limit, l.Offset = true, helm.DefaultPageSize, offset
		l.SetStateMask()
		page, err := l.Run()
		if err != nil {
			return 0, err
		}
		var g errgroup.Group
		g.SetLimit(workers)
		for _, r := range page {
			g.Go(func() error {
				_, err := checker.Check(ctx, r.Name, []byte(r.Manifest))
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return 0, err
		}
		releases += len(page)
		if len(page) < helm.DefaultPageSize {
			return releases, nil
		}
	}
}

func kdaveConfig(client kubernetes.Interface) *action.Configuration {
	return &action.Configuration{
		Releases:     storage.Init(driver.NewSecrets(client.CoreV1().Secrets(""))),
		KubeClient:   &kubefake.PrintingKubeClient{},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...any) {},
	}
}

// BenchmarkScan scans N releases (FLEETKIT_BENCH_RELEASES) of 3 revisions
// and 25 objects each, reporting the wall time of a full scan and the
// peak live heap above the data set. Run once for the figures:
//
//	FLEETKIT_BENCH_RELEASES=10000 go test -run '^$' -bench BenchmarkScan -benchtime 1x -timeout 60m ./deprecation/helm/
func BenchmarkScan(b *testing.B) {
	n := benchEnv("FLEETKIT_BENCH_RELEASES", 200)
	revisions := benchEnv("FLEETKIT_BENCH_REVISIONS", 3)
	kdaveMax := benchEnv("FLEETKIT_BENCH_KDAVE_MAX", 2000)
	secrets := benchSecrets(n, revisions)
	target := deprecation.MustParseVersion("v1.30")
	checker, err := deprecation.NewChecker(nil, deprecation.Options{Target: target})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()

	run := func(b *testing.B, client kubernetes.Interface, pageSize int64) {
		s, err := helm.New(client, helm.Options{Target: target, PageSize: pageSize})
		if err != nil {
			b.Fatal(err)
		}
		var u usage
		var rep *deprecation.ScanReport
		for b.Loop() {
			u.max(measure(func() { rep, err = deprecation.ScanReleases(ctx, s, nil) }))
			if err != nil {
				b.Fatal(err)
			}
			if len(rep.Releases) != n {
				b.Fatalf("scanned %d releases, want %d", len(rep.Releases), n)
			}
		}
		u.report(b)
	}

	b.Run(fmt.Sprintf("releases=%d/fake/page=256", n), func(b *testing.B) { run(b, newMemSecretsClient(secrets), 256) })
	b.Run(fmt.Sprintf("releases=%d/fake/page=64", n), func(b *testing.B) { run(b, newMemSecretsClient(secrets), 64) })
	b.Run(fmt.Sprintf("releases=%d/fake/kdave-offsets", n), func(b *testing.B) {
		if n > kdaveMax {
			b.Skipf("kdave's method decodes every revision on every page: %d releases > FLEETKIT_BENCH_KDAVE_MAX=%d", n, kdaveMax)
		}
		cfg := kdaveConfig(newMemSecretsClient(secrets))
		var u usage
		for b.Loop() {
			var got int
			u.max(measure(func() { got, err = kdaveScan(ctx, cfg, checker, runtime.GOMAXPROCS(0)) }))
			if err != nil || got != n {
				b.Fatalf("kdave scan: %d releases, want %d: %v", got, n, err)
			}
		}
		u.report(b)
	})

	if os.Getenv("FLEETKIT_BENCH_APISERVER") != "1" {
		return
	}
	srv := kube.Get(b)
	cfg := srv.Config()
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	loadStart := time.Now()
	if err := benchLoad(ctx, client, secrets); err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d release Secrets into the API server in %v", len(secrets), time.Since(loadStart).Round(time.Second))
	secrets = nil // the API server holds them now
	b.Run(fmt.Sprintf("releases=%d/apiserver/page=256", n), func(b *testing.B) { run(b, client, 256) })
	b.Run(fmt.Sprintf("releases=%d/apiserver/kdave-offsets", n), func(b *testing.B) {
		if n > kdaveMax {
			b.Skipf("%d releases > FLEETKIT_BENCH_KDAVE_MAX=%d", n, kdaveMax)
		}
		cfg := kdaveConfig(client)
		var u usage
		for b.Loop() {
			var got int
			u.max(measure(func() { got, err = kdaveScan(ctx, cfg, checker, runtime.GOMAXPROCS(0)) }))
			if err != nil || got != n {
				b.Fatalf("kdave scan: %d releases, want %d: %v", got, n, err)
			}
		}
		u.report(b)
	})
}

// benchLoad creates the namespaces and Secrets in the API server, once per
// test binary (a second call finds them there).
func benchLoad(ctx context.Context, client kubernetes.Interface, secrets []corev1.Secret) error {
	var g errgroup.Group
	g.SetLimit(16)
	for i := range 10 {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ns-%d", i)}}
		if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
			return err
		}
	}
	for i := range secrets {
		g.Go(func() error {
			_, err := client.CoreV1().Secrets(secrets[i].Namespace).Create(ctx, &secrets[i], metav1.CreateOptions{})
			if err != nil && strings.Contains(err.Error(), "already exists") {
				return nil
			}
			return err
		})
	}
	return g.Wait()
}
