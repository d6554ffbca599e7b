package deprecation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rsManifest has, in v1.25, one removed object, one current object and
// one removed in v1.26 (removal-soon).
const rsManifest = `apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: pdb
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
---
apiVersion: autoscaling/v2beta2
kind: HorizontalPodAutoscaler
metadata:
  name: hpa
`

// rsRelease checks manifest against target and wraps it as a release.
func rsRelease(t testing.TB, target, ns, name string, rev int, manifest string) Release {
	t.Helper()
	c, err := NewChecker(nil, Options{Target: MustParseVersion(target)})
	require.NoError(t, err)
	src := "secret/" + ns + "/sh.helm.release.v1." + name + ".v1"
	res, err := c.Check(context.Background(), src+"/manifest", []byte(manifest))
	require.NoError(t, err)
	return Release{Name: name, Namespace: ns, Revision: rev, Chart: name, ChartVersion: "1.0.0", AppVersion: "2.0",
		Updated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Source: src,
		Findings: res.Findings, Errors: res.Errors, Documents: res.Documents}
}

// rsStatic is a ReleaseScanner over fixed releases.
func rsStatic(target string, rels ...Release) ReleaseScannerFunc {
	return func(ctx context.Context, fn func(Release) error) (Version, error) {
		for _, r := range rels {
			if err := fn(r); err != nil {
				return Version{}, err
			}
		}
		return MustParseVersion(target), ctx.Err()
	}
}

func TestScanReleases(t *testing.T) {
	corrupt := Release{Name: "bad", Namespace: "a", Revision: 2, Source: "secret/a/sh.helm.release.v1.bad.v2",
		Err: errors.New("deprecation: corrupt release: base64: illegal")}
	s := rsStatic("v1.25.0",
		rsRelease(t, "v1.25", "b", "shop", 3, rsManifest),
		corrupt,
		rsRelease(t, "v1.25", "a", "web", 1, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"),
		rsRelease(t, "v1.25", "a", "api", 1, "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: c\n"),
	)
	clock := []time.Time{time.Unix(100, 0), time.Unix(103, 0)}
	now := func() time.Time { t := clock[0]; clock = clock[1:]; return t }

	rep, err := ScanReleases(context.Background(), s, now)
	require.NoError(t, err)
	assert.Equal(t, MustParseVersion("v1.25"), rep.Target)
	assert.Equal(t, 3*time.Second, rep.Duration())
	var names []string
	for _, r := range rep.Releases {
		names = append(names, r.Namespace+"/"+r.Name)
	}
	assert.Equal(t, []string{"a/api", "a/web", "b/shop"}, names)
	require.Len(t, rep.Corrupt, 1)
	assert.Equal(t, "bad", rep.Corrupt[0].Name)

	dep, rem := rep.releaseCounts()
	assert.Equal(t, 1, dep, "shop: HPA autoscaling/v2beta2 is removed in v1.26")
	assert.Equal(t, 2, rem, "api (CronJob batch/v1beta1) and shop (PDB policy/v1beta1)")
	assert.True(t, slices.ContainsFunc(rep.Releases[0].Findings, func(f Finding) bool { return f.State == StateRemoved }))
	assert.Empty(t, rep.Releases[1].Findings)

	r := rep.Report()
	assert.Equal(t, 3, r.Sources)
	assert.Len(t, r.Errors, 1)
	assert.Equal(t, ExitRemoved, r.ExitCode())
}

func TestScanReleasesErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := ScanReleases(context.Background(), ReleaseScannerFunc(func(context.Context, func(Release) error) (Version, error) {
		return Version{}, boom
	}), nil)
	require.ErrorIs(t, err, boom)
}

func TestReleaseJSONRoundTrip(t *testing.T) {
	rel := rsRelease(t, "v1.25", "ns", "shop", 4, rsManifest+"---\napiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: [\n")
	require.NotEmpty(t, rel.Errors, "the last document is broken")
	rel.Err = errors.New("corrupt")
	b, err := json.Marshal(rel)
	require.NoError(t, err)
	var back Release
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, rel.Findings, back.Findings)
	assert.Equal(t, rel.Updated, back.Updated)
	assert.EqualError(t, back.Err, "corrupt")
	require.Len(t, back.Errors, len(rel.Errors))
	assert.Equal(t, rel.Errors[0].Error(), back.Errors[0].Error())

	b, err = json.Marshal(Release{Name: "x"})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"findings":[]`)
	assert.NotContains(t, string(b), `"error"`)
}

func ExampleScanReleases() {
	checker, _ := NewChecker(nil, Options{Target: MustParseVersion("v1.25")})
	// A ReleaseScanner over a fixed release; deprecation/helm reads them
	// from a cluster.
	scanner := ReleaseScannerFunc(func(ctx context.Context, fn func(Release) error) (Version, error) {
		res, err := checker.Check(ctx, "shop/web", []byte("apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: nightly\n"))
		if err != nil {
			return Version{}, err
		}
		return checker.Target(), fn(Release{Name: "web", Namespace: "shop", Revision: 3, Findings: res.Findings})
	})
	rep, err := ScanReleases(context.Background(), scanner, nil)
	if err != nil {
		panic(err)
	}
	for _, r := range rep.Releases {
		for _, f := range r.Findings {
			fmt.Printf("%s/%s: %s %s %s is %s in %s\n", r.Namespace, r.Name, f.Kind, f.Name, f.APIVersion, f.State, rep.Target)
		}
	}
	fmt.Println("exit code:", rep.Report().ExitCode())
	// Output:
	// shop/web: CronJob nightly batch/v1beta1 is removed in v1.25.0
	// exit code: 3
}
