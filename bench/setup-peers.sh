#!/bin/sh
# bench/setup-peers.sh - installs the PyTorch peers bench/compare.sh runs
# against (as root, after ./setup.sh): Debian's python3-torch (1.13) for
# /usr/bin/python3, and the current PyTorch release from PyPI in a virtual
# environment, bench/.venv (a large download: PyPI's Linux wheel brings its
# CUDA libraries along, though only the CPU is used here).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends python3-torch python3-venv >/dev/null
if [ "${1:-}" != "--debian-only" ]; then
    [ -x "$here/.venv/bin/python" ] || /usr/bin/python3 -m venv "$here/.venv"
    "$here/.venv/bin/pip" install -q --upgrade torch numpy
    # bench/tabnet.sh's peer: the TabNet implementation seed 001 timed
    "$here/.venv/bin/pip" install -q pytorch-tabnet==4.1.0
fi
