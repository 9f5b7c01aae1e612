#!/usr/bin/env bash
# Installs kschedctl and this example into a brand-new, isolated virtualenv (dependencies come
# from the package index), then runs the example there: `kschedctl plugins` must list StickyNode
# from its entry point, the demo scenario must pass without --plugin-module, and the example's
# own tests must pass. Usage: examples/sticky-node/check_fresh_venv.sh [VENV_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
venv="${1:-$(mktemp -d)/venv}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# build from copies so that nothing (build/, *.egg-info) is left in the work tree
mkdir "$work/kschedctl"
cp -r "$repo/pyproject.toml" "$repo/README.md" "$repo/kschedctl" "$work/kschedctl/"
cp -r "$here" "$work/sticky-node"

python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$work/kschedctl"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$work/sticky-node[test]"

"$venv/bin/kschedctl" plugins | grep -E "StickyNode +│ entry point kschedctl-sticky-node"
"$venv/bin/kschedctl" check "$work/sticky-node/demo"
(cd "$work/sticky-node" && "$venv/bin/python" -m pytest -q -p no:cacheprovider tests)
echo "fresh virtualenv $venv: the example plugin installs and runs"
