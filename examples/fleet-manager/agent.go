package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/agentapi"
	"github.com/fleetkit/fleetkit/fleet/agentplane"
	"github.com/fleetkit/fleetkit/fleet/cluster"
)

// Data planes of -data-plane.
const (
	dataPlaneMachines = "machines"
	dataPlaneAgent    = "agent"
)

// agentPlane sets opts up for the agent data plane on st (the data plane
// and the cluster provider) and returns the agent API to mount.
func agentPlane(cfg *Config, st fleet.Store, k fleet.Kind, log *slog.Logger, reg prometheus.Registerer, opts *fleet.Options) (*agentapi.Handler, error) {
	secret, err := cfg.AgentSecret()
	if err != nil {
		return nil, err
	}
	ar, ok := st.(agentapi.Store)
	if !ok {
		return nil, fmt.Errorf("-data-plane agent: the store %T keeps no agent reports", st)
	}
	dp, err := agentplane.New(ar, agentplane.Options{Kind: k.Name, StaleAfter: cfg.Agent.StaleAfter})
	if err != nil {
		return nil, err
	}
	opts.DataPlane, opts.ClusterProvider = dp, dp
	return agentapi.New(ar, agentapi.Options{Kind: k, Secret: secret, Logger: log, Registerer: reg})
}

// clusterToken prints the token of a cluster's agent.
func clusterToken(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("cluster-token", flag.ContinueOnError)
	fs.SetOutput(out)
	var (
		config    = fs.String("config", "", "YAML config whose agent.token_secret_file signs the token (required)")
		kind      = fs.String("kind", "dinosaur", "resource kind: dinosaur or kafka")
		clusterID = fs.String("cluster", "", "the cluster's ID (required)")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *config == "" || *clusterID == "" {
		return errors.New("cluster-token: -config and -cluster are required")
	}
	k, err := kindOf(*kind)
	if err != nil {
		return err
	}
	cfg, err := LoadConfig(*config)
	if err != nil {
		return err
	}
	ids := []string{cluster.Defaults()[0].ID}
	if len(cfg.Clusters) > 0 {
		ids = ids[:0]
		for _, c := range cfg.Clusters {
			ids = append(ids, c.ID)
		}
	}
	if !slices.Contains(ids, *clusterID) {
		return fmt.Errorf("cluster-token: cluster %q is not in the config's clusters", *clusterID)
	}
	secret, err := cfg.AgentSecret()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, agentapi.Token(secret, k.Name, *clusterID))
	return err
}
