# PostgreSQL 15 with the postgresql-hll extension (used for unique-listener sketches).
FROM postgres:15-bookworm
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-15-hll \
    && rm -rf /var/lib/apt/lists/*
