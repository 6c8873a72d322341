#!/usr/bin/env bash
# `make cluster-down`: stops exactly the processes `make cluster-up` started, found through
# .cluster/pids/<name>.pid. A pid is signalled only while it still runs one of our cached
# binaries (so a reused pid of some other process is never touched); each gets SIGTERM, then
# SIGKILL after 15 s, and is waited for. The pid files are removed; certificates, logs and the
# etcd data stay until the next `make cluster-up`.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PIDS="$STATE_DIR/pids"
[[ -d "$PIDS" ]] || exit 0

ours() { # ours <pid> <name>: the pid runs the cached binary of that name
	local exe
	exe="$(readlink "/proc/$1/exe" 2>/dev/null)" || return 1
	[[ "$exe" == */aicr-tui/k8s/*/bin/"$2" || "$exe" == "$BIN_DIR/$2" ]]
}

# Reverse start order: kwok and the controllers first, etcd last.
stopped=0
for n in kwok kube-scheduler kube-controller-manager kube-apiserver etcd; do
	f="$PIDS/$n.pid"
	[[ -f "$f" ]] || continue
	pid="$(cat "$f")"
	if [[ "$pid" =~ ^[0-9]+$ ]] && ours "$pid" "$n"; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 150); do
			ours "$pid" "$n" || break
			sleep 0.1
		done
		if ours "$pid" "$n"; then
			echo "cluster: $n (pid $pid) ignored SIGTERM for 15 s; sending SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null || true
			for _ in $(seq 50); do
				ours "$pid" "$n" || break
				sleep 0.1
			done
		fi
		if ours "$pid" "$n"; then
			echo "cluster: FAILED: $n (pid $pid) is still running" >&2
			exit 1
		fi
		stopped=$((stopped + 1))
	fi
	rm -f "$f"
done
echo "cluster: stopped $stopped process(es)"
