# syntax=docker/dockerfile:1
# Multi-stage build: compile with dev dependencies, ship production dependencies only, run as non-root under tini.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# tsconfig.build.json includes src and bench, but only dist/src ships and an absent bench/ compiles to nothing:
# leaving it out keeps bench edits from invalidating this layer (test/ops/docker-image.test.ts builds this way).
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# the status page: web/tsconfig.json is a project tsconfig.build.json references, compiled into dist/web
COPY web ./web
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
# Debian's tini package installs /usr/bin/tini.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
# Env overrides config files (defaults < config/default.json < --config < env < flags), so these win in the image.
# Binding 0.0.0.0 is needed to publish the port: publish on 127.0.0.1 or set server.token (PM_SERVER_TOKEN).
# `docker stop` sends SIGTERM and SIGKILLs after 10 s; the daemon exits at most drain + 1 s after SIGTERM, so the
# drain is 8 s here. To drain longer, raise both: -e PM_SHUTDOWN_DRAIN_TIMEOUT_MS=20000 --stop-timeout 25.
ENV NODE_ENV=production \
    PM_STATE_DIR=/var/lib/pragma-monitor \
    PM_SERVER_HOST=0.0.0.0 \
    PM_SHUTDOWN_DRAIN_TIMEOUT_MS=8000
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
# the status page at /: its compiled modules and its HTML, CSS and icon, read once at start
COPY --from=build /app/dist/web ./dist/web
COPY web/static ./web/static
COPY package.json ./
COPY config ./config
RUN mkdir -p /var/lib/pragma-monitor && chown node:node /var/lib/pragma-monitor
USER node
VOLUME ["/var/lib/pragma-monitor"]
EXPOSE 8787
# /healthz is "process alive"; the port follows PM_SERVER_PORT when it is overridden.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PM_SERVER_PORT || 8787}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# tini is PID 1: it forwards SIGTERM/SIGHUP to node and reaps zombies (the short-lived children node spawns).
# --heap-growing-percent=25 keeps V8's old space near the live heap (see systemd/pragma-monitor.service):
# a growth factor, not a cap, so it cannot end the daemon with an out-of-memory error. `run` applies it itself too
# (src/heap-settings.ts), with the young generation held at 8 MB.
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--heap-growing-percent=25", "dist/src/main.js"]
CMD ["run"]
