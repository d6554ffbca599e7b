package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fleetkit/fleetkit/internal/httpjson"
	"github.com/fleetkit/fleetkit/internal/httpserver"
)

// HeaderInstanceID names the instance in every answer of the per-instance
// service.
const HeaderInstanceID = "X-Fleet-Instance-Id"

// instanceInfo is the per-instance service's answer to GET /.
type instanceInfo struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// instance runs the per-instance service: the stand-in for the managed
// service (a Kafka, a dinosaur) that the data plane runs as one machine per
// instance. It answers GET /health, GET / (the instance's id, kind and
// name) and GET /metrics (its Prometheus metrics) until ctx is done.
func instance(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("instance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		addr     = fs.String("addr", "127.0.0.1:8080", "listen address HOST:PORT")
		info     instanceInfo
		orphaned = fs.Bool("exit-with-parent", false, "exit when the process that started this one is gone")
	)
	fs.StringVar(&info.ID, "id", "", "instance ID (required)")
	fs.StringVar(&info.Kind, "kind", "", "resource kind (required)")
	fs.StringVar(&info.Name, "name", "", "instance name (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if info.ID == "" || info.Kind == "" || info.Name == "" {
		return errors.New("instance: -id, -kind and -name are required")
	}
	reg, requests := instanceMetrics(info)
	mux := http.NewServeMux()
	// handle counts every answer of pattern's handler in requests, labelled
	// by the pattern (a closed set) and the status code.
	handle := func(pattern string, h http.HandlerFunc) {
		mux.Handle(pattern, promhttp.InstrumentHandlerCounter(requests.MustCurryWith(prometheus.Labels{"handler": pattern}), h))
	}
	handle("GET /health", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	// The data plane's liveness check names the instance it expects: an
	// address that another instance took since answers 404, never 200.
	handle("GET /health/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != info.ID {
			httpjson.WriteError(w, httpjson.Errorf(http.StatusNotFound, "this is instance %s, not %s", info.ID, r.PathValue("id")))
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	handle("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { httpjson.Write(w, http.StatusOK, info) })
	// The instance's own metrics, which the fleet manager's metrics calls
	// (…/{id}/metrics/query, query_range, federate) read.
	handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP)
	// Every answer names the instance, so a client holding a stale host
	// can tell it reached another one.
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderInstanceID, info.ID)
		mux.ServeHTTP(w, r)
	})
	ln, err := httpserver.Listen(*addr)
	if err != nil {
		return err
	}
	if *orphaned {
		var cancel context.CancelFunc
		ctx, cancel = untilOrphaned(ctx, time.Second)
		defer cancel()
	}
	return httpserver.Run(ctx, httpserver.New(handler), ln, 0)
}

// instanceMetrics returns the per-instance service's registry: an info
// series naming the instance, its start time, the process's own series
// (CPU, memory, file descriptors) and the requests counter it returns,
// every series labelled with the instance's id.
func instanceMetrics(info instanceInfo) (*prometheus.Registry, *prometheus.CounterVec) {
	reg := prometheus.NewRegistry()
	id := prometheus.WrapRegistererWith(prometheus.Labels{"instance_id": info.ID}, reg)
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fleetkit_instance_requests_total", Help: "Requests the instance's service answered, by route and status code.",
	}, []string{"handler", "code"})
	infoGauge := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "fleetkit_instance_info", Help: "Always 1: the instance's kind and name.",
		ConstLabels: prometheus.Labels{"kind": info.Kind, "name": info.Name},
	})
	infoGauge.Set(1)
	start := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "fleetkit_instance_start_time_seconds", Help: "When the instance's service started, in seconds since the Unix epoch.",
	})
	start.SetToCurrentTime()
	id.MustRegister(requests, infoGauge, start, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg, requests
}

// untilOrphaned returns a context that is cancelled once this process's
// parent has exited (the kernel then re-parents it, so Getppid changes).
// The process provider starts each machine in a process group of its own
// and stops it on Close, but a fleet manager that is killed cannot: without
// this its instances would outlive it, holding their ports, and a restarted
// manager, which cannot adopt processes, would start new ones beside them.
// The goroutine ends with the returned context.
func untilOrphaned(ctx context.Context, every time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	parent := os.Getppid()
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if os.Getppid() != parent {
					cancel()
					return
				}
			}
		}
	}()
	return ctx, cancel
}
