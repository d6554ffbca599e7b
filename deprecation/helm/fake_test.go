package helm_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	helmtime "helm.sh/helm/v3/pkg/time"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// testRelease builds a Helm release as `helm install` stores it.
func testRelease(ns, name string, rev int, status release.Status, manifest string, hooks ...*release.Hook) *release.Release {
	return &release.Release{
		Name: name, Namespace: ns, Version: rev,
		Info: &release.Info{Status: status, LastDeployed: helmtime.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
		Chart: &chart.Chart{
			Metadata:  &chart.Metadata{APIVersion: "v2", Name: name + "-chart", Version: "1.2.3", AppVersion: "4.5"},
			Templates: []*chart.File{{Name: "templates/all.yaml", Data: []byte(manifest)}},
			Values:    map[string]any{"replicas": 2},
		},
		Manifest: manifest,
		Hooks:    hooks,
	}
}

func hook(path, manifest string) *release.Hook {
	return &release.Hook{Name: path, Kind: "Job", Path: path, Manifest: manifest, Events: []release.HookEvent{release.HookPreInstall}}
}

// storeSecret stores rel with Helm's own secret driver.
func storeSecret(t testing.TB, client kubernetes.Interface, rel *release.Release) {
	t.Helper()
	d := driver.NewSecrets(client.CoreV1().Secrets(rel.Namespace))
	require.NoError(t, d.Create(fmt.Sprintf("sh.helm.release.v1.%s.v%d", rel.Name, rel.Version), rel))
}

func storeConfigMap(t testing.TB, client kubernetes.Interface, rel *release.Release) {
	t.Helper()
	d := driver.NewConfigMaps(client.CoreV1().ConfigMaps(rel.Namespace))
	require.NoError(t, d.Create(fmt.Sprintf("sh.helm.release.v1.%s.v%d", rel.Name, rel.Version), rel))
}

// corruptSecret stores a release Secret, labelled deployed, whose data
// is not Helm's format.
func corruptSecret(t testing.TB, client kubernetes.Interface, ns, name string, rev int, data []byte) {
	t.Helper()
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, rev), Namespace: ns,
			Labels: map[string]string{"owner": "helm", "status": "deployed", "name": name, "version": strconv.Itoa(rev)},
		},
		Type: "helm.sh/release.v1",
	}
	if data != nil {
		sec.Data = map[string][]byte{"release": data}
	}
	_, err := client.CoreV1().Secrets(ns).Create(context.Background(), sec, metav1.CreateOptions{})
	require.NoError(t, err)
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Bytes()
}

func b64(b []byte) []byte { return []byte(base64.StdEncoding.EncodeToString(b)) }

// pagingClient wraps the fake clientset, which ignores Limit and
// Continue, with Secret and ConfigMap listings that page like the API
// server: sorted by namespace and name, the continue token being the last
// key returned. It records the options of every List.
type pagingClient struct {
	kubernetes.Interface

	// expireAt makes the List call with this index (0-based) fail with
	// 410 Gone; -1 never.
	expireAt int

	mu    sync.Mutex
	calls []metav1.ListOptions // guarded by mu
}

func newPagingClient(c kubernetes.Interface) *pagingClient {
	return &pagingClient{Interface: c, expireAt: -1}
}

func (p *pagingClient) CoreV1() corev1client.CoreV1Interface {
	return pagingCore{CoreV1Interface: p.Interface.CoreV1(), p: p}
}

func (p *pagingClient) Calls() []metav1.ListOptions {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}

// record records opts and reports whether this call must fail as expired.
func (p *pagingClient) record(opts metav1.ListOptions) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, opts)
	if len(p.calls)-1 == p.expireAt {
		return apierrors.NewResourceExpired("the continue token has expired")
	}
	return nil
}

type pagingCore struct {
	corev1client.CoreV1Interface
	p *pagingClient
}

func (c pagingCore) Secrets(ns string) corev1client.SecretInterface {
	return pagingSecrets{SecretInterface: c.CoreV1Interface.Secrets(ns), p: c.p}
}

func (c pagingCore) ConfigMaps(ns string) corev1client.ConfigMapInterface {
	return pagingConfigMaps{ConfigMapInterface: c.CoreV1Interface.ConfigMaps(ns), p: c.p}
}

type pagingSecrets struct {
	corev1client.SecretInterface
	p *pagingClient
}

func (s pagingSecrets) List(ctx context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	if err := s.p.record(opts); err != nil {
		return nil, err
	}
	all, err := s.SecretInterface.List(ctx, metav1.ListOptions{LabelSelector: opts.LabelSelector})
	if err != nil {
		return nil, err
	}
	items, next := page(all.Items, func(x corev1.Secret) string { return x.Namespace + "/" + x.Name }, opts)
	return &corev1.SecretList{Items: items, ListMeta: metav1.ListMeta{Continue: next}}, nil
}

type pagingConfigMaps struct {
	corev1client.ConfigMapInterface
	p *pagingClient
}

func (s pagingConfigMaps) List(ctx context.Context, opts metav1.ListOptions) (*corev1.ConfigMapList, error) {
	if err := s.p.record(opts); err != nil {
		return nil, err
	}
	all, err := s.ConfigMapInterface.List(ctx, metav1.ListOptions{LabelSelector: opts.LabelSelector})
	if err != nil {
		return nil, err
	}
	items, next := page(all.Items, func(x corev1.ConfigMap) string { return x.Namespace + "/" + x.Name }, opts)
	return &corev1.ConfigMapList{Items: items, ListMeta: metav1.ListMeta{Continue: next}}, nil
}

// page returns the page of items after opts.Continue, opts.Limit long.
func page[T any](items []T, key func(T) string, opts metav1.ListOptions) ([]T, string) {
	slices.SortFunc(items, func(a, b T) int { return strings.Compare(key(a), key(b)) })
	start := 0
	if opts.Continue != "" {
		start, _ = slices.BinarySearchFunc(items, opts.Continue, func(x T, k string) int { return strings.Compare(key(x), k) })
		start++ // the token is the last key returned
	}
	start = min(start, len(items))
	end := len(items)
	if opts.Limit > 0 && start+int(opts.Limit) < end {
		end = start + int(opts.Limit)
	}
	next := ""
	if end < len(items) {
		next = key(items[end-1])
	}
	return items[start:end], next
}

var _ kubernetes.Interface = (*pagingClient)(nil)

func newFake() *fake.Clientset { return fake.NewClientset() }
