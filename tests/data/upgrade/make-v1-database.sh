#!/usr/bin/env bash
# Writes tests/data/upgrade/v1.db: the database of the first release (schema 2, unversioned run
# state) with two runs stopped while awaiting approval, for the upgrade test
# (tests/integration/upgrade_test.cpp). Run it with a build of that release:
#   git worktree add /tmp/v1 22e4e8a && cmake -S /tmp/v1 -B /tmp/v1/build -G Ninja &&
#   cmake --build /tmp/v1/build --target contextgate contextgate-fake-upstream &&
#   tests/data/upgrade/make-v1-database.sh /tmp/v1/build
# What it holds (the test relies on these):
#   chat "typo"     a chat run fixing `teh` in README.md, awaiting approval of replace_in_file
#   chat "header"   a run of the add_file_header workflow on src/app.py, awaiting approval of
#                   its edit_lines step
# The chats' workspace is the temporary folder of the run below; the test points it elsewhere.
set -euo pipefail
build="$(cd "$1" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/ws/src"
printf '# Demo\n\nThis is teh readme.\n' > "$work/ws/README.md"
printf 'def main():\n    print("hi")\n' > "$work/ws/src/app.py"
call() { printf '{"tool":"%s","parameters":%s,"terminate":false}' "$1" "$2"; }
python3 - "$work/script.json" <<PY
import json, sys
json.dump([
    '$(call search_files '{"pattern":"teh"}')',
    '$(call read_file '{"path":"README.md"}')',
    '$(call replace_in_file '{"path":"README.md","find":"teh","replace":"the"}')',
    "# Prints a greeting.",
], open(sys.argv[1], "w"))
PY
"$build/tests/contextgate-fake-upstream" --port 0 --script "$work/script.json" > "$work/fake.log" &
until grep -q "listening on" "$work/fake.log"; do sleep 0.1; done
fake_port=$(grep -o 'listening on [0-9]*' "$work/fake.log" | grep -o '[0-9]*$')
cat > "$work/gateway.yaml" <<YAML
server:
  listen: 127.0.0.1:0
upstreams:
  - name: fake
    base_url: http://127.0.0.1:$fake_port/v1
context:
  data_dir: $work/data
  workspaces: ["$work/ws"]
  prompts_dir: $root/prompts
  workflows_dir: $root/workflows
YAML
"$build/contextgate" serve --config "$work/gateway.yaml" 2> "$work/gateway.log" &
gateway=$!
until grep -q "listening on" "$work/gateway.log"; do sleep 0.1; done
port=$(grep -o '127.0.0.1:[0-9]*' "$work/gateway.log" | head -1 | cut -d: -f2)
api() { curl -sf "http://127.0.0.1:$port$2" -X "$1" -d "${3:-}"; }
field() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }
awaiting() {
  for _ in $(seq 100); do
    [ "$(api GET "/context/runs/$1" | field "['status']")" = awaiting_approval ] && return
    sleep 0.1
  done
  echo "run $1 never awaited approval" >&2; exit 1
}
typo=$(api POST /context/chats "{\"model\":\"m\",\"workspace\":\"$work/ws\"}" | field "['id']")
run=$(api POST "/context/chats/$typo/messages" '{"content":"fix the typo teh in README.md"}' | field "['run_id']")
awaiting "$run"
header=$(api POST /context/chats "{\"model\":\"m\",\"workspace\":\"$work/ws\"}" | field "['id']")
flow=$(api POST /context/workflows/add_file_header/runs \
  "{\"chat_id\":\"$header\",\"parameters\":{\"path\":\"src/app.py\"}}" | field "['run_id']")
awaiting "$flow"
kill "$gateway"
wait "$gateway" || true
# One self-contained file: the WAL folded in, the workspace path written as a placeholder.
python3 - "$work/data/contextgate.db" "$here/v1.db" "$work/ws" "$typo" "$header" <<'PY'
import os, sqlite3, sys
source, target, ws, typo, header = sys.argv[1:]
db = sqlite3.connect(source)
db.execute("UPDATE chats SET workspace = '@WORKSPACE@' WHERE workspace = ?", (ws,))
db.commit()
db.execute("PRAGMA foreign_keys=ON")
if os.path.exists(target): os.remove(target)
db.execute("VACUUM INTO ?", (target,))
PY
echo "wrote $here/v1.db (chats $typo, $header)"
