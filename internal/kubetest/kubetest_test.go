package kubetest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fleetkit/fleetkit/internal/kubetest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

var kube kubetest.Env

func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }

func TestStartMissingBinaries(t *testing.T) {
	_, err := kubetest.Start(context.Background(), kubetest.Options{BinDir: t.TempDir()})
	require.ErrorIs(t, err, kubetest.ErrMissing)
}

func TestBinDir(t *testing.T) {
	t.Setenv("FLEETKIT_KUBE_BIN", "/x/bin")
	assert.Equal(t, "/x/bin", kubetest.BinDir())
	t.Setenv("FLEETKIT_KUBE_BIN", "")
	t.Setenv("FLEETKIT_CACHE", "/c")
	assert.Equal(t, filepath.Join("/c", "kube", "v"+kubetest.KubeVersion), kubetest.BinDir())
}

func TestServer(t *testing.T) {
	srv := kube.Get(t)
	t.Cleanup(func() { require.NoError(t, kube.Stop()) })

	client, err := kubernetes.NewForConfig(srv.Config())
	require.NoError(t, err)
	v, err := client.Discovery().ServerVersion()
	require.NoError(t, err)
	assert.Equal(t, "v"+kubetest.KubeVersion, v.GitVersion)

	ctx := context.Background()
	_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kt"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = client.CoreV1().Secrets("kt").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"k": []byte("v")},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	// The kubeconfig file reaches the same server.
	cfg, err := clientcmd.BuildConfigFromFlags("", srv.Kubeconfig())
	require.NoError(t, err)
	c2, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	sec, err := c2.CoreV1().Secrets("kt").Get(ctx, "s", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "v", string(sec.Data["k"]))

	dir := srv.Dir()
	require.NoError(t, srv.Stop())
	require.NoError(t, srv.Stop(), "idempotent")
	_, err = os.Stat(dir)
	assert.True(t, errors.Is(err, os.ErrNotExist), "working directory removed")
}
