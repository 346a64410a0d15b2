-- Per-artist API tokens (`backbeat token create`). Only the SHA-256 of each token is stored; the token itself is
-- shown once, when it is created. A revoked token stays listed with its revocation time.
CREATE TABLE api_tokens (
    id          bigserial   PRIMARY KEY,
    artist_id   text        NOT NULL,
    label       text        NOT NULL DEFAULT '',
    token_hash  bytea       NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
