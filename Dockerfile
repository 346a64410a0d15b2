# Backbeat: build with the official Swift image, run on its slim variant with librdkafka and libzstd.
FROM swift:6.3-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends librdkafka-dev libzstd-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
COPY Benchmarks ./Benchmarks
RUN swift build -c release --product backbeat

FROM swift:6.3-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends librdkafka1 libzstd1 curl \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/.build/release/backbeat /usr/local/bin/backbeat
COPY sql /usr/share/backbeat/sql
USER nobody
EXPOSE 8080
HEALTHCHECK CMD curl -fs localhost:8080/healthz || exit 1
ENTRYPOINT ["backbeat"]
CMD ["serve"]
