// Package kubeconfig finds the client configuration of a binary that talks
// to Kubernetes, the way kubectl does, with the in-cluster configuration
// as the last resort: a binary runs the same on a laptop and in a Pod.
package kubeconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// namespaceFile is where a Pod finds its namespace (the service account's
// mounted files).
const namespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Load returns the client configuration and its namespace: the kubeconfig
// file named by path, else $KUBECONFIG or ~/.kube/config, else the
// in-cluster configuration (a Pod's service account). kubeContext picks a
// context of the kubeconfig ("" the current one). The namespace is the
// context's, or the Pod's in the cluster, or "default".
func Load(path, kubeContext string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	if path == "" && kubeContext == "" && os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		if _, err := os.Stat(clientcmd.RecommendedHomeFile); err != nil {
			cfg, err := rest.InClusterConfig()
			if err != nil {
				return nil, "", fmt.Errorf("no kubeconfig (-kubeconfig, $KUBECONFIG, %s) and not in a cluster: %w",
					filepath.Join("~", clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName), err)
			}
			ns := "default"
			if b, err := os.ReadFile(namespaceFile); err == nil && strings.TrimSpace(string(b)) != "" {
				ns = strings.TrimSpace(string(b))
			}
			return cfg, ns, nil
		}
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	if ns == "" {
		ns = "default"
	}
	return cfg, ns, nil
}
