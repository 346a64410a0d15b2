# Backbeat: built on the official Swift image with the same dependency installer as scripts/test
# (scripts/lib/deps.sh), run on its slim variant with librdkafka, libzstd and libxxhash.
FROM swift:6.3-bookworm AS build
WORKDIR /src
COPY scripts/lib/deps.sh scripts/lib/postgres.sh scripts/lib/
RUN . scripts/lib/deps.sh && install_build_deps && rm -rf /var/lib/apt/lists/*
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
COPY Benchmarks ./Benchmarks
# The OpenAPI document the binary embeds (Sources/BackbeatServer/HTTP/openapi.yaml links to it).
COPY docs/openapi.yaml ./docs/openapi.yaml
RUN swift build -c release --product backbeat

FROM swift:6.3-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends librdkafka1 libzstd1 libxxhash0 curl \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/.build/release/backbeat /usr/local/bin/backbeat
COPY sql /usr/share/backbeat/sql
COPY dashboards/web /usr/share/backbeat/web
# The archive volume (BACKBEAT_ARCHIVE_DIR in docker-compose.yml) starts as this directory, writable by the service.
RUN mkdir -p /var/lib/backbeat/archive && chown nobody /var/lib/backbeat/archive
USER nobody
EXPOSE 8080
HEALTHCHECK CMD curl -fs localhost:8080/healthz || exit 1
ENTRYPOINT ["backbeat"]
CMD ["serve"]
