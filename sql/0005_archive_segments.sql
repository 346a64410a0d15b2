-- How far each archive segment of `serve --archive-dir` is written, stored in the same transaction as the aggregates
-- and offsets of each flush: after a crash an open segment is cut back to `bytes`, so the archive holds exactly the
-- messages counted. `name` is the segment's path below the archive directory.
CREATE TABLE archive_segments (
    name        text        PRIMARY KEY,
    topic       text        NOT NULL,
    partition   integer     NOT NULL,
    from_offset bigint,
    next_offset bigint      NOT NULL,
    bytes       bigint      NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
