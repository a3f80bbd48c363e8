#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback for the tests (Debian's postgresql package):
#   postgres.sh start DIR   initdb into a new /tmp/contextgate-pg-* folder, start it on a free
#                           127.0.0.1 port, write the URL to DIR/url
#                           (postgres://contextgate@127.0.0.1:PORT/contextgate)
#   postgres.sh stop DIR    stop it and remove both folders
# As root, the cluster runs as the `postgres` user (initdb refuses root).
set -euo pipefail

command=${1:?start or stop}
dir=${2:?a folder}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "postgres.sh: no PostgreSQL server (apt-get install postgresql)" >&2; exit 1; }

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$command" in
  start)
    "$0" stop "$dir"
    mkdir -p "$dir"
    # The cluster lives under /tmp: the `postgres` user may not be able to reach DIR (a checkout
    # under /root, say). DIR/cluster names it.
    cluster=$(mktemp -d /tmp/contextgate-pg-XXXXXX)
    echo "$cluster" >"$dir/cluster"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$cluster"
    as_owner "$bin/initdb" -D "$cluster/data" -U contextgate --auth=trust -E UTF8 --locale=C.UTF-8 \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    # Tuned for throwaway tests: no fsync, small shared memory, sockets in the cluster's folder.
    as_owner "$bin/pg_ctl" -D "$cluster/data" -l "$cluster/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $port -k $cluster -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=32MB" \
      start >/dev/null || { cat "$cluster/server.log" >&2; exit 1; }
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U contextgate contextgate
    echo "postgres://contextgate@127.0.0.1:$port/contextgate" >"$dir/url"
    cat "$dir/url"
    ;;
  stop)
    if [ -f "$dir/cluster" ]; then
      cluster=$(cat "$dir/cluster")
      if [ -d "$cluster/data" ]; then
        as_owner "$bin/pg_ctl" -D "$cluster/data" -m immediate -w stop >/dev/null 2>&1 || true
      fi
      case "$cluster" in /tmp/contextgate-pg-*) rm -rf "$cluster" ;; esac
    fi
    rm -rf "$dir"
    ;;
  *) echo "postgres.sh: start or stop" >&2; exit 2 ;;
esac
