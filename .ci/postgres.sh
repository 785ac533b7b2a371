#!/usr/bin/env bash
# Starts or stops a throwaway PostgreSQL cluster for the tests of
# session/postgres, listening on 127.0.0.1 only.
#
#   eval "$(bash .ci/postgres.sh start DIR)"   # prints HARNESS_POSTGRES_URL=...
#   bash .ci/postgres.sh stop DIR
#
# DIR is a new or empty directory for the cluster (its data, socket and
# log). The server is Debian's postgresql package; run as root, the
# script installs it when it is missing and runs the server as the
# postgres user, since PostgreSQL refuses to run as root.
set -euo pipefail

cmd=${1:?usage: postgres.sh start|stop DIR}
dir=${2:?usage: postgres.sh start|stop DIR}

bindir() {
	local d
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
	if [ -z "$d" ] && [ "$(id -u)" = 0 ]; then
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) >&2
		d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
	fi
	if [ -z "$d" ]; then
		echo "postgres.sh: PostgreSQL is not installed (apt-get install postgresql)" >&2
		exit 1
	fi
	echo "$d"
}

# as runs a command as the cluster's owner.
as() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

case "$cmd" in
start)
	bin=$(bindir)
	mkdir -p "$dir"
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$dir"
	fi
	as "$bin/initdb" -D "$dir/data" -U harness --auth=trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; exit 1; }
	port=
	for p in $(seq 55432 55532); do
		if ! (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			port=$p
			break
		fi
	done
	[ -n "$port" ] || { echo "postgres.sh: no free port in 55432-55532" >&2; exit 1; }
	as "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-h 127.0.0.1 -p $port -k $dir -c max_connections=200" start >&2 ||
		{ cat "$dir/server.log" >&2; exit 1; }
	as "$bin/createdb" -h 127.0.0.1 -p "$port" -U harness harness >&2
	echo "HARNESS_POSTGRES_URL=postgres://harness@127.0.0.1:$port/harness?sslmode=disable"
	;;
stop)
	bin=$(bindir)
	if [ -f "$dir/data/postmaster.pid" ]; then
		as "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true
	fi
	;;
*)
	echo "usage: postgres.sh start|stop DIR" >&2
	exit 2
	;;
esac
