# Three stages: `build` compiles the TypeScript sources to dist/, `deps` installs the runtime
# dependencies only, and the runtime image runs the compiled CLI as the non-root user `node`.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sdk/package.json ./packages/sdk/
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json tsconfig.statusline.json ./
COPY src ./src
COPY ui ./ui
RUN npm run build

FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sdk/package.json ./packages/sdk/
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

FROM node:20-bookworm-slim
ENV NODE_ENV=production ROTSCOPE_HOST=0.0.0.0 ROTSCOPE_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY proto ./proto
COPY migrations ./migrations
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 4318
# Ready means the database answers and the migrations are applied (GET /readyz).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.ROTSCOPE_PORT||4318)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Bound to 0.0.0.0 with no API token yet, serve stores ROTSCOPE_BOOTSTRAP_TOKEN as the first
# admin token, or generates one and prints it once to the log.
ENTRYPOINT ["node", "bin/rotscope.js"]
CMD ["serve"]
