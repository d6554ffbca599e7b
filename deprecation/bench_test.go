package deprecation

import (
	"context"
	"testing"
)

// BenchmarkCheck compares Check (pre-scan, validate the rest, parse only
// candidates and what the validator cannot vouch for), Check with
// Options.Lazy (no validator) and the naive approach (parse every document
// as YAML, as pluto does) on Helm-style
// manifests of 25 objects: one release without deprecated objects, one
// with two, and a stream of 400 releases (10,000 documents) in which every
// tenth release has two. Run with:
//
//	go test -run '^$' -bench BenchmarkCheck -benchmem ./deprecation/
func BenchmarkCheck(b *testing.B) {
	c := newChecker(b, "")
	lazy, err := NewChecker(nil, Options{Lazy: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	methods := []struct {
		name  string
		check func(data []byte) (Result, error)
	}{
		{"prescan", func(data []byte) (Result, error) { return c.Check(ctx, "bench", data) }},
		{"lazy", func(data []byte) (Result, error) { return lazy.Check(ctx, "bench", data) }},
		{"naive", func(data []byte) (Result, error) { return naiveCheck(c, "bench", data) }},
	}
	for _, size := range []struct {
		name                  string
		releases, legacyEvery int
	}{
		{"release-25docs-clean", 1, 0},
		{"release-25docs-legacy", 1, 1},
		{"stream-10000docs", 400, 10},
	} {
		data := genManifests(size.releases, size.legacyEvery)
		docs := size.releases * docsPerRelease
		for _, m := range methods {
			b.Run(size.name+"/"+m.name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					res, err := m.check(data)
					if err != nil || res.Documents != docs {
						b.Fatalf("documents %d, want %d: %v", res.Documents, docs, err)
					}
				}
				b.ReportMetric(float64(docs)*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
			})
		}
	}
}
