#!/usr/bin/env bash
# Starts or stops a throwaway Temporal development server (the temporal
# CLI, built from its Go module into a cache outside the repository) for
# the tests of agent/temporal, listening on 127.0.0.1 only, its state
# in memory.
#
#   eval "$(bash .ci/temporal.sh start DIR)"   # prints TEMPORAL_ADDRESS=...
#   bash .ci/temporal.sh stop DIR
set -euo pipefail

cmd=${1:?usage: temporal.sh start|stop DIR}
dir=${2:?usage: temporal.sh start|stop DIR}

# The newest CLI whose module builds with go install (later ones carry
# replace directives).
cli_version=v1.5.1
cache=${HARNESS_CI_CACHE:-$HOME/.cache/harness-ci}
bin=$cache/bin/temporal-$cli_version

free_port() {
	local p
	for p in $(seq "$1" "$2"); do
		if ! (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

case "$cmd" in
start)
	if [ ! -x "$bin" ]; then
		echo "building the temporal CLI $cli_version (a few minutes, once)" >&2
		tmp=$(mktemp -d)
		GOBIN=$tmp GOFLAGS="-mod=mod -buildvcs=false" go install "github.com/temporalio/cli/cmd/temporal@$cli_version" >&2
		mkdir -p "$cache/bin"
		mv "$tmp/temporal" "$bin"
		rm -rf "$tmp"
	fi
	mkdir -p "$dir"
	# The dev server's other services listen just above the frontend's
	# port, so a frontend port is taken only with the next few free too.
	port=
	for p in $(seq 57233 10 57333); do
		if [ "$(free_port "$p" $((p + 5)))" = "$p" ] && ! (echo >"/dev/tcp/127.0.0.1/$((p + 1))") 2>/dev/null &&
			! (echo >"/dev/tcp/127.0.0.1/$((p + 2))") 2>/dev/null && ! (echo >"/dev/tcp/127.0.0.1/$((p + 3))") 2>/dev/null; then
			port=$p
			break
		fi
	done
	[ -n "$port" ] || { echo "temporal.sh: no free ports in 57233-57338" >&2; exit 1; }
	http=$(free_port $((port + 1000)) $((port + 1100))) || { echo "temporal.sh: no free HTTP port" >&2; exit 1; }
	metrics=$(free_port $((port + 2000)) $((port + 2100))) || { echo "temporal.sh: no free metrics port" >&2; exit 1; }
	setsid "$bin" server start-dev --ip 127.0.0.1 --headless --port "$port" \
		--http-port "$http" --metrics-port "$metrics" --log-level warn \
		--dynamic-config-value matching.numTaskqueueReadPartitions=1 \
		--dynamic-config-value matching.numTaskqueueWritePartitions=1 >"$dir/server.log" 2>&1 &
	echo $! >"$dir/pid"
	ok=
	for _ in $(seq 1 600); do
		if "$bin" operator cluster health --address "127.0.0.1:$port" >/dev/null 2>&1; then
			ok=1
			break
		fi
		if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	[ -n "$ok" ] || { cat "$dir/server.log" >&2; echo "temporal.sh: the dev server did not come up" >&2; exit 1; }
	echo "TEMPORAL_ADDRESS=127.0.0.1:$port"
	;;
stop)
	if [ -f "$dir/pid" ]; then
		kill "$(cat "$dir/pid")" 2>/dev/null || true
		for _ in $(seq 1 100); do
			kill -0 "$(cat "$dir/pid")" 2>/dev/null || break
			sleep 0.1
		done
		rm -f "$dir/pid"
	fi
	;;
*)
	echo "usage: temporal.sh start|stop DIR" >&2
	exit 2
	;;
esac
