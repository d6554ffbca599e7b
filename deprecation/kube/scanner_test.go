package kube_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/kube"
	"github.com/fleetkit/fleetkit/internal/kubetest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

// kubeEnv serves resource.k8s.io/v1beta1 (deprecated in 1.35, removed in
// 1.38), off by default in 1.37, so that an object can be written through a
// deprecated API that is still served.
var kubeEnv = kubetest.Env{Options: kubetest.Options{APIServerArgs: []string{"--runtime-config=resource.k8s.io/v1beta1=true"}}}

func TestMain(m *testing.M) {
	code := testenv.Run(m)
	// The shared API server outlives the tests; stopped here, its
	// processes and the clients' connections to it end before the leak
	// check.
	_ = kubeEnv.Stop()
	os.Exit(testenv.CheckLeaks(code))
}

// TestScanRealAPIServer writes objects the ways that leave a trace of a
// deprecated API on a real kube-apiserver 1.37 and finds them from their
// records, although the server reads every one of them back as current.
func TestScanRealAPIServer(t *testing.T) {
	srv := kubeEnv.Get(t)
	ctx := context.Background()
	clientCfg := srv.Config()
	clientCfg.WarningHandler = rest.NoWarnings{} // the deprecated API is written on purpose
	client, err := kubernetes.NewForConfig(clientCfg)
	require.NoError(t, err)

	// Applied with kubectl as extensions/v1beta1 before the upgrade that
	// removed it: the annotation keeps the manifest as applied.
	applied := `{"apiVersion":"extensions/v1beta1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},"spec":{}}`
	labels := map[string]string{"app": "web"}
	_, err = client.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default",
			Annotations: map[string]string{kube.LastAppliedAnnotation: applied}},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:1"}}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	// Written through resource.k8s.io/v1beta1 by a controller: the managed
	// fields name the version.
	_, err = client.ResourceV1beta1().DeviceClasses().Create(ctx, &resourcev1beta1.DeviceClass{
		// A manager that owns no field has no entry: give it a label.
		ObjectMeta: metav1.ObjectMeta{Name: "gpu", Labels: map[string]string{"vendor": "example"}},
	}, metav1.CreateOptions{FieldManager: "gpu-operator"})
	require.NoError(t, err)
	// Current, and an annotation that is not JSON.
	_, err = client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "hand-edited", Namespace: "default",
			Annotations: map[string]string{kube.LastAppliedAnnotation: `{"apiVersion": "v1", "kind": `}}}, metav1.CreateOptions{})
	require.NoError(t, err)

	checker, err := deprecation.NewChecker(nil, deprecation.Options{Target: deprecation.MustParseVersion("v1.37")})
	require.NoError(t, err)
	for _, pageSize := range []int64{0, 2} {
		var logged bytes.Buffer // written on Scan's goroutine
		s, err := kube.New(srv.Config(), kube.Options{PageSize: pageSize,
			Logger: slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		require.NoError(t, err)
		rep, err := s.Scan(ctx, checker)
		require.NoError(t, err)
		assert.Contains(t, logged.String(), "v1 ComponentStatus is deprecated",
			"the API server's warnings go to the logger, not to stderr")

		type short struct{ source, apiVersion, kind, name, namespace, state string }
		var got []short
		for _, f := range rep.Findings {
			got = append(got, short{f.Source, f.APIVersion, f.Kind, f.Name, f.Namespace, f.State.String()})
		}
		assert.Equal(t, []short{
			{"deployments.apps/default/web (kubectl.kubernetes.io/last-applied-configuration)", "extensions/v1beta1", "Deployment", "web", "default", "removed"},
			{"deviceclasses.resource.k8s.io/gpu (managed fields of gpu-operator)", "resource.k8s.io/v1beta1", "DeviceClass", "gpu", "", "removal-soon"},
		}, got, "page size %d", pageSize)
		require.Len(t, rep.Invalid, 1)
		assert.True(t, strings.HasPrefix(rep.Invalid[0].Source, "configmaps/default/hand-edited"), rep.Invalid[0].Source)
		assert.Empty(t, rep.Errors)
		assert.Greater(t, rep.Sources, 10, "every object of every resource was read")
	}

	// One namespace: the cluster-scoped DeviceClass is not read.
	s, err := kube.New(srv.Config(), kube.Options{Namespace: "default"})
	require.NoError(t, err)
	rep, err := s.Scan(ctx, checker)
	require.NoError(t, err)
	require.Len(t, rep.Findings, 1)
	assert.Equal(t, "Deployment", rep.Findings[0].Kind)
}

func TestNewErrors(t *testing.T) {
	_, err := kube.New(nil, kube.Options{})
	require.ErrorIs(t, err, kube.ErrInvalidOptions)
	_, err = kube.NewWithClients(nil, nil, kube.Options{})
	require.ErrorIs(t, err, kube.ErrInvalidOptions)
}
