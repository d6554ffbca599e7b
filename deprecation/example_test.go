package deprecation_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/fleetkit/fleetkit/deprecation"
)

const manifest = `# Source: shop/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
---
apiVersion: batch/v1beta1
kind: CronJob
metadata:
  name: nightly
  namespace: shop
---
apiVersion: autoscaling/v2beta2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  namespace: shop
`

func ExampleChecker_Check() {
	checker, err := deprecation.NewChecker(nil, deprecation.Options{
		Target: deprecation.MustParseVersion("v1.25"),
	})
	if err != nil {
		panic(err)
	}
	res, err := checker.Check(context.Background(), "shop.yaml", []byte(manifest))
	if err != nil {
		panic(err)
	}
	for _, f := range res.Findings {
		fmt.Printf("%s:%d %s %s/%s: %s is %s, use %s\n",
			f.Source, f.Line, f.Kind, f.Namespace, f.Name, f.APIVersion, f.State, f.Rule.ReplacementAPI)
	}
	fmt.Printf("%d documents, %d parsed\n", res.Documents, res.Parsed)
	// Output:
	// shop.yaml:8 CronJob shop/nightly: batch/v1beta1 is removed, use batch/v1
	// shop.yaml:14 HorizontalPodAutoscaler shop/web: autoscaling/v2beta2 is removal-soon, use autoscaling/v2
	// 3 documents, 2 parsed
}

func ExampleReport() {
	// Extra rules, in pluto's versions.yaml format, override the built-in
	// row for batch/v1beta1 CronJob.
	extra, err := deprecation.LoadRules(strings.NewReader(`
deprecated-versions:
  - version: batch/v1beta1
    kind: CronJob
    deprecated-in: v1.21.0
    removed-in: v1.30.0
    replacement-api: batch/v1
    replacement-available-in: v1.21.0
    component: k8s
`))
	if err != nil {
		panic(err)
	}
	rep := shopReport(deprecation.Merge(deprecation.DefaultRules(), extra))
	if err := rep.WriteTable(os.Stdout); err != nil {
		panic(err)
	}
	fmt.Println("exit code", rep.ExitCode())
	// Output:
	// SOURCE     LINE  KIND                     NAME          API VERSION          REPLACEMENT     DEPRECATED IN  REMOVED IN  STATE
	// shop.yaml  8     CronJob                  shop/nightly  batch/v1beta1        batch/v1        v1.21.0        v1.30.0     deprecated
	// shop.yaml  14    HorizontalPodAutoscaler  shop/web      autoscaling/v2beta2  autoscaling/v2  v1.23.0        v1.26.0     removal-soon
	// 2 finding(s), 0 error(s) in 3 document(s) of 1 source(s); target Kubernetes v1.25.0
	// exit code 2
}

// shopReport checks manifest against Kubernetes 1.25 with rules.
func shopReport(rules *deprecation.RuleSet) *deprecation.Report {
	checker, err := deprecation.NewChecker(rules, deprecation.Options{Target: deprecation.MustParseVersion("v1.25")})
	if err != nil {
		panic(err)
	}
	res, err := checker.Check(context.Background(), "shop.yaml", []byte(manifest))
	if err != nil {
		panic(err)
	}
	rep := &deprecation.Report{Target: checker.Target()}
	rep.Add(res)
	return rep
}

func ExampleReport_WriteWith() {
	rep := shopReport(nil)
	// pluto's -o wide, and its exit code with --ignore-removals: the
	// CronJob was deprecated before it was removed, so it still counts.
	if err := rep.WriteWith(os.Stdout, deprecation.WriteOptions{Format: deprecation.FormatWide}); err != nil {
		panic(err)
	}
	fmt.Println("exit code", rep.ExitCodeWith(deprecation.ExitOptions{IgnoreRemovals: true}))
	// Output:
	// NAME     NAMESPACE  KIND                     VERSION              REPLACEMENT     DEPRECATED  DEPRECATED IN  REMOVED  REMOVED IN  REPL AVAIL  REPL AVAIL IN
	// nightly  shop       CronJob                  batch/v1beta1        batch/v1        true        v1.21.0        true     v1.25.0     true        v1.21.0
	// web      shop       HorizontalPodAutoscaler  autoscaling/v2beta2  autoscaling/v2  true        v1.23.0        false    v1.26.0     true        v1.23.0
	// exit code 2
}
