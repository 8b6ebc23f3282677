#!/usr/bin/env bash
# Set up everything stockade needs on Debian/Ubuntu: bubblewrap and a Python (>= 3.11) venv
# in .venv with stockade and its test tools installed. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

need_packages=()
command -v bwrap >/dev/null 2>&1 || need_packages+=(bubblewrap)
python=${PYTHON:-python3}
if ! "$python" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
    echo "setup: $python is missing or older than 3.11; installing python3" >&2
    need_packages+=(python3)
fi
"$python" -c 'import venv, ensurepip' 2>/dev/null || need_packages+=(python3-venv)
[ -e /usr/lib/x86_64-linux-gnu/libseccomp.so.2 ] || [ -e /usr/lib/aarch64-linux-gnu/libseccomp.so.2 ] \
    || ldconfig -p 2>/dev/null | grep -q 'libseccomp.so.2' || need_packages+=(libseccomp2)

if [ ${#need_packages[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "setup: installing ${need_packages[*]}" >&2
    $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
        "${need_packages[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
    rm -rf .venv
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[test]'
echo "setup: ready ($(.venv/bin/stockade --version))" >&2
