# Shared by build.sh, up.sh and down.sh (sourced, not run). Works out where things live:
#   CLUSTER_SRC  the repository's cluster/ directory (the Go modules, the kwok stages)
#   STATE_DIR    <repo>/.cluster: certs, kubeconfigs, etcd data, pid files, logs, env
#   BIN_DIR      the cached binaries, ~/.cache/aicr-tui/k8s/<versions>-<sum>/bin; the
#                directory name holds every pinned version plus a digest of the go.mod and
#                go.sum files, so changing any pin builds into a new directory.
set -euo pipefail

CLUSTER_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$CLUSTER_SRC/.." && pwd)"
STATE_DIR="${AICR_CLUSTER_STATE:-$REPO_ROOT/.cluster}"
CACHE_ROOT="${AICR_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/aicr-tui/k8s}"

# The loopback ports. Override them (all together) to run a second cluster on one machine.
ETCD_CLIENT_PORT="${AICR_ETCD_PORT:-22379}"
ETCD_PEER_PORT="${AICR_ETCD_PEER_PORT:-22380}"
APISERVER_PORT="${AICR_APISERVER_PORT:-26443}"
KCM_PORT="${AICR_KCM_PORT:-20257}"
SCHEDULER_PORT="${AICR_SCHEDULER_PORT:-20259}"
KWOK_PORT="${AICR_KWOK_PORT:-20247}"

# The version a module pins for one dependency, read from its go.mod (require or tool line).
module_version() {
	local mod="$1" dep="$2"
	awk -v dep="$dep" '$1 == dep && $2 ~ /^v/ { print $2; exit }' "$CLUSTER_SRC/go/$mod/go.mod"
}

K8S_VERSION="$(module_version k8s k8s.io/kubernetes)"
ETCD_VERSION="$(module_version etcd go.etcd.io/etcd/server/v3)"
KWOK_VERSION="$(module_version kwok sigs.k8s.io/kwok)"
HELM_VERSION="$(module_version helm helm.sh/helm/v4)"
for _v in K8S_VERSION ETCD_VERSION KWOK_VERSION HELM_VERSION; do
	if [[ -z "${!_v}" ]]; then
		echo "cluster: cannot read $_v from $CLUSTER_SRC/go/*/go.mod" >&2
		exit 1
	fi
done
unset _v

_sum="$(cat "$CLUSTER_SRC"/go/*/go.mod "$CLUSTER_SRC"/go/*/go.sum "$CLUSTER_SRC/build.sh" | sha256sum | cut -c1-12)"
BUILD_DIR="$CACHE_ROOT/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-kwok-$KWOK_VERSION-helm-$HELM_VERSION-$_sum"
BIN_DIR="$BUILD_DIR/bin"
unset _sum

BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok helm)

binaries_present() {
	local b
	for b in "${BINARIES[@]}"; do
		[[ -x "$BIN_DIR/$b" ]] || return 1
	done
}
