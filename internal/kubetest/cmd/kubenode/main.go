// Command kubenode runs or removes the test node of internal/kubetest,
// for scripts/kube-testenv.sh:
//
//	kubenode down   # removes what a dead test node left on this host
//	kubenode up     # starts a node, prints `export KUBECONFIG=...`, runs until interrupted
//
// Both need root and the binaries of scripts/kube-testenv.sh (found as the
// tests find them: FLEETKIT_KUBE_BIN, else the cache directory).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/fleetkit/fleetkit/internal/kubetest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kubenode:", err)
		if errors.Is(err, kubetest.ErrLocked) {
			os.Exit(3)
		}
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return errors.New("usage: kubenode up|down")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch os.Args[1] {
	case "down":
		return kubetest.Down(ctx, "")
	case "up":
		node, err := kubetest.StartNode(ctx, kubetest.NodeOptions{
			Logf: func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) },
		})
		if err != nil {
			return err
		}
		fmt.Printf("export KUBECONFIG=%s\n", node.Kubeconfig())
		fmt.Fprintf(os.Stderr, "kubenode: node %s Ready; logs in %s; Ctrl-C stops it\n", kubetest.NodeName, node.Dir())
		<-ctx.Done()
		return node.Stop()
	default:
		return fmt.Errorf("unknown command %q: want up or down", os.Args[1])
	}
}
