#!/usr/bin/env bash
# Prove the sandbox on this machine, then show it: a write inside a project succeeds, a write
# to $HOME is denied (and stockade says why, after the shell's own message), a secret is
# masked and the network is off.
set -euo pipefail
cd "$(dirname "$0")/.."
stockade=$PWD/.venv/bin/stockade
"$stockade" doctor
project=$(mktemp -d "${TMPDIR:-/tmp}/stockade-demo-XXXXXX")
trap 'rm -rf "$project"' EXIT
cd "$project"
echo
echo "\$ stockade run -- sh -c '...'   (in a fresh project: $project)"
"$stockade" run -- sh -c '
    echo "inside the project:" && echo hello > notes.txt && echo "  wrote notes.txt: ok"
    echo "network:" && { getent hosts example.com || echo "  no network (denied)"; }
    echo "outside, in \$HOME:" && { echo x > "$HOME/stockade-demo.txt" && echo "  WROTE (unexpected)"; }
    true
'
test ! -e "$HOME/stockade-demo.txt" && echo "host check: \$HOME/stockade-demo.txt does not exist"
test -f "$project/notes.txt" && echo "host check: $project/notes.txt exists"
