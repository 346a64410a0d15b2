-- Each artist's reporting time zone (issue 40): an IANA name of the zone database the service and PostgreSQL both
-- read (Debian's tzdata in /usr/share/zoneinfo), checked by the service before it is stored. An artist without a
-- row reports in UTC. Recorded by `PUT /v1/artists/{artist_id}/zone` and `backbeat artist set-zone`.
CREATE TABLE IF NOT EXISTS artist_zones (
    artist_id text        PRIMARY KEY,
    zone      text        NOT NULL,
    set_at    timestamptz NOT NULL DEFAULT now()
);
