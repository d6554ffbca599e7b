package kubernetes_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/fleetkit/fleetkit/internal/dockertest"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/docker"
	"github.com/fleetkit/fleetkit/machines/internal/linterbin"
	"github.com/fleetkit/fleetkit/machines/kubernetes"
	"github.com/fleetkit/fleetkit/machines/machinestest"
	"github.com/fleetkit/fleetkit/machines/process"
)

// BenchmarkProviders measures, in one run, 20 python 1.0 linters one
// after another on each provider: Create → ready (returned), → healthy
// (the caller's first GET /health answered 200) and Remove → gone. The
// process provider runs the linter binary, Docker and Kubernetes the
// fleetkit/linter:1.0 image of scripts/build-images.sh (on Kubernetes a
// Pod is Ready when its readiness probe, every second, passed).
//
//	go test -run '^$' -bench BenchmarkProviders -benchtime 1x ./machines/kubernetes
func BenchmarkProviders(b *testing.B) {
	const n = 20
	ctx := context.Background()
	spec := linterbin.Spec("python", "1.0")
	spec.HealthPath, spec.StartTimeout = machines.DefaultHealthPath, time.Minute

	report := func(b *testing.B, f machinestest.Figures) {
		b.ReportMetric(ms(machinestest.Percentile(f.Ready, 50)), "ready_p50_ms")
		b.ReportMetric(ms(machinestest.Percentile(f.Ready, 99)), "ready_p99_ms")
		b.ReportMetric(ms(machinestest.Percentile(f.Healthy, 50)), "healthy_p50_ms")
		b.ReportMetric(ms(machinestest.Percentile(f.Healthy, 99)), "healthy_p99_ms")
		b.ReportMetric(ms(machinestest.Percentile(f.Removed, 50)), "gone_p50_ms")
		b.ReportMetric(ms(machinestest.Percentile(f.Removed, 99)), "gone_p99_ms")
		b.Log(f)
	}
	// measure measures p (made with err) on spec with image or command.
	measure := func(b *testing.B, p machines.Provider, err error, image, command string) {
		if err != nil {
			b.Fatal(err)
		}
		if c, ok := p.(io.Closer); ok {
			defer c.Close()
		}
		s := spec
		s.Image, s.Command = image, command
		for b.Loop() {
			f, err := machinestest.Measure(ctx, p, s, n)
			if err != nil {
				b.Fatal(err)
			}
			report(b, f)
		}
	}

	b.Run("process", func(b *testing.B) {
		p, err := process.New(process.Options{StopTimeout: 2 * time.Second})
		measure(b, p, err, "", linterbin.New(b.TempDir()).Path(b))
	})
	b.Run("docker", func(b *testing.B) {
		dockertest.Engine(b)
		p, err := docker.New(docker.Options{Name: fmt.Sprintf("bench-%d", os.Getpid()), StopTimeout: 2 * time.Second})
		measure(b, p, err, "fleetkit/linter:1.0", "")
	})
	b.Run("kubernetes", func(b *testing.B) {
		e := setup(b)
		p, err := kubernetes.New(e.cs, kubernetes.Options{Name: "bench", Namespace: e.ns, StopTimeout: 2 * time.Second})
		measure(b, p, err, "fleetkit/linter:1.0", "")
	})
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
