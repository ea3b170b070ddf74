# orbweaver relay. Node 20: the uWebSockets.js binaries exist for Node 16/18/20 only.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# g++/make/python3 build bcrypto's native secp256k1 (the fast signature path)
RUN apt-get update && apt-get install -y --no-install-recommends g++ make python3 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json ./
COPY src ./src
COPY test ./test
COPY bench ./bench
RUN npm ci && npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production \
    ORBWEAVER_HOST=0.0.0.0 \
    ORBWEAVER_PORT=7447 \
    ORBWEAVER_DATA_DIR=/data
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json relay.config.json ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 7447
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.ORBWEAVER_PORT||7447)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "dist/src/cli.js"]
CMD ["relay"]
