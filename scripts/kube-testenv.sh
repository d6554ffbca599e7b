#!/usr/bin/env bash
# The Kubernetes test environment of internal/kubetest, built from Go
# modules (no binary downloads are possible here) into a cache outside the
# repository, once. Facts: shared/reference/kube-testenv.md and
# kube-cluster.md.
#
#   scripts/kube-testenv.sh [build]  # builds what is missing; prints the directory
#   scripts/kube-testenv.sh down     # removes what a dead test node left on this host
#   scripts/kube-testenv.sh up       # a node for a developer: prints KUBECONFIG, runs until Ctrl-C
#
# build makes, in $FLEETKIT_CACHE/kube/v$KUBE_VERSION (FLEETKIT_KUBE_BIN of
# the tests):
#   etcd, kube-apiserver                       the API server (deprecation/helm's tests)
#   kubelet, kube-scheduler,
#   kube-controller-manager, kube-proxy        the node (internal/kubetest.Cluster)
#   cni-$CNI_VERSION/{bridge,host-local,loopback}
#   pause-1.tar                                the sandbox image: a static Go binary FROM scratch
# Cold (empty Go build cache): 744 CPU-seconds, at least 6 minutes on 2
# idle cores (25 minutes measured on a busy one); with a warm Go build
# cache 28 s; with everything present, instant. Needs Docker only for the
# pause image.
# containerd and runc are Debian's (installed with Docker); the node runs a
# private containerd and never touches Docker's.
set -euo pipefail
cd "$(dirname "$0")/.."
KUBE_VERSION="${KUBE_VERSION:-1.37.1}" # the v1.37.2 zip is refused by the proxy
ETCD_VERSION="${ETCD_VERSION:-v3.7.3}"
CNI_VERSION="${CNI_VERSION:-v1.6.2}"
cache="${FLEETKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetkit}"
bin="$cache/kube/v$KUBE_VERSION"

log() { echo "kube-testenv: $*" >&2; }

case "${1:-build}" in
build) ;;
down | up)
	# One implementation of the node's lifecycle: internal/kubetest.
	export FLEETKIT_KUBE_BIN="${FLEETKIT_KUBE_BIN:-$bin}" FLEETKIT_CACHE="$cache"
	exec go run ./internal/kubetest/cmd/kubenode "$1"
	;;
*)
	echo "usage: $0 [build|down|up]" >&2
	exit 2
	;;
esac

mkdir -p "$bin"
# Two builds at once (two checkouts, CI and a developer) would race on the
# same files: take turns.
exec 9>"$cache/kube/build.lock"
flock 9

work=""
cleanup() { if [ -n "$work" ]; then rm -rf "$work"; fi; }
trap cleanup EXIT

# Kubernetes' commands, in one throw-away module so that its replace
# directives never touch the project's go.mod, built by one `go build`
# (shared packages compile once).
want=()
for c in kube-apiserver kubelet kube-scheduler kube-controller-manager kube-proxy; do
	[ -x "$bin/$c" ] || want+=("$c")
done
if [ ${#want[@]} -gt 0 ]; then
	log "building ${want[*]} v$KUBE_VERSION (minutes on a cold Go build cache)"
	work="$(mktemp -d)"
	(
		cd "$work"
		export GOFLAGS=-mod=mod
		go mod init example.com/kbuild >/dev/null 2>&1
		go mod download "k8s.io/kubernetes@v$KUBE_VERSION"
		# kubernetes' go.mod replaces its staging modules with ./staging
		# paths; point them at the published versions instead.
		grep '=> ./staging' "$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/v$KUBE_VERSION.mod" |
			awk -v sv="v0.${KUBE_VERSION#1.}" '{print "-replace="$1"="$1"@"sv}' |
			xargs go mod edit -require="k8s.io/kubernetes@v$KUBE_VERSION"
		{
			printf '//go:build tools\n\npackage tools\n\nimport (\n'
			for c in "${want[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c"; done
			printf ')\n'
		} >tools.go
		go mod tidy >/dev/null 2>&1
		P=k8s.io/component-base/version
		minor="${KUBE_VERSION#1.}"
		minor="${minor%%.*}"
		# The -X version flags are required: clients cannot parse the
		# version of a server built without them.
		mkdir out
		pkgs=()
		for c in "${want[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
		go build -ldflags "-s -w -X $P.gitVersion=v$KUBE_VERSION -X $P.gitMajor=1 -X $P.gitMinor=$minor -X $P.gitTreeState=clean" \
			-o out/ "${pkgs[@]}"
		for c in "${want[@]}"; do mv "out/$c" "$bin/$c"; done
	) >&2
	rm -rf "$work"
	work=""
fi

if [ ! -x "$bin/etcd" ]; then
	log "building etcd $ETCD_VERSION"
	work="$(mktemp -d)"
	(
		cd "$work"
		go mod init example.com/etcd >/dev/null 2>&1
		printf 'package main\n\nimport (\n\t"os"\n\n\t"go.etcd.io/etcd/server/v3/etcdmain"\n)\n\nfunc main() { etcdmain.Main(os.Args) }\n' >main.go
		go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null 2>&1
		go mod tidy >/dev/null 2>&1
		go build -ldflags "-s -w" -o "$bin/etcd.tmp" .
		mv "$bin/etcd.tmp" "$bin/etcd"
	) >&2
	rm -rf "$work"
	work=""
fi

# The CNI plugins the node's bridge network needs.
cni="$bin/cni-$CNI_VERSION"
if [ ! -x "$cni/bridge" ] || [ ! -x "$cni/host-local" ] || [ ! -x "$cni/loopback" ]; then
	log "building CNI plugins $CNI_VERSION"
	m=github.com/containernetworking/plugins/plugins
	mkdir -p "$cni.tmp"
	CGO_ENABLED=0 GOBIN="$cni.tmp" GOFLAGS=-mod=mod go install -ldflags "-s -w" \
		"$m/main/bridge@$CNI_VERSION" "$m/main/loopback@$CNI_VERSION" "$m/ipam/host-local@$CNI_VERSION" >&2
	rm -rf "$cni"
	mv "$cni.tmp" "$cni"
fi

# The sandbox ("pause") image: a static Go binary that waits for SIGTERM,
# FROM scratch, saved as a tar that the node imports into its containerd.
pause="$bin/pause-1.tar"
if [ ! -s "$pause" ]; then
	if ! docker info >/dev/null 2>&1; then
		log "no Docker Engine: cannot build the pause image (the node tests will say so)"
	else
		log "building the pause image"
		work="$(mktemp -d)"
		(
			cd "$work"
			printf 'module pause\n\ngo 1.22\n' >go.mod
			printf 'package main\n\nimport (\n\t"os"\n\t"os/signal"\n\t"syscall"\n)\n\nfunc main() {\n\tc := make(chan os.Signal, 1)\n\tsignal.Notify(c, syscall.SIGINT, syscall.SIGTERM)\n\t<-c\n}\n' >main.go
			CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o pause .
			printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' >Dockerfile
			tag=fleetkit/kube-pause:1
			docker build -q -t "$tag" . >/dev/null 2>build.err || {
				cat build.err >&2
				exit 1
			}
			docker save "$tag" >"$pause.tmp"
			docker rmi "$tag" >/dev/null
			mv "$pause.tmp" "$pause"
		) >&2
		rm -rf "$work"
		work=""
	fi
fi
echo "$bin"
