package kubetest

import (
	"context"
	"os"
)

// LockNode takes the node's lock (waiting for it) and returns its file:
// a child process that inherits the file holds the lock with the test,
// and it stays held when the child dies.
func LockNode(ctx context.Context) (*os.File, error) {
	l, err := lockNode(ctx, lockPath(), true, nil)
	if err != nil {
		return nil, err
	}
	return l.f, nil
}

// StartNodeLocked is StartNode for a caller that holds the lock through f
// (from LockNode, or inherited); Stop leaves it held.
func StartNodeLocked(ctx context.Context, f *os.File) (*Node, error) {
	return startNode(ctx, NodeOptions{}, &nodeLock{f: f})
}
