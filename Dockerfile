# Multi-stage: dependencies are installed in a build stage; the runtime image runs as a non-root user.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

FROM node:20-bookworm-slim
ENV NODE_ENV=production ROTSCOPE_HOST=0.0.0.0 ROTSCOPE_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY proto ./proto
COPY migrations ./migrations
COPY src ./src
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 4318
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:4318/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "bin/rotscope.js"]
CMD ["serve"]
