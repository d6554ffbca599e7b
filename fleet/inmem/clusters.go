package inmem

import (
	"context"
	"sync"

	"github.com/fleetkit/fleetkit/fleet/cluster"
)

// ClusterProvider is the in-memory ClusterProvider: clusters are
// provisioned and deleted at once. Safe for concurrent use.
type ClusterProvider struct {
	mu      sync.Mutex
	created map[string]bool // guarded by mu
}

var _ cluster.Provider = (*ClusterProvider)(nil)

// Create implements cluster.Provider.
func (p *ClusterProvider) Create(_ context.Context, c cluster.Cluster) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.created == nil {
		p.created = map[string]bool{}
	}
	p.created[c.ID] = true
	return nil
}

// Ready implements cluster.Provider.
func (p *ClusterProvider) Ready(_ context.Context, c cluster.Cluster) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.created[c.ID], nil
}

// Delete implements cluster.Provider.
func (p *ClusterProvider) Delete(_ context.Context, c cluster.Cluster) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.created, c.ID)
	return true, nil
}
