package helmtest

import (
	"context"
	"fmt"
	"io"
	"testing"

	"go.uber.org/goleak"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// APIServerArgs are the kube-apiserver flags Populate needs.
var APIServerArgs = []string{"--runtime-config=resource.k8s.io/v1beta1=true"}

// newChart returns a chart named name whose templates are the given files
// (name -> content; hooks carry their helm.sh/hook annotations).
func newChart(name, version string, templates map[string]string) *chart.Chart {
	c := &chart.Chart{Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: name, Version: version, AppVersion: "1.0"}}
	for n, t := range templates {
		c.Templates = append(c.Templates, &chart.File{Name: "templates/" + n, Data: []byte(t)})
	}
	return c
}

// Templates of the fixture charts.
const (
	deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
      - name: app
        image: "example.com/app:{{ .Values.tag | default "1" }}"
`
	// claimTemplate uses resource.k8s.io/v1beta1: removal-soon in 1.37.
	claimTemplate = `apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata:
  name: {{ .Release.Name }}-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.example.com
`
	// deviceClassHook is a pre-install hook with a deprecated API.
	deviceClassHook = `apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata:
  name: {{ .Release.Namespace }}-{{ .Release.Name }}-gpu
  annotations:
    "helm.sh/hook": pre-install,pre-upgrade
    "helm.sh/hook-delete-policy": before-hook-creation
spec: {}
`
	configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  k: v
`
	oldIngress = `apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: {{ .Release.Name }}
spec:
  backend:
    serviceName: web
    servicePort: 80
`
	oldPDBHook = `apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: {{ .Release.Name }}-hook
  annotations:
    "helm.sh/hook": post-install
spec:
  minAvailable: 1
`
)

// webChart has a current Deployment, a resource.k8s.io/v1beta1
// ResourceClaimTemplate and a DeviceClass pre-install hook of the same
// deprecated API.
func webChart() *chart.Chart {
	return newChart("web", "1.0.0", map[string]string{"deployment.yaml": deployment, "claim.yaml": claimTemplate, "hook.yaml": deviceClassHook})
}

// cleanChart uses current APIs only.
func cleanChart() *chart.Chart {
	return newChart("clean", "0.1.0", map[string]string{"cm.yaml": configMap})
}

// legacyChart has an extensions/v1beta1 Ingress and a policy/v1beta1
// PodDisruptionBudget post-install hook, both removed in 1.37.
func legacyChart() *chart.Chart {
	return newChart("legacy", "0.9.0", map[string]string{"ingress.yaml": oldIngress, "pdb.yaml": oldPDBHook})
}

// actionConfig returns a real Helm action configuration for namespace ns of the
// cluster kubeconfig reaches. With apply false the objects are not applied
// (Helm's printing kube client) but releases are stored in the cluster.
func actionConfig(t testing.TB, kubeconfig, ns string, apply bool) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	flags.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.WarningHandler = rest.NoWarnings{} // the deprecated APIs are on purpose
		return c
	}
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatalf("helmtest: init: %v", err)
	}
	if !apply {
		cs, err := cfg.KubernetesClientSet()
		if err != nil {
			t.Fatalf("helmtest: clientset: %v", err)
		}
		cfg.KubeClient = &kubefake.PrintingKubeClient{Out: io.Discard}
		cfg.Releases = storage.Init(driver.NewSecrets(cs.CoreV1().Secrets(ns)))
		cfg.Capabilities = chartutil.DefaultCapabilities
	}
	return cfg
}

// install installs c as release name in ns.
func install(t testing.TB, cfg *action.Configuration, ns, name string, c *chart.Chart, vals map[string]any) {
	t.Helper()
	in := action.NewInstall(cfg)
	in.Namespace, in.ReleaseName = ns, name
	if _, err := in.RunWithContext(context.Background(), c, vals); err != nil {
		t.Fatalf("helmtest: install %s/%s: %v", ns, name, err)
	}
}

// upgrade upgrades release name in ns to c.
func upgrade(t testing.TB, cfg *action.Configuration, ns, name string, c *chart.Chart, vals map[string]any) {
	t.Helper()
	up := action.NewUpgrade(cfg)
	up.Namespace = ns
	if _, err := up.RunWithContext(context.Background(), name, c, vals); err != nil {
		t.Fatalf("helmtest: upgrade %s/%s: %v", ns, name, err)
	}
}

// Populate creates namespaces shop and billing and, in them:
//
//	shop/web       webChart installed, upgraded twice (revision 3 deployed);
//	               revision 2 relabelled deployed, as an interrupted upgrade
//	               leaves it: revision 3 must win
//	shop/broken    a release Secret labelled deployed whose data is not gzip
//	billing/web    webChart installed once
//	billing/clean  cleanChart, no findings
//	billing/legacy legacyChart (removed APIs), stored but not applied
//
// so a scan against v1.37 finds: shop/web and billing/web each a
// ResourceClaimTemplate and a DeviceClass (hook), removal-soon;
// billing/legacy an Ingress and a PodDisruptionBudget (hook), removed; and
// one corrupt release.
func Populate(t testing.TB, kubeconfig string, client kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range []string{"shop", "billing"} {
		if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("helmtest: namespace %s: %v", ns, err)
		}
	}
	shop := actionConfig(t, kubeconfig, "shop", true)
	install(t, shop, "shop", "web", webChart(), nil)
	upgrade(t, shop, "shop", "web", webChart(), map[string]any{"tag": "2"})
	upgrade(t, shop, "shop", "web", webChart(), map[string]any{"tag": "3"})
	v2, err := client.CoreV1().Secrets("shop").Get(ctx, "sh.helm.release.v1.web.v2", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("helmtest: %v", err)
	}
	v2.Labels["status"] = "deployed"
	if _, err := client.CoreV1().Secrets("shop").Update(ctx, v2, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("helmtest: %v", err)
	}
	_, err = client.CoreV1().Secrets("shop").Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.broken.v1", Labels: map[string]string{
			"owner": "helm", "status": "deployed", "name": "broken", "version": "1"}},
		Type: "helm.sh/release.v1",
		// base64 of the gzip magic and garbage.
		Data: map[string][]byte{"release": []byte("H4sIAGdhcmJhZ2U=")},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("helmtest: corrupt secret: %v", err)
	}

	billing := actionConfig(t, kubeconfig, "billing", true)
	install(t, billing, "billing", "web", webChart(), nil)
	install(t, billing, "billing", "clean", cleanChart(), nil)
	install(t, actionConfig(t, kubeconfig, "billing", false), "billing", "legacy", legacyChart(), nil)
}

// Releases are the releases Populate creates that a scan reads, as
// namespace/name@revision.
var Releases = []string{"billing/clean@1", "billing/legacy@1", "billing/web@1", "shop/web@3"}

// Corrupt is the corrupt release Populate creates.
const Corrupt = "shop/broken@1"

// String renders a release as Releases does.
func String(ns, name string, rev int) string { return fmt.Sprintf("%s/%s@%d", ns, name, rev) }

// AbandonedRenders is the goleak option of a test binary whose tests cut
// a render off with its context (testenv.MainLeakChecked(m,
// helmtest.AbandonedRenders())). helm.Render returns when its context is
// done but cannot stop Helm's template engine, so the render runs to its
// end on the goroutine Render started: that goroutine outlives the test by
// design, and is the only one ignored.
func AbandonedRenders() goleak.Option {
	return goleak.IgnoreAnyFunction("github.com/fleetkit/fleetkit/deprecation/helm.install")
}
