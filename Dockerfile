# Workspace Platform: the server, its job worker and the operator commands in one image.
#
#   docker build -t workspace-platform .          (or: podman build --format docker ...)
#   docker run -d -p 127.0.0.1:8080:8080 -v wsp-data:/data --stop-timeout 40 workspace-platform
#   docker run ... workspace-platform wsp worker       docker run ... workspace-platform wsp admin --help
#
# Three stages: `build` (every dependency, the compiler toolchain, `npm run build`), `deps` (the
# production dependencies, `npm ci --omit=dev`, of which only those the bundle loads from outside
# itself are kept), and the runtime: Debian slim with Node's binary, git and tini, the bundle, the
# console and those dependencies; no npm, no compiler, no sources. Under 250 MB. docs/operations.md
# is the operator's guide; docs/decisions.md ("Shipping it") says why it is made so.

# The Node base: the official image, or any image laid out as it is (Node in /usr/local). The
# runtime takes only its `node` binary, onto DEBIAN_IMAGE, which must be the Debian release the
# Node base is built on (its C++ runtime is the binary's).
ARG NODE_IMAGE=node:20-bookworm-slim
ARG DEBIAN_IMAGE=debian:bookworm-slim

FROM ${NODE_IMAGE} AS build
# better-sqlite3 compiles SQLite where its prebuilt binary cannot be downloaded: python3, make
# and a C++ compiler, against the headers of this very Node (node-gyp would download them).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Dependencies first, in a layer of their own that a change of the sources does not invalidate.
# Their install scripts are run apart: the package's own `prepare` (the build) needs the sources.
COPY package.json package-lock.json ./
COPY packages/sdk/package.json packages/sdk/
RUN npm ci --ignore-scripts --no-audit --no-fund
RUN if [ -d /usr/local/include/node ]; then export npm_config_nodedir=/usr/local; fi \
 && npm rebuild better-sqlite3 esbuild
COPY . .
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sdk/package.json packages/sdk/
COPY scripts/bundle-externals.mjs scripts/
COPY scripts/container/runtime-modules.mjs scripts/container/
# Production dependencies only, without install scripts: the one native module that has one
# (better-sqlite3) takes the binary the build stage compiled, from the same lock file. Then only
# the packages the bundle leaves outside itself stay, with their dependencies (SQLite's sources
# are not needed to run).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && node scripts/container/runtime-modules.mjs \
 && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
 && npm cache clean --force
COPY --from=build /src/node_modules/better-sqlite3/build/Release/better_sqlite3.node node_modules/better-sqlite3/build/Release/better_sqlite3.node

FROM ${DEBIAN_IMAGE} AS runtime
ARG VERSION=1.0.0
ARG REVISION=unknown
ARG CREATED=unknown
ARG SOURCE=unknown
LABEL org.opencontainers.image.title="Workspace Platform" \
      org.opencontainers.image.description="Workspaces, dashboards, secrets, installs, compute and notifications: the HTTP API, its web console, job worker and operator commands" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.documentation="docs/operations.md"
# git: installs' repositories are git's (commits, gc, fsck, clones). tini: PID 1, which passes
# SIGTERM on to wsp (so it drains) and reaps every exited child, git's included. Debian's git
# depends on perl for commands the platform never runs (send-email, svn, cvs, archimport): perl's
# modules and library (50 MB) are left out as the slim image leaves out manual pages, by a dpkg path-exclude,
# for this install only; `apt-get install --reinstall perl-modules-5.36 libperl5.36` restores them.
RUN printf '%s\n' 'path-exclude=/usr/share/perl/*' 'path-exclude=/usr/lib/*/perl/*' 'path-exclude=/usr/lib/*/libperl.so*' > /etc/dpkg/dpkg.cfg.d/wsp-no-perl-modules \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends git tini \
 && rm /etc/dpkg/dpkg.cfg.d/wsp-no-perl-modules \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log \
 && groupadd --system --gid 10001 wsp \
 && useradd --system --uid 10001 --gid wsp --home-dir /home/wsp --create-home --shell /usr/sbin/nologin wsp \
 && mkdir -p /data /repos \
 && chown wsp:wsp /data /repos \
 && chmod 700 /data /repos
COPY --from=build /usr/local/bin/node /usr/local/bin/node
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/package.json /src/LICENSE /src/NOTICE ./
COPY --from=build /src/bin ./bin
COPY --from=build /src/dist/wsp.cjs /src/dist/render-thread.mjs ./dist/
COPY --from=build /src/dist/console ./dist/console
# `wsp` on the PATH; the server may keep its compiled bytecode (dist/compile-cache) in the
# container's own layer, which only the wsp user can write.
RUN ln -s /app/bin/wsp.js /usr/local/bin/wsp \
 && mkdir dist/compile-cache && chown wsp:wsp dist/compile-cache

# /data: everything of a single container (the SQLite database, master.key, the repositories in
# /data/repos), empty in the image so that `wsp admin restore --data-dir /data` takes a new
# volume. /repos: where several containers mount one shared repository volume (compose.yaml sets
# WSP_REPO_DIR=/repos); a new volume mounted there takes this directory's owner.
USER wsp
ENV NODE_ENV=production \
    WSP_DATA_DIR=/data \
    PORT=8080 \
    HOST=0.0.0.0
VOLUME ["/data"]
EXPOSE 8080
# Ready: the database answers and the repository volume is mounted and writable (GET /readyz).
# No curl in a slim image: Node's fetch, whose own start takes seconds on a machine short of CPU
# (measured: over 5 s at a load of 20 on 2 cores), hence the 10 s. (Podman keeps a HEALTHCHECK
# with --format docker.)
HEALTHCHECK --interval=15s --timeout=10s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["wsp", "serve"]
