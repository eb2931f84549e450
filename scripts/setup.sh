#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: install what is missing, build,
# and run the demo.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/deps.sh"
"$root/scripts/build.sh"
"$root/scripts/demo.sh"
