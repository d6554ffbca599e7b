#!/usr/bin/env bash
# Builds a real kube-apiserver and etcd from Go modules (no binary
# downloads are possible here) into a cache outside the repository, once.
# Prints the directory holding both binaries. Recipe:
# shared/reference/kube-testenv.md. Cold build: about 6 minutes on 2 cores.
set -euo pipefail
KUBE_VERSION="${KUBE_VERSION:-1.37.1}" # the v1.37.2 zip is refused by the proxy
ETCD_VERSION="${ETCD_VERSION:-v3.7.3}"
cache="${FLEETKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetkit}"
bin="$cache/kube/v$KUBE_VERSION"
mkdir -p "$bin"

if [ ! -x "$bin/kube-apiserver" ]; then
	work="$(mktemp -d)"
	trap 'rm -rf "$work"' EXIT
	(
		cd "$work"
		export GOFLAGS=-mod=mod
		go mod init example.com/kapi >/dev/null 2>&1
		go mod download "k8s.io/kubernetes@v$KUBE_VERSION"
		# kubernetes' go.mod replaces its staging modules with ./staging
		# paths; point them at the published versions instead.
		grep '=> ./staging' "$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/v$KUBE_VERSION.mod" |
			awk -v sv="v0.${KUBE_VERSION#1.}" '{print "-replace="$1"="$1"@"sv}' |
			xargs go mod edit -require="k8s.io/kubernetes@v$KUBE_VERSION"
		printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' >tools.go
		go mod tidy >/dev/null 2>&1
		P=k8s.io/component-base/version
		minor="${KUBE_VERSION#1.}"
		minor="${minor%%.*}"
		go build -ldflags "-s -w -X $P.gitVersion=v$KUBE_VERSION -X $P.gitMajor=1 -X $P.gitMinor=$minor -X $P.gitTreeState=clean" \
			-o "$bin/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
		mv "$bin/kube-apiserver.tmp" "$bin/kube-apiserver"
	) >&2
fi

if [ ! -x "$bin/etcd" ]; then
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
fi
echo "$bin"
