// Package config is the machine manager's configuration file: YAML (or
// JSON) read, validated and turned into rollout.Options. It belongs to the
// example binary (the rollout package knows only its Options) and is
// public so that what writes such a file — the Helm chart's tests, a
// user's tooling — can check it with the binary's own parser.
package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fleetkit/fleetkit/rollout"
)

// File is the machine manager's configuration file, YAML or JSON (JSON is
// YAML). It is read and validated at start and never written. Durations
// are Go durations ("5s", "1m30s"). Every error wraps
// rollout.ErrInvalidConfig. Example:
//
//	start_timeout: 30s
//	remove_timeout: 10s
//	update_steps: [1, 5, 10, 50, 100]
//	health: {interval: 5s, timeout: 2s, threshold: 1}
//	replace_unhealthy: false
//	max_machines_per_language: 32
//	max_machines: 128
//	state_file: /var/lib/fleetkit/rollout.json
//	balancer: {address: "http://127.0.0.1:8080", secret_file: /etc/fleetkit/balancer-secret}
//	languages:
//	  python:
//	    version: "1.0"            # the version machines run before any update
//	    versions:
//	      "1.0": {image: "fleetkit/linter:1.0", command: "linter"}
//	      "2.0": {image: "fleetkit/linter:2.0", command: "linter"}
type File struct {
	// StartTimeout bounds the creation of a machine until it is healthy;
	// 0 means rollout.DefaultStartTimeout.
	StartTimeout time.Duration `yaml:"start_timeout"`
	// RemoveTimeout bounds the removal of a machine; 0 means
	// rollout.DefaultRemoveTimeout.
	RemoveTimeout time.Duration `yaml:"remove_timeout"`
	// UpdateSteps are the new version's percentages; empty means
	// rollout.DefaultSteps.
	UpdateSteps []int `yaml:"update_steps"`
	// Health tunes the health checks of the machines.
	Health Health `yaml:"health"`
	// ReplaceUnhealthy replaces a machine that became unhealthy instead of
	// only keeping it out of the balancer (off by default, as the seed says).
	ReplaceUnhealthy bool `yaml:"replace_unhealthy"`
	// MaxMachinesPerLanguage and MaxMachines cap the live machines /create
	// makes (409 beyond); 0 means rollout's defaults, a negative value no
	// cap.
	MaxMachinesPerLanguage int `yaml:"max_machines_per_language"`
	MaxMachines            int `yaml:"max_machines"`
	// StateFile is where the rollout phases are kept across restarts; ""
	// keeps them in memory only.
	StateFile string `yaml:"state_file"`
	// Balancer is the load balancer's admin API.
	Balancer Balancer `yaml:"balancer"`
	// Languages maps each language to its versions. At least one.
	Languages map[string]Language `yaml:"languages"`
	// Auto configures the automatic mode; off unless Enabled.
	Auto Auto `yaml:"auto"`
}

// Health tunes the health checks; zero fields mean the defaults of
// machines/health (5s, 2s, 1 failure).
type Health struct {
	Interval  time.Duration `yaml:"interval"`
	Timeout   time.Duration `yaml:"timeout"`
	Threshold int           `yaml:"threshold"`
}

// Balancer locates the balancer's admin API.
type Balancer struct {
	// Address is the admin API's base URL, "http://127.0.0.1:8080".
	Address string `yaml:"address"`
	// Secret is the admin secret. Prefer SecretFile (or the
	// FLEETKIT_SECRET_KEY environment variable the binary reads): a file
	// readable by the manager only.
	Secret string `yaml:"secret"`
	// SecretFile is a file holding the admin secret (surrounding white
	// space ignored), read by Load; relative to the configuration file.
	SecretFile string `yaml:"secret_file"`
	// RatioTotal is the sum the balancer wants weights to have; 0 means
	// rollout.DefaultRatioTotal.
	RatioTotal int `yaml:"ratio_total"`
	// MetricsURL is the balancer's Prometheus endpoint
	// ("http://127.0.0.1:8081/metrics"): with it the manager keeps the last
	// minutes of every version's request rate, error rate and latency
	// (the page's charts), which the automatic mode judges.
	MetricsURL string `yaml:"metrics_url"`
	// SampleInterval is how often MetricsURL is read; 0 means
	// rollout.DefaultSampleInterval.
	SampleInterval time.Duration `yaml:"sample_interval"`
}

// Language is one language of the fleet (rollout.Language).
type Language struct {
	// Version is the version machines run before any update (the state
	// file, once written, takes precedence).
	Version string `yaml:"version"`
	// Versions maps every version that may run to how to run it.
	Versions map[string]Version `yaml:"versions"`
}

// Version says how to run one version (rollout.VersionSpec).
type Version struct {
	Image   string            `yaml:"image"`
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
}

// Auto configures the automatic mode (see rollout.AutoOptions). Rates and
// latency come from the balancer's metrics (balancer.metrics_url).
type Auto struct {
	Enabled bool `yaml:"enabled"`
	// MetricsURL is the balancer's Prometheus endpoint; an older spelling
	// of balancer.metrics_url, used when that is empty.
	MetricsURL string `yaml:"metrics_url"`
	// StepAfter is how long a step bakes before it may pass.
	StepAfter time.Duration `yaml:"step_after"`
	// MaxErrorRate is the highest acceptable error rate of the new version,
	// a fraction in [0, 1].
	MaxErrorRate float64 `yaml:"max_error_rate"`
	// MaxLatencyRatio bounds the new version's p50 and p99 against the
	// stable version's (negative: latency is not judged).
	MaxLatencyRatio float64 `yaml:"max_latency_ratio"`
	// LatencySlack is a latency difference too small to fail on.
	LatencySlack time.Duration `yaml:"latency_slack"`
	// MinRequests is the new version's requests needed for a verdict.
	MinRequests int `yaml:"min_requests"`
	// MaxMachineFailures is how many new-version machines may exit or fail
	// a health check during a step (negative: not judged).
	MaxMachineFailures int `yaml:"max_machine_failures"`
}

// Load reads and validates the configuration file at path.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", rollout.ErrInvalidConfig, err)
	}
	c, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f := c.Balancer.SecretFile; f != "" {
		if !filepath.IsAbs(f) {
			f = filepath.Join(filepath.Dir(path), f)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: balancer.secret_file: %v", path, rollout.ErrInvalidConfig, err)
		}
		if c.Balancer.Secret = strings.TrimSpace(string(b)); c.Balancer.Secret == "" {
			return nil, fmt.Errorf("%s: %w: balancer.secret_file %s is empty", path, rollout.ErrInvalidConfig, f)
		}
	}
	return c, nil
}

// Parse decodes (YAML or JSON) and validates a configuration. Unknown
// fields are errors, so a misspelt setting does not go unnoticed.
func Parse(data []byte) (*File, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c File
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: the file is empty", rollout.ErrInvalidConfig)
		}
		return nil, fmt.Errorf("%w: %v", rollout.ErrInvalidConfig, err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate checks the configuration; every error wraps
// rollout.ErrInvalidConfig and names the setting.
func (c *File) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{rollout.ErrInvalidConfig}, args...)...))
	}
	for name, d := range map[string]time.Duration{
		"start_timeout": c.StartTimeout, "remove_timeout": c.RemoveTimeout,
		"health.interval": c.Health.Interval, "health.timeout": c.Health.Timeout,
		"auto.step_after": c.Auto.StepAfter, "auto.latency_slack": c.Auto.LatencySlack,
		"balancer.sample_interval": c.Balancer.SampleInterval,
	} {
		if d < 0 {
			bad("%s is negative (%s)", name, d)
		}
	}
	if c.Health.Threshold < 0 {
		bad("health.threshold is negative (%d)", c.Health.Threshold)
	}
	if len(c.UpdateSteps) > 0 {
		if err := rollout.ValidateSteps(c.UpdateSteps); err != nil {
			errs = append(errs, fmt.Errorf("update_steps: %w", err))
		}
	}
	if c.Balancer.RatioTotal < 0 {
		bad("balancer.ratio_total is negative (%d)", c.Balancer.RatioTotal)
	}
	if c.Balancer.Address != "" && !strings.HasPrefix(c.Balancer.Address, "http://") && !strings.HasPrefix(c.Balancer.Address, "https://") {
		bad("balancer.address %q must be an http:// or https:// URL", c.Balancer.Address)
	}
	if c.Balancer.Address != "" && c.Balancer.Secret == "" && c.Balancer.SecretFile == "" {
		bad("balancer.secret is required with balancer.address (or balancer.secret_file, a file holding it)")
	}
	if c.Balancer.Secret != "" && c.Balancer.SecretFile != "" {
		bad("balancer.secret and balancer.secret_file are both set; keep one")
	}
	if c.Auto.Enabled && c.metricsURL() == "" {
		bad("balancer.metrics_url (the balancer's /metrics) is required with auto.enabled")
	}
	if c.Auto.MinRequests < 0 {
		bad("auto.min_requests is negative (%d)", c.Auto.MinRequests)
	}
	for name, u := range map[string]string{"balancer.metrics_url": c.Balancer.MetricsURL, "auto.metrics_url": c.Auto.MetricsURL} {
		if u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			bad("%s %q must be an http:// or https:// URL", name, u)
		}
	}
	if c.Auto.MaxErrorRate < 0 || c.Auto.MaxErrorRate > 1 {
		bad("auto.max_error_rate %v must be a fraction in [0, 1]", c.Auto.MaxErrorRate)
	}
	if len(c.Languages) == 0 {
		bad("no languages: set languages.<name>.version and .versions")
	}
	for _, name := range slices.Sorted(maps.Keys(c.Languages)) {
		if err := c.Languages[name].rollout().Validate(name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RequireRunnable checks that every version has what the named provider
// needs: an image for "docker" and "kubernetes", a command for "process".
func (c *File) RequireRunnable(provider string) error {
	for _, name := range slices.Sorted(maps.Keys(c.Languages)) {
		for _, v := range slices.Sorted(maps.Keys(c.Languages[name].Versions)) {
			s := c.Languages[name].Versions[v]
			switch {
			case (provider == "docker" || provider == "kubernetes") && s.Image == "":
				return fmt.Errorf("%w: languages.%s.versions.%s has no image; -provider %s needs one", rollout.ErrInvalidConfig, name, v, provider)
			case provider == "process" && s.Command == "":
				return fmt.Errorf("%w: languages.%s.versions.%s has no command; -provider process needs one", rollout.ErrInvalidConfig, name, v)
			}
		}
	}
	return nil
}

// metricsURL is balancer.metrics_url, else auto.metrics_url.
func (c *File) metricsURL() string { return cmp.Or(c.Balancer.MetricsURL, c.Auto.MetricsURL) }

// rollout returns l as rollout knows it.
func (l Language) rollout() rollout.Language {
	vs := make(map[string]rollout.VersionSpec, len(l.Versions))
	for v, s := range l.Versions {
		vs[v] = rollout.VersionSpec{Image: s.Image, Command: s.Command, Args: s.Args, Env: s.Env}
	}
	return rollout.Language{Version: l.Version, Versions: vs}
}

// Options returns the Manager options the configuration describes: Metrics
// scraping balancer.metrics_url when set, and the Auto options only when
// enabled.
func (c *File) Options() rollout.Options {
	o := rollout.Options{
		Steps:                  slices.Clone(c.UpdateSteps),
		StartTimeout:           c.StartTimeout,
		RemoveTimeout:          c.RemoveTimeout,
		HealthInterval:         c.Health.Interval,
		HealthTimeout:          c.Health.Timeout,
		HealthThreshold:        c.Health.Threshold,
		ReplaceUnhealthy:       c.ReplaceUnhealthy,
		MaxMachinesPerLanguage: c.MaxMachinesPerLanguage,
		MaxMachines:            c.MaxMachines,
		StateFile:              c.StateFile,
		RatioTotal:             c.Balancer.RatioTotal,
		Languages:              make(map[string]rollout.Language, len(c.Languages)),
	}
	for name, l := range c.Languages {
		o.Languages[name] = l.rollout()
	}
	if u := c.metricsURL(); u != "" {
		o.Metrics = rollout.NewBalancerMetrics(rollout.NewScrapeGatherer(u, c.scrapeClient()), rollout.CounterOptions{})
		o.SampleInterval = c.Balancer.SampleInterval
	}
	if c.Auto.Enabled {
		o.Auto = &rollout.AutoOptions{
			StepAfter:          c.Auto.StepAfter,
			MaxErrorRate:       c.Auto.MaxErrorRate,
			MaxLatencyRatio:    c.Auto.MaxLatencyRatio,
			LatencySlack:       c.Auto.LatencySlack,
			MinRequests:        c.Auto.MinRequests,
			MaxMachineFailures: c.Auto.MaxMachineFailures,
		}
	}
	return o
}

// scrapeClient returns the client that scrapes the metrics URL: one that
// gives the balancer's secret (which a balancer serving /metrics beside its
// public API asks for) when the URL is on the balancer's host, and nil
// (the default client) otherwise, so the secret goes nowhere else.
func (c *File) scrapeClient() *http.Client {
	m, err1 := url.Parse(c.metricsURL())
	b, err2 := url.Parse(c.Balancer.Address)
	if err1 != nil || err2 != nil || c.Balancer.Secret == "" || m.Host != b.Host || m.Scheme != b.Scheme {
		return nil
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: secretHeader{secret: c.Balancer.Secret},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// secretHeader adds the balancer's admin secret to a request.
type secretHeader struct{ secret string }

func (s secretHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Secret-Key", s.secret)
	return http.DefaultTransport.RoundTrip(r)
}
