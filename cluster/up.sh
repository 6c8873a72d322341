#!/usr/bin/env bash
# `make cluster-up`: builds the binaries when the cache lacks them, then starts a one-node-less
# control plane bound to 127.0.0.1 only: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and the kwok controller (fake nodes: those annotated
# kwok.x-k8s.io/node=fake). Every start is a fresh cluster (new certificates, empty etcd).
# If the cluster this checkout started is already up and healthy, nothing is restarted.
#
# Writes under .cluster/: pki/ (CA, serving and client certificates, service-account keys),
# *.kubeconfig, etcd/ (data), pids/<name>.pid, logs/<name>.log, and env (KUBECONFIG=, PATH=,
# HELM_*_HOME=; read it with `set -a; . .cluster/env; set +a`). The last stdout line is the
# admin kubeconfig's path.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
t_start=$SECONDS

PKI="$STATE_DIR/pki"
PIDS="$STATE_DIR/pids"
LOGS="$STATE_DIR/logs"
ADMIN_KUBECONFIG="$STATE_DIR/admin.kubeconfig"
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
READY_TIMEOUT="${AICR_CLUSTER_READY_TIMEOUT:-120}"

die() {
	echo "cluster: FAILED: $*" >&2
	local n
	for n in "${COMPONENTS[@]}"; do
		if [[ -s "$LOGS/$n.log" ]]; then
			echo "---- last lines of $LOGS/$n.log" >&2
			tail -n 15 "$LOGS/$n.log" >&2
		fi
	done
	"$CLUSTER_SRC/down.sh" >&2 || true
	exit 1
}

api() { # api <path>: GET on the API server as the admin, body on stdout
	curl -sS --max-time 5 --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
		"https://127.0.0.1:$APISERVER_PORT$1"
}

running() { # running <component>: its pid file names a live process of our binary
	local f="$PIDS/$1.pid" pid exe
	[[ -s "$f" ]] || return 1
	pid="$(cat "$f")"
	exe="$(readlink "/proc/$pid/exe" 2>/dev/null)" || return 1
	[[ "$exe" == "$BIN_DIR/$1" ]]
}

write_env() {
	cat >"$STATE_DIR/env.tmp" <<-ENV
		KUBECONFIG=$ADMIN_KUBECONFIG
		PATH=$BIN_DIR:\$PATH
		HELM_CACHE_HOME=$STATE_DIR/helm/cache
		HELM_CONFIG_HOME=$STATE_DIR/helm/config
		HELM_DATA_HOME=$STATE_DIR/helm/data
	ENV
	mv "$STATE_DIR/env.tmp" "$STATE_DIR/env"
}

# Already up? Then leave it alone.
all_up=1
for n in "${COMPONENTS[@]}"; do running "$n" || all_up=0; done
if ((all_up)) && [[ "$(api /readyz 2>/dev/null)" == ok ]]; then
	write_env
	echo "cluster: already running (pids in $PIDS)"
	echo "$ADMIN_KUBECONFIG"
	exit 0
fi

"$CLUSTER_SRC/build.sh" || { echo "cluster: FAILED: the build failed (above)" >&2; exit 1; }
"$CLUSTER_SRC/down.sh" # whatever is left of an earlier run of ours
command -v openssl >/dev/null || { echo "cluster: FAILED: openssl is needed for the certificates" >&2; exit 1; }
command -v curl >/dev/null || { echo "cluster: FAILED: curl is needed for the health checks" >&2; exit 1; }

for port in $ETCD_CLIENT_PORT $ETCD_PEER_PORT $APISERVER_PORT $KCM_PORT $SCHEDULER_PORT $KWOK_PORT; do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		echo "cluster: FAILED: 127.0.0.1:$port is already in use (another cluster? set AICR_*_PORT)" >&2
		exit 1
	fi
done

rm -rf "$PKI" "$STATE_DIR/etcd" "$LOGS" "$STATE_DIR"/*.kubeconfig "$STATE_DIR/env" "$STATE_DIR/helm"
mkdir -p "$PKI" "$PIDS" "$LOGS" "$STATE_DIR/etcd" "$STATE_DIR/kcm-certs" "$STATE_DIR/scheduler-certs"
mkdir -p "$STATE_DIR"/helm/{cache,config,data}
chmod 700 "$STATE_DIR" "$PKI" "$STATE_DIR/etcd"

# ---- certificates (ECDSA P-256: fast to make; the API server accepts ES256 service-account keys)
ssl() { openssl "$@" 2>>"$LOGS/openssl.log" || die "openssl $1 failed (see $LOGS/openssl.log)"; }
newkey() { ssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$PKI/$1.key"; }
newkey ca
ssl req -x509 -new -key "$PKI/ca.key" -days 30 -subj "/CN=aicr-tui-local-ca" -out "$PKI/ca.crt"
# sign <name> <subject> <extensions>
sign() {
	newkey "$1"
	ssl req -new -key "$PKI/$1.key" -subj "$2" -out "$PKI/$1.csr"
	printf '%s\n' "$3" >"$PKI/$1.ext"
	ssl x509 -req -in "$PKI/$1.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
		-days 30 -extfile "$PKI/$1.ext" -out "$PKI/$1.crt"
	rm -f "$PKI/$1.csr" "$PKI/$1.ext"
}
CLIENT_EXT=$'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth'
sign apiserver "/CN=kube-apiserver" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
sign admin "/O=system:masters/CN=aicr-tui-admin" "$CLIENT_EXT"
sign kube-controller-manager "/CN=system:kube-controller-manager" "$CLIENT_EXT"
sign kube-scheduler "/CN=system:kube-scheduler" "$CLIENT_EXT"
sign kwok "/O=system:masters/CN=kwok-controller" "$CLIENT_EXT"
newkey sa
ssl pkey -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub"
chmod 600 "$PKI"/*.key

# kubeconfig <file> <client cert name>: certificates embedded, so the file can be copied.
kubeconfig() {
	umask 077
	cat >"$1" <<-KC
		apiVersion: v1
		kind: Config
		clusters:
		- name: aicr-local
		  cluster:
		    server: https://127.0.0.1:$APISERVER_PORT
		    certificate-authority-data: $(base64 -w0 "$PKI/ca.crt")
		users:
		- name: $2
		  user:
		    client-certificate-data: $(base64 -w0 "$PKI/$2.crt")
		    client-key-data: $(base64 -w0 "$PKI/$2.key")
		contexts:
		- name: aicr-local
		  context:
		    cluster: aicr-local
		    user: $2
		current-context: aicr-local
	KC
	umask 022
}
kubeconfig "$ADMIN_KUBECONFIG" admin
for n in kube-controller-manager kube-scheduler kwok; do kubeconfig "$STATE_DIR/$n.kubeconfig" "$n"; done

# start <component> <args...>: in its own session (a Ctrl-C of the caller does not reach it),
# output to logs/<component>.log, pid to pids/<component>.pid.
start() {
	local n="$1"
	shift
	setsid "$BIN_DIR/$n" "$@" >"$LOGS/$n.log" 2>&1 </dev/null &
	echo $! >"$PIDS/$n.pid"
}

# wait_for <what> <command...>: retries every 0.2 s until the command succeeds.
wait_for() {
	local what="$1" deadline=$((SECONDS + READY_TIMEOUT)) n
	shift
	until "$@" >/dev/null 2>&1; do
		for n in "${COMPONENTS[@]}"; do
			if [[ -s "$PIDS/$n.pid" ]] && ! running "$n"; then die "$n exited while waiting for $what"; fi
		done
		((SECONDS < deadline)) || die "$what not ready after $READY_TIMEOUT s"
		sleep 0.2
	done
}

start etcd --name aicr-local --data-dir "$STATE_DIR/etcd" \
	--listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
	--advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
	--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
	--initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
	--initial-cluster "aicr-local=http://127.0.0.1:$ETCD_PEER_PORT" \
	--unsafe-no-fsync --log-level warn
etcd_healthy() { [[ "$(curl -sS --max-time 2 "http://127.0.0.1:$ETCD_CLIENT_PORT/health")" == *'"health":"true"'* ]]; }
wait_for etcd etcd_healthy

start kube-apiserver --bind-address 127.0.0.1 --secure-port "$APISERVER_PORT" \
	--etcd-servers "http://127.0.0.1:$ETCD_CLIENT_PORT" \
	--tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
	--client-ca-file "$PKI/ca.crt" \
	--service-account-issuer https://kubernetes.default.svc.cluster.local \
	--service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
	--service-cluster-ip-range 10.96.0.0/16 \
	--authorization-mode Node,RBAC --allow-privileged=true --profiling=false \
	--anonymous-auth=false
apiserver_ready() { [[ "$(api /readyz)" == ok ]]; }
wait_for kube-apiserver apiserver_ready

start kube-controller-manager --kubeconfig "$STATE_DIR/kube-controller-manager.kubeconfig" \
	--bind-address 127.0.0.1 --secure-port "$KCM_PORT" --cert-dir "$STATE_DIR/kcm-certs" \
	--service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
	--use-service-account-credentials=true \
	--cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
	--leader-elect=false --profiling=false
start kube-scheduler --kubeconfig "$STATE_DIR/kube-scheduler.kubeconfig" \
	--bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --cert-dir "$STATE_DIR/scheduler-certs" \
	--leader-elect=false --profiling=false
start kwok --kubeconfig "$STATE_DIR/kwok.kubeconfig" --config "$CLUSTER_SRC/kwok-stages.yaml" \
	--manage-all-nodes=false --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
	--server-address "127.0.0.1:$KWOK_PORT" --cidr 10.244.0.0/16 --node-ip 10.240.0.1

healthz() { [[ "$(curl -sS -k --max-time 2 "$1/healthz")" == ok ]]; }
wait_for kube-controller-manager healthz "https://127.0.0.1:$KCM_PORT"
wait_for kube-scheduler healthz "https://127.0.0.1:$SCHEDULER_PORT"
wait_for kwok healthz "http://127.0.0.1:$KWOK_PORT"
# Pods cannot be created in a namespace before its default ServiceAccount exists.
default_sa() { api /api/v1/namespaces/default/serviceaccounts/default | grep -q '"name": "default"'; }
wait_for "the default ServiceAccount" default_sa

for n in "${COMPONENTS[@]}"; do running "$n" || die "$n is not running"; done
write_env
echo "cluster: up in $((SECONDS - t_start)) s (Kubernetes $K8S_VERSION, etcd $ETCD_VERSION, kwok $KWOK_VERSION, helm $HELM_VERSION)"
echo "cluster: logs in $LOGS, stop with \`make cluster-down\`"
echo "$ADMIN_KUBECONFIG"
