package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fleetkit/fleetkit/fleet"
)

// ErrMetricsUnavailable is returned by an InstanceMetrics that cannot reach
// an instance or read its metrics. The API answers it with a 503.
var ErrMetricsUnavailable = errors.New("httpapi: instance metrics unavailable")

// InstanceMetrics reads the current metrics of a ready instance: what its
// own service exposes. Implementations must be safe for concurrent use and
// may block (they do I/O) until ctx is done; they wrap
// ErrMetricsUnavailable when the instance cannot be read.
type InstanceMetrics interface {
	Gather(ctx context.Context, inst fleet.Instance) ([]*dto.MetricFamily, error)
}

// InstanceMetricsFunc adapts a function to InstanceMetrics.
type InstanceMetricsFunc func(ctx context.Context, inst fleet.Instance) ([]*dto.MetricFamily, error)

// Gather implements InstanceMetrics.
func (f InstanceMetricsFunc) Gather(ctx context.Context, inst fleet.Instance) ([]*dto.MetricFamily, error) {
	return f(ctx, inst)
}

// HTTPMetrics scrapes http://<instance host><Path> in the Prometheus text
// format. The zero value is ready to use. Safe for concurrent use.
type HTTPMetrics struct {
	// Client sends the scrapes; nil means a client that ignores the
	// environment's proxy (instances are on the data plane's network) and
	// keeps no idle connection.
	Client *http.Client
	// Path is the instance's metrics path ("" means /metrics).
	Path string
	// Timeout bounds one scrape (0 means 5 s).
	Timeout time.Duration
	// MaxBody bounds the exposition read (0 means 1 MiB); a longer one is
	// refused, not truncated.
	MaxBody int64
}

var _ InstanceMetrics = (*HTTPMetrics)(nil)

// Gather implements InstanceMetrics.
func (h *HTTPMetrics) Gather(ctx context.Context, inst fleet.Instance) ([]*dto.MetricFamily, error) {
	if inst.Host == "" {
		return nil, fmt.Errorf("%w: instance %s has no host", ErrMetricsUnavailable, inst.ID)
	}
	path, timeout, limit, client := h.Path, h.Timeout, h.MaxBody, h.Client
	if path == "" {
		path = "/metrics"
	}
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	if limit <= 0 {
		limit = 1 << 20
	}
	if client == nil {
		client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+inst.Host+path, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMetricsUnavailable, err)
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: scrape %s: %v", ErrMetricsUnavailable, inst.ID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: scrape %s: %s answered %d", ErrMetricsUnavailable, inst.ID, inst.Host, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: scrape %s: %v", ErrMetricsUnavailable, inst.ID, err)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("%w: scrape %s: exposition over %d bytes", ErrMetricsUnavailable, inst.ID, limit)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: scrape %s: %v", ErrMetricsUnavailable, inst.ID, err)
	}
	out := make([]*dto.MetricFamily, 0, len(fams))
	for _, f := range fams {
		out = append(out, f)
	}
	return out, nil
}
