#!/usr/bin/env bash
# Builds, once, the base images `npm run test:container` needs. No image registry can be reached
# here, so they are made from Debian's packages (mmdebstrap) and this machine's own Node:
#   DEBIAN  Debian bookworm, minbase, slimmed as Debian's own bookworm-slim image is (no
#           documentation, manual pages or translations): the Dockerfile's DEBIAN_IMAGE.
#   NODE    DEBIAN plus this machine's Node (binary, npm, headers) laid out as the official
#           node:*-bookworm-slim images lay it out, in /usr/local: the Dockerfile's NODE_IMAGE.
#   PG      DEBIAN plus Debian's postgresql-15, started as the official postgres image starts
#           (scripts/container/postgres-entrypoint.sh): compose.yaml's `db` in the test.
#   CADDY   DEBIAN plus Debian's caddy, run as the official caddy image runs it: compose.yaml's
#           `proxy` in the test.
#
# usage: scripts/container/base-image.sh DEBIAN_TAG NODE_TAG PG_TAG CADDY_TAG
# Progress on stderr; an image that exists already is kept (WSP_CONTAINER_REBUILD_BASE=1 makes
# them all again).
set -euo pipefail
debian_tag=${1:?debian image tag}
node_tag=${2:?node image tag}
pg_tag=${3:?postgres image tag}
caddy_tag=${4:?caddy image tag}
here=$(cd "$(dirname "$0")" && pwd)
podman=(podman --runtime runc)
build=("${podman[@]}" build --network host --ulimit nofile=1024:1024 --ulimit nproc=1000:1000)
suite=bookworm
mirror=${WSP_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${WSP_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

exists() { "${podman[@]}" image exists "$1"; }
if [ "${WSP_CONTAINER_REBUILD_BASE:-}" = 1 ]; then
  "${podman[@]}" image rm -f "$caddy_tag" "$pg_tag" "$node_tag" "$debian_tag" >/dev/null 2>&1 || true
fi
work=$(mktemp -d /tmp/wsp-base.XXXXXX)
trap 'rm -rf "$work"' EXIT

if ! exists "$debian_tag"; then
  command -v mmdebstrap >/dev/null || { echo "mmdebstrap is missing: apt-get install -y mmdebstrap" >&2; exit 1; }
  echo "== building $debian_tag: Debian $suite, minbase, slim" >&2
  # The dpkg options are those Debian's slim images are made with; they stay in the image, so
  # later installs leave out the same files. apt's docker-clean, as in Debian's images: the
  # packages an install downloads are deleted after it. The machine's CA bundle goes in as the image's: this
  # machine reaches the npm registry through a TLS proxy whose CA only it knows (an image built
  # where the registry is reached directly needs none of it).
  slim=()
  for p in /usr/share/doc/'*' /usr/share/groff/'*' /usr/share/info/'*' /usr/share/linda/'*' \
           /usr/share/lintian/overrides/'*' /usr/share/locale/'*' /usr/share/man/'*'; do
    slim+=(--dpkgopt="path-exclude=$p")
  done
  slim+=(--dpkgopt='path-include=/usr/share/doc/*/copyright')
  # Merged /usr as debootstrap (and so Debian's images) make it, by the directory links and the
  # usr-is-merged package: the usrmerge package would pull perl (45 MB) into every image.
  mmdebstrap --variant=minbase --mode=root --format=tar "${slim[@]}" \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --customize-hook='mkdir -p "$1/etc/ssl/certs"' \
    --customize-hook='cp /etc/ssl/certs/ca-certificates.crt "$1/etc/ssl/certs/ca-certificates.crt"' \
    --customize-hook='printf "%s\n" "DPkg::Post-Invoke { \"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true\"; };" "APT::Update::Post-Invoke { \"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true\"; };" "Dir::Cache::pkgcache \"\";" "Dir::Cache::srcpkgcache \"\";" > "$1/etc/apt/apt.conf.d/docker-clean"' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin "$1"/var/log/apt "$1"/var/log/dpkg.log' \
    "$suite" "$work/rootfs.tar" \
    "deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security $suite-security main" >&2
  "${podman[@]}" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' \
    "$work/rootfs.tar" "$debian_tag" >&2
  rm -f "$work/rootfs.tar"
fi

if ! exists "$node_tag"; then
  prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
  [ -x "$prefix/bin/node" ] && [ -d "$prefix/lib/node_modules/npm" ] && [ -d "$prefix/include/node" ] \
    || { echo "this machine's Node is not laid out as <prefix>/{bin/node,lib/node_modules/npm,include/node} under $prefix" >&2; exit 1; }
  echo "== building $node_tag: $debian_tag + Node $("$prefix/bin/node" --version) from $prefix" >&2
  mkdir -p "$work/node/bin" "$work/node/lib/node_modules" "$work/node/include"
  cp -a "$prefix/bin/node" "$work/node/bin/node"
  cp -a "$prefix/lib/node_modules/npm" "$work/node/lib/node_modules/npm"
  cp -a "$prefix/include/node" "$work/node/include/node"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/node/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/node/bin/npx"
  cat > "$work/node/Containerfile" <<CONTAINERFILE
FROM $debian_tag
COPY bin /usr/local/bin
COPY lib /usr/local/lib
COPY include /usr/local/include
# npm reaches the registry through this machine's TLS proxy (see the Debian image above).
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
RUN node --version && npm --version
CMD ["node"]
CONTAINERFILE
  "${build[@]}" -t "$node_tag" "$work/node" >&2
fi

if ! exists "$pg_tag"; then
  echo "== building $pg_tag: $debian_tag + Debian's postgresql-15" >&2
  mkdir -p "$work/pg"
  cp "$here/postgres-entrypoint.sh" "$work/pg/entrypoint.sh"
  cat > "$work/pg/Containerfile" <<CONTAINERFILE
FROM $debian_tag
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/*
COPY entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:\$PATH PGDATA=/var/lib/postgresql/data
VOLUME /var/lib/postgresql/data
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
CMD ["postgres"]
CONTAINERFILE
  "${build[@]}" -t "$pg_tag" "$work/pg" >&2
fi

if ! exists "$caddy_tag"; then
  echo "== building $caddy_tag: $debian_tag + Debian's caddy" >&2
  mkdir -p "$work/caddy"
  cat > "$work/caddy/Containerfile" <<CONTAINERFILE
FROM $debian_tag
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends caddy \
 && rm -rf /var/lib/apt/lists/* && mkdir -p /config /data
ENV XDG_CONFIG_HOME=/config XDG_DATA_HOME=/data
CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]
CONTAINERFILE
  "${build[@]}" -t "$caddy_tag" "$work/caddy" >&2
fi
