#!/usr/bin/env bash
# Builds the local control plane's binaries from their Go modules (cluster/go/*), once per
# machine, into the cache directory lib.sh names. Nothing is downloaded but Go modules,
# through the module proxy, checked against the committed go.sum files.
#
# The binaries are built into a temporary directory and moved into place only when every
# one of them built, so an interrupted or failed build never leaves a cache that looks
# complete. Any failure exits non-zero with the go command's output and the phase named.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if binaries_present; then
	echo "cluster: binaries cached in $BIN_DIR"
	exit 0
fi

mkdir -p "$CACHE_ROOT"
# One build at a time per cache: a second `make cluster-up` waits for the first.
exec 9>"$CACHE_ROOT/.build.lock"
flock 9
if binaries_present; then
	echo "cluster: binaries cached in $BIN_DIR (built by another run)"
	exit 0
fi

export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false"
command -v go >/dev/null || { echo "cluster: BUILD FAILED: no go toolchain on PATH" >&2; exit 1; }

work="$(mktemp -d "$CACHE_ROOT/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
NICE="${AICR_BUILD_NICE:-10}"
start=$SECONDS

fail() {
	echo "cluster: BUILD FAILED: $1 (see the go output above)" >&2
	exit 1
}

# build <module dir> <package> <binary name> <ldflags>
build() {
	local mod="$1" pkg="$2" name="$3" ld="$4" t0=$SECONDS
	echo "cluster: building $name from $pkg"
	(cd "$CLUSTER_SRC/go/$mod" && nice -n "$NICE" go build -trimpath -ldflags "-s -w $ld" -o "$work/bin/$name" "$pkg") ||
		fail "go build $pkg"
	echo "cluster:   built $name in $((SECONDS - t0)) s"
}

for mod in k8s etcd kwok helm; do
	echo "cluster: go mod download ($mod module)"
	(cd "$CLUSTER_SRC/go/$mod" && nice -n "$NICE" go mod download) || fail "go mod download in cluster/go/$mod"
done
echo "cluster:   modules ready after $((SECONDS - start)) s"

k8s_minor="${K8S_VERSION#v1.}"
k8s_minor="${k8s_minor%%.*}"
k8s_ld=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	k8s_ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$k8s_minor"
	k8s_ld+=" -X $p.gitTreeState=clean -X $p.gitCommit=aicr-tui-module-build"
done
for cmd in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
	build k8s "k8s.io/kubernetes/cmd/$cmd" "$cmd" "$k8s_ld"
done
build etcd go.etcd.io/etcd/server/v3 etcd ""
build kwok sigs.k8s.io/kwok/cmd/kwok kwok ""
build helm helm.sh/helm/v4/cmd/helm helm "-X helm.sh/helm/v4/internal/version.version=$HELM_VERSION"

for b in "${BINARIES[@]}"; do
	[[ -x "$work/bin/$b" ]] || fail "$b missing after the build"
done
rm -rf "$BUILD_DIR"
mkdir -p "$(dirname "$BUILD_DIR")"
mv "$work" "$BUILD_DIR"
trap - EXIT
echo "cluster: built ${#BINARIES[@]} binaries in $((SECONDS - start)) s into $BIN_DIR"
