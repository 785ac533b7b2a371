#!/usr/bin/env bash
# Starts or stops a throwaway S3-compatible server (MinIO, built from its
# Go module into a cache outside the repository) for the tests of the S3
# stores, listening on 127.0.0.1 only.
#
#   eval "$(bash .ci/s3.sh start DIR)"   # prints the HARNESS_S3_* settings
#   bash .ci/s3.sh stop DIR
set -euo pipefail

cmd=${1:?usage: s3.sh start|stop DIR}
dir=${2:?usage: s3.sh start|stop DIR}

# The newest MinIO server the Go module proxy serves (it has no tagged
# module versions).
minio_version=v0.0.0-20260212201848-7aac2a2c5b7c
cache=${HARNESS_CI_CACHE:-$HOME/.cache/harness-ci}
bin=$cache/bin/minio-$minio_version

case "$cmd" in
start)
	if [ ! -x "$bin" ]; then
		echo "building the MinIO server $minio_version (a few minutes, once)" >&2
		tmp=$(mktemp -d)
		GOBIN=$tmp GOFLAGS=-buildvcs=false go install "github.com/minio/minio@$minio_version" >&2
		mkdir -p "$cache/bin"
		mv "$tmp/minio" "$bin"
		rm -rf "$tmp"
	fi
	mkdir -p "$dir/data"
	port=
	for p in $(seq 59000 59100); do
		if ! (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null && ! (echo >"/dev/tcp/127.0.0.1/$((p + 1000))") 2>/dev/null; then
			port=$p
			break
		fi
	done
	[ -n "$port" ] || { echo "s3.sh: no free port in 59000-59100" >&2; exit 1; }
	user=harness-test
	pass=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	MINIO_ROOT_USER=$user MINIO_ROOT_PASSWORD=$pass MINIO_UPDATE=off MINIO_BROWSER=off \
		setsid "$bin" server "$dir/data" --quiet --address "127.0.0.1:$port" \
		--console-address "127.0.0.1:$((port + 1000))" >"$dir/server.log" 2>&1 &
	echo $! >"$dir/pid"
	for _ in $(seq 1 300); do
		if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	(echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { cat "$dir/server.log" >&2; exit 1; }
	echo "HARNESS_S3_ENDPOINT=127.0.0.1:$port"
	echo "HARNESS_S3_ACCESS_KEY=$user"
	echo "HARNESS_S3_SECRET_KEY=$pass"
	;;
stop)
	if [ -f "$dir/pid" ]; then
		kill "$(cat "$dir/pid")" 2>/dev/null || true
		rm -f "$dir/pid"
	fi
	;;
*)
	echo "usage: s3.sh start|stop DIR" >&2
	exit 2
	;;
esac
