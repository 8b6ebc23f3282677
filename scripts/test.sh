#!/usr/bin/env bash
# Lint, type-check and run the test suite (arguments go to pytest, e.g. tests/integration).
set -euo pipefail
cd "$(dirname "$0")/.."
checkout=$(pwd -P)

# Inside a jail /tmp is a private tmpfs, and the tests run this checkout's interpreter and
# helper files inside jails: a checkout below /tmp is tested from a copy in a visible place.
case "$checkout/" in
    /tmp/*)
        visible=$(mktemp -d /var/tmp/stockade-tests-XXXXXX)
        trap 'rm -rf "$visible"' EXIT
        echo "test: $checkout is below /tmp (private inside jails); testing a copy in $visible" >&2
        tar -C "$checkout" --exclude=./.venv -cf - . | tar -C "$visible" -xf -
        "$visible/scripts/setup.sh"
        "$visible/scripts/test.sh" "$@"
        exit
        ;;
esac

.venv/bin/ruff check src tests benchmarks examples
.venv/bin/ruff format --check src tests benchmarks examples
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
