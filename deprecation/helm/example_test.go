package helm_test

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
)

func ExampleNew() {
	// A cluster with one release, stored by Helm's own secret driver.
	client := fake.NewClientset()
	rel := testRelease("shop", "web", 1, release.StatusDeployed, "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\n")
	if err := driver.NewSecrets(client.CoreV1().Secrets("shop")).Create("sh.helm.release.v1.web.v1", rel); err != nil {
		panic(err)
	}

	s, err := helm.New(client, helm.Options{Target: deprecation.MustParseVersion("v1.25")})
	if err != nil {
		panic(err)
	}
	rep, err := deprecation.ScanReleases(context.Background(), s, nil)
	if err != nil {
		panic(err)
	}
	for _, r := range rep.Releases {
		for _, f := range r.Findings {
			fmt.Printf("%s/%s rev %d: %s %s uses %s (%s, use %s)\n", r.Namespace, r.Name, r.Revision, f.Kind, f.Name, f.APIVersion, f.State, f.Rule.ReplacementAPI)
		}
	}
	// Output:
	// shop/web rev 1: Ingress web uses extensions/v1beta1 (removed, use networking.k8s.io/v1)
}
