#!/usr/bin/env bash
# Lint, type-check and run the test suite (arguments go to pytest, e.g. tests/integration).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check src tests benchmarks
.venv/bin/ruff format --check src tests benchmarks
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
