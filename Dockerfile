# orbweaver relay on Node 24 (LTS) and Debian 13: the uWebSockets.js build with binaries for Node
# 22 and 24 (@btc-vision/uwebsockets.js) needs glibc 2.38 (Debian 13 has 2.41; Debian 12 has 2.36).
# Configuration: the image's /app/relay.config.json (docker/relay.config.json: host 0.0.0.0, port
# 7447, dataDir /data) — mount your own over it, or set ORBWEAVER_* variables (-e). Nothing is set
# in ENV, so a mounted file is never overridden. Data: the /data volume, owned by the `node` user
# (uid 1000) and private to it (0700: a named volume takes the mode of the image's /data; the relay
# creates its files 0600); a bind mount must be writable by uid 1000 (docs/production.md, "Docker").
# Checked without a Docker engine by test/runtimes/docker-steps.sh (these steps in a Debian 13 root).
FROM node:24-trixie-slim AS build
WORKDIR /app
# g++/make/python3 build the native signature checks: native/schnorr over Debian's libsecp256k1
# (libsecp256k1-dev; the fastest path) and bcrypto's bundled secp256k1
RUN apt-get update && apt-get install -y --no-install-recommends g++ make python3 libsecp256k1-dev && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json ./
COPY native ./native
COPY src ./src
# npm ci builds the native modules and, through the `prepare` script, compiles src/ once (test/
# and bench/ are not in the build context: .dockerignore); then the dev dependencies go
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

FROM node:24-trixie-slim
WORKDIR /app
ENV NODE_ENV=production
# the shared library native/schnorr's addon links to (libsecp256k1-dev's runtime half on Debian 13)
RUN apt-get update && apt-get install -y --no-install-recommends libsecp256k1-2 && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/native ./native
COPY --from=build /app/dist/src ./dist/src
COPY package.json ./
COPY docker/relay.config.json ./relay.config.json
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
USER node
VOLUME ["/data"]
EXPOSE 7447
# asks the relay at the address it recorded in its data directory, so a port set in the mounted
# config, a variable or a flag is followed (src/app/healthcheck.ts)
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s CMD ["node", "dist/src/app/healthcheck.js"]
# V8 collects on the main thread of each isolate only (docs/operating.md "Garbage collection")
ENTRYPOINT ["node", "--single-threaded-gc", "dist/src/cli.js"]
CMD ["relay"]
