#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback for the tests (Debian's postgresql package):
#   postgres.sh start DIR   initdb into DIR, start on a free 127.0.0.1 port, write the URL to
#                           DIR/url (postgres://contextgate@127.0.0.1:PORT/contextgate)
#   postgres.sh stop DIR    stop it and remove DIR
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
    rm -rf "$dir"
    mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
    as_owner "$bin/initdb" -D "$dir/data" -U contextgate --auth=trust -E UTF8 --locale=C.UTF-8 \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    # Tuned for throwaway tests: no fsync, small shared memory, sockets in the folder.
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=32MB" \
      start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U contextgate contextgate
    echo "postgres://contextgate@127.0.0.1:$port/contextgate" >"$dir/url"
    cat "$dir/url"
    ;;
  stop)
    if [ -d "$dir/data" ]; then
      as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  *) echo "postgres.sh: start or stop" >&2; exit 2 ;;
esac
