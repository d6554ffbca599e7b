package gitops_test

import (
	"context"
	"fmt"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/gitops"
)

func ExampleBuild() {
	res, err := gitops.Build(context.Background(), gitops.Options{
		Path:   "testdata/fleet",
		Only:   "apps", // apps, the infrastructure it depends on, flux-system that renders it
		Target: deprecation.MustParseVersion("v1.29.0"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range res.Nodes {
		fmt.Println(n.ID, n.Status, n.Images)
		for _, f := range n.Findings {
			fmt.Printf("  %s %s/%s: %s\n", f.State, f.Kind, f.Name, f.APIVersion)
		}
	}
	// Output:
	// flux-system/apps ok [alpine:3.19 nginx:1.25]
	//   removed Ingress/web: networking.k8s.io/v1beta1
	//   removed CronJob/report-prod: batch/v1beta1
	// flux-system/flux-system ok []
	// flux-system/infrastructure ok [busybox:1.36 registry.k8s.io/ingress-nginx/controller:v1.9.4]
	//   removed PodSecurityPolicy/restricted: policy/v1beta1
}
