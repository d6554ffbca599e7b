package kubetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/internal/testenv"
)

// Cluster is a single-node cluster shared by the tests of a package,
// started on first use and stopped when the test binary's tests are done
// (through testenv.AtExit: the package's TestMain must call testenv.Main
// or testenv.Run). The zero value is ready; declare it as a package
// variable:
//
//	var cluster kubetest.Cluster
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
//	func TestPods(t *testing.T) {
//		node := cluster.Get(t)
//		ns := kubetest.Namespace(t, node)
//		...
//	}
type Cluster struct {
	// Options are used by the first Get.
	Options NodeOptions

	shared shared[*Node]
}

// Get returns the shared node, starting it on first use; it may wait for
// another test binary's node to stop (see StartNode). Without the binaries,
// a host tool or root it reports them missing through testenv.Missing
// (skip, or fail under CI=true); when the node cannot start it fails the
// test. Under -short it skips.
func (c *Cluster) Get(t testing.TB) *Node {
	t.Helper()
	return c.shared.get(t, "run scripts/kube-testenv.sh as root", func() (*Node, error) {
		if err := CheckNode(c.Options.BinDir); err != nil {
			return nil, err
		}
		opts := c.Options
		if opts.Logf == nil {
			opts.Logf = t.Logf
		}
		node, err := StartNode(context.Background(), opts)
		if err != nil {
			return nil, err
		}
		if !testenv.AtExit(func() { _ = node.Stop() }) {
			return nil, errors.Join(node.Stop(), errors.New("a Cluster needs TestMain to call testenv.Main or testenv.Run, which stop it"))
		}
		return node, nil
	})
}

// Stop stops the shared node if it was started; a later Get fails.
func (c *Cluster) Stop() error { return c.shared.stop() }

func binDirOr(d string) string {
	if d == "" {
		return BinDir()
	}
	return d
}

var unsafeName = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates a namespace for the test, named after it, waits until
// Pods can be created in it (its default ServiceAccount exists), and
// deletes it when the test ends.
func Namespace(t testing.TB, n *Node) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(n.Config())
	if err != nil {
		t.Fatal(err)
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(t.Name()), "-"), "-")
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.Trim(name, "-") + "-" + hex.EncodeToString(b[:])
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("kubetest: creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	err = poll(ctx, 30*time.Second, "ServiceAccount "+name+"/default", nil, func(ctx context.Context) (bool, string) {
		_, err := cs.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return true, ""
	})
	if err != nil {
		t.Fatal(err)
	}
	return name
}
