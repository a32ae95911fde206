#!/usr/bin/env bash
# Makes the two base images the Dockerfile takes, on a machine that reaches Debian's apt mirror and
# the npm registry but no image registry:
#
#   runtime base  a minimal Debian (debootstrap --variant=minbase from this machine's apt sources),
#                 trimmed of docs, man pages and locales
#   build base    the same plus this machine's Node and npm, and its CA bundle (for npm's TLS)
#
# Prints `BASE_IMAGE=<name>` and `BUILD_IMAGE=<name>`. The names carry a hash of everything that
# goes into them (this script, the Debian suite and mirror, Node, npm, the CA bundle); when both
# images exist already, nothing is rebuilt. Needs root, debootstrap and podman.
#
#   eval "$(deploy/local_base.sh)"
#   podman build --build-arg BASE_IMAGE=$BASE_IMAGE --build-arg BUILD_IMAGE=$BUILD_IMAGE -t rollgate .
#
# Overrides: ROLLGATE_DEBIAN_SUITE (default: this machine's codename), ROLLGATE_DEBIAN_MIRROR
# (default: the first Debian URI of this machine's apt sources).
set -euo pipefail

log() { echo "local_base: $*" >&2; }

suite=${ROLLGATE_DEBIAN_SUITE:-$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")}
suite=${suite:-bookworm}

# The first apt source URI serving $suite (one-line sources.list and deb822 .sources files).
apt_mirror() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v s="$suite" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++;
      if ($(i + 1) == s) { print $i; exit } }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v s="$suite" 'BEGIN { RS = ""; FS = "\n" } {
      uri = ""; ok = 0
      for (j = 1; j <= NF; j++) {
        if ($j ~ /^URIs:/) { split($j, a, /[ \t]+/); uri = a[2] }
        if ($j ~ /^Suites:/) { n = split($j, b, /[ \t]+/); for (k = 2; k <= n; k++) if (b[k] == s) ok = 1 }
      }
      if (ok && uri != "") { print uri; exit }
    }' "$f"
  done
}
mirror=${ROLLGATE_DEBIAN_MIRROR:-$(apt_mirror | head -n 1)}
mirror=${mirror:-http://deb.debian.org/debian}

for tool in debootstrap podman node npm sha256sum; do
  command -v "$tool" >/dev/null || { log "$tool is not installed"; exit 1; }
done
[ "$(id -u)" = 0 ] || { log "debootstrap needs root"; exit 1; }

node_bin=$(command -v node)
npm_dir=$(npm root -g 2>/dev/null)/npm
ca_bundle=/etc/ssl/certs/ca-certificates.crt
key=$( {
  cat "$0"
  echo "$suite $mirror"
  "$node_bin" --version
  cat "$npm_dir/package.json"
  [ -f "$ca_bundle" ] && sha256sum "$ca_bundle"
} | sha256sum | cut -c1-12)
base="localhost/rollgate-base-runtime:$suite-$key"
build="localhost/rollgate-base-build:$suite-$key"

emit() { echo "BASE_IMAGE=$base"; echo "BUILD_IMAGE=$build"; }

# One maker at a time on this machine (parallel test runs share podman's image store).
exec 9>/tmp/rollgate-local-base.lock
flock 9
if podman image exists "$base" && podman image exists "$build"; then
  emit
  exit 0
fi

work=$(mktemp -d /tmp/rollgate-base.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/rootfs
started=$SECONDS
log "debootstrap --variant=minbase $suite from $mirror"
if ! debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1; then
  tail -n 20 "$work/debootstrap.log" >&2
  exit 1
fi
# What a slim image leaves out: package caches and lists, docs, man pages, locales.
rm -rf "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* \
  "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/var/log/*
find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
tar -C "$root" -c . | podman import --quiet - "$base" >/dev/null

install -m 0755 "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
changes=()
if [ -f "$ca_bundle" ]; then
  mkdir -p "$root/etc/ssl/certs"
  cp "$ca_bundle" "$root/etc/ssl/certs/ca-certificates.crt"
  changes=(--change "ENV=NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt")
fi
tar -C "$root" -c . | podman import --quiet "${changes[@]}" - "$build" >/dev/null
log "made $base and $build in $((SECONDS - started)) s"
emit
