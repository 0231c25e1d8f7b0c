#!/usr/bin/env bash
# Runs the test suite (and, with --soak, the soak test) on other Node.js major versions,
# so that the range in package.json `engines` is tested, not claimed.
#
#   scripts/node-matrix.sh [--soak] [major ...]      (default majors: 22 24)
#
# Each Node.js binary comes from the npm registry as a package, through npm itself: the
# platform package `node-<platform>-<arch>` (what the `node` package installs), so no
# other download and no install script is involved. Binaries are kept under
# $NODE_MATRIX_DIR (default: $TMPDIR/voot-guard-node-matrix) and reused when present.
# The project's node_modules (from `npm ci` on the default Node) is used as it is:
# everything in it is plain JavaScript.
set -euo pipefail
cd "$(dirname "$0")/.."

soak=0
majors=()
for arg in "$@"; do
  case "$arg" in
    --soak) soak=1 ;;
    [0-9]*) majors+=("$arg") ;;
    *) echo "usage: $0 [--soak] [major ...]" >&2; exit 2 ;;
  esac
done
[ ${#majors[@]} -gt 0 ] || majors=(22 24)

for major in "${majors[@]}"; do
  node_bin="$(bash scripts/node-binary.sh "$major")"
  bin="$(dirname "$node_bin")"
  version="$("$node_bin" --version)"
  echo "== Node.js $version: test suite"
  # On PATH first, so that anything spawned (vitest's forks, `#!/usr/bin/env node`) runs the same version.
  # test/runtimes is about the other runtimes, not Node's versions: it runs once, in npm test.
  PATH="$bin:$PATH" "$bin/node" node_modules/vitest/vitest.mjs run --exclude 'test/runtimes/**'
  if [ "$soak" = 1 ]; then
    echo "== Node.js $version: soak test"
    PATH="$bin:$PATH" "$bin/node" --expose-gc --import tsx test/soak/soak.ts
  fi
done
