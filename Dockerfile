FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY bin ./bin
COPY cmd ./cmd
COPY src ./src
COPY schema ./schema
COPY tsconfig.json ./
# the sources compiled once, into node_modules/.cache/burrow (bin/compile.js), not at each start
RUN node bin/burrow.js --help > /dev/null
ENV HOST=0.0.0.0 PORT=8000 DATA_DIR=/data
EXPOSE 8000
CMD ["node", "bin/burrow.js", "start"]
