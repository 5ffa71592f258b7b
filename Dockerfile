# paysync image: the CLI, the worker and the simulator (one image, different commands).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY jobs ./jobs
COPY bench ./bench
COPY sql ./sql
RUN npm ci --no-audit --no-fund && npm prune --omit=dev
ENV NODE_ENV=production
ENTRYPOINT ["node", "bin/paysync.js"]
CMD ["--help"]
