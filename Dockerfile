# paysync image: the CLI, the worker and the simulator (one image, different commands).
#   docker build -t paysync .
#   docker run --rm paysync migrate            # any paysync command; no command: `worker`
# Node 24 LTS (paysync also runs on Node 20.12+; .ci/run tests both).
FROM node:24-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY jobs ./jobs
COPY bench ./bench
COPY sql ./sql
COPY docker ./docker
# npm ci runs `prepare` (tsc → dist/); prune then drops the compiler and the test tools.
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund
# Packs are written here (a volume in docker-compose.yml); the image's own user owns it.
RUN mkdir -p /exports && chown node:node /exports
ENV NODE_ENV=production EXPORT_DIR=/exports
# node:*-slim ships the unprivileged user `node` (uid 1000): paysync needs no root.
USER node
# /healthz, the readiness probe, answers 200 when Redis and PostgreSQL answer, the migrations are applied
# and the worker takes jobs; it needs METRICS_PORT (the worker's metrics server). A one-shot command (migrate, backfill) shows "unhealthy" once the start
# period is over if it runs that long; nothing acts on the health of a `docker compose run` container.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "docker/healthcheck.mjs"]
ENTRYPOINT ["docker/entrypoint.sh"]
CMD ["worker"]
