package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/auth"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/httpapi"
	"github.com/fleetkit/fleetkit/fleet/quota"
)

// Config is the -config file.
type Config struct {
	CloudProviders []struct {
		ID          string `yaml:"id"`
		DisplayName string `yaml:"display_name"`
		Regions     []struct {
			ID            string         `yaml:"id"`
			DisplayName   string         `yaml:"display_name"`
			InstanceTypes []string       `yaml:"instance_types"`
			Limits        map[string]int `yaml:"limits"`
		} `yaml:"regions"`
	} `yaml:"cloud_providers"`
	Clusters []struct {
		ID            string   `yaml:"id"`
		CloudProvider string   `yaml:"cloud_provider"`
		Region        string   `yaml:"region"`
		MultiAZ       bool     `yaml:"multi_az"`
		InstanceTypes []string `yaml:"instance_types"`
		Capacity      int      `yaml:"capacity"`
		// Deprovision retires the cluster (fleet.Options.Deprovision).
		Deprovision bool `yaml:"deprovision"`
	} `yaml:"clusters"`
	// Units are the capacity units of a plan ("standard.x2") or of an
	// instance type (fleet.Options.Units; default 1).
	Units     map[string]int           `yaml:"units"`
	QuotaList string                   `yaml:"quota_list"`
	DenyList  string                   `yaml:"deny_list"`
	Trials    map[string]time.Duration `yaml:"trials"`
	// Sizes lists the sizes of each instance type (default: x1).
	Sizes    map[string][]string      `yaml:"sizes"`
	Timeouts map[string]time.Duration `yaml:"timeouts"`
	Interval time.Duration            `yaml:"interval"`
	Auth     struct {
		HS256SecretFile string `yaml:"hs256_secret_file"`
		RS256KeyFile    string `yaml:"rs256_key_file"`
		JWKSURL         string `yaml:"jwks_url"`
		UsernameClaim   string `yaml:"username_claim"`
		OrgClaim        string `yaml:"org_claim"`
		OrgAdminClaim   string `yaml:"org_admin_claim"`
		Issuer          string `yaml:"issuer"`
		Audience        string `yaml:"audience"`
	} `yaml:"auth"`
	// AllowedOrigins may call the API from a browser (CORS).
	AllowedOrigins []string      `yaml:"allowed_origins"`
	LeaderElection bool          `yaml:"leader_election"`
	LeaseTTL       time.Duration `yaml:"lease_ttl"`
	// DataPlane is what runs the instances: "machines" (the default: a
	// local process or container per instance, see -provider) or "agent"
	// (an agent on each configured cluster; -data-plane overrides it).
	DataPlane string `yaml:"data_plane"`
	// Agent configures the agent data plane and its API.
	Agent struct {
		// TokenSecretFile holds the key the cluster tokens are signed
		// with (at least 16 bytes; fleet-manager cluster-token prints a
		// cluster's token).
		TokenSecretFile string `yaml:"token_secret_file"`
		// StaleAfter is how old a cluster's last heartbeat may be for it
		// to take new instances (default 30s).
		StaleAfter time.Duration `yaml:"stale_after"`
	} `yaml:"agent"`

	dir string
}

// LoadConfig reads a config file; paths in it are relative to its
// directory.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c.dir = filepath.Dir(path)
	return &c, nil
}

func (c *Config) path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.dir, p)
}

// Options turns the config into the fleet.Options for kind k and the
// options of its API; the data plane is left to the caller (see
// newDataPlane).
func (c *Config) Options(k fleet.Kind) (fleet.Options, httpapi.Options, error) {
	opts := fleet.Options{Kind: k, Units: c.Units, Interval: c.Interval, LeaderElection: c.LeaderElection, LeaseTTL: c.LeaseTTL}
	api := httpapi.Options{Trials: c.Trials, Sizes: c.Sizes, AllowedOrigins: c.AllowedOrigins}
	for _, p := range c.CloudProviders {
		cp := httpapi.CloudProvider{ID: p.ID, DisplayName: p.DisplayName}
		for _, r := range p.Regions {
			cp.Regions = append(cp.Regions, httpapi.Region{ID: r.ID, DisplayName: r.DisplayName, InstanceTypes: r.InstanceTypes, Limits: r.Limits})
		}
		api.CloudProviders = append(api.CloudProviders, cp)
	}
	for _, cl := range c.Clusters {
		opts.Clusters = append(opts.Clusters, cluster.Cluster{ID: cl.ID, CloudProvider: cl.CloudProvider, Region: cl.Region,
			MultiAZ: cl.MultiAZ, InstanceTypes: cl.InstanceTypes, Capacity: cl.Capacity})
		if cl.Deprovision {
			opts.Deprovision = append(opts.Deprovision, cl.ID)
		}
	}
	if opts.Clusters == nil && api.CloudProviders == nil {
		opts.Clusters = cluster.Defaults()
	}
	if c.Timeouts != nil {
		opts.Timeouts = map[fleet.Status]time.Duration{}
		for s, d := range c.Timeouts {
			if !fleet.Status(s).Valid() {
				return opts, api, fmt.Errorf("config: timeouts: unknown status %q", s)
			}
			opts.Timeouts[fleet.Status(s)] = d
		}
	}
	if c.QuotaList != "" {
		q, err := quota.LoadList(c.path(c.QuotaList))
		if err != nil {
			return opts, api, err
		}
		api.Quota = q
	}
	if c.DenyList != "" {
		d, err := quota.LoadDenyList(c.path(c.DenyList))
		if err != nil {
			return opts, api, err
		}
		opts.Denied = d.Denied
	}
	jo := auth.JWTOptions{RS256KeyFile: c.path(c.Auth.RS256KeyFile), JWKSURL: c.Auth.JWKSURL, UsernameClaim: c.Auth.UsernameClaim, OrgClaim: c.Auth.OrgClaim,
		OrgAdminClaim: c.Auth.OrgAdminClaim, Issuer: c.Auth.Issuer, Audience: c.Auth.Audience}
	if c.Auth.HS256SecretFile != "" {
		b, err := os.ReadFile(c.path(c.Auth.HS256SecretFile))
		if err != nil {
			return opts, api, err
		}
		jo.HS256Secret = []byte(strings.TrimSpace(string(b)))
	} else if c.Auth.RS256KeyFile == "" && c.Auth.JWKSURL == "" {
		secret, err := devSecret()
		if err != nil {
			return opts, api, err
		}
		jo.HS256Secret = secret
	}
	authn, err := auth.NewJWTAuthenticator(jo)
	if err != nil {
		return opts, api, err
	}
	api.Auth = authn
	return opts, api, nil
}

// AgentSecret reads the key of the cluster tokens (agent.token_secret_file).
func (c *Config) AgentSecret() ([]byte, error) {
	if c.Agent.TokenSecretFile == "" {
		return nil, errors.New("config: the agent data plane needs agent.token_secret_file")
	}
	b, err := os.ReadFile(c.path(c.Agent.TokenSecretFile))
	if err != nil {
		return nil, fmt.Errorf("config: agent.token_secret_file: %w", err)
	}
	secret := []byte(strings.TrimSpace(string(b)))
	if len(secret) < 16 {
		return nil, fmt.Errorf("config: agent.token_secret_file %s holds %d bytes, want at least 16", c.Agent.TokenSecretFile, len(secret))
	}
	return secret, nil
}
