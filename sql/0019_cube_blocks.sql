-- Every cube's artist-day is one compact block (`CubeBlock` in BackbeatCore, docs/events.md "How aggregates are
-- stored"): `<cube>_days` keeps its key (artist_id, day) and its month partitions, and holds the day's rows in
-- `block bytea` instead of one array per column (each dimension value once per block, every number a varint: about
-- a third of the arrays' bytes). Flushes merge their rows into the stored block in Backbeat (`Store.mergeBlocks`).
-- The view `<cube>` keeps its columns, decoding each block with `backbeat_block_rows`.
--
-- Each cube's rows are carried over from its arrays, encoded by `backbeat_block` as version 1 blocks (every key in
-- columns; Backbeat writes version 2, keys as one number, and rewrites a block so when a flush merges into it), one
-- table after another with a notice each; the array tables are dropped.

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

-- An unsigned LEB128 varint: 7 bits a byte, low bits first, the high bit set on every byte but the last.
CREATE FUNCTION backbeat_varint(value numeric) RETURNS bytea LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    bytes bytea := '';
BEGIN
    WHILE value >= 128 LOOP
        bytes := bytes || set_byte('\x00'::bytea, 0, (mod(value, 128) + 128)::integer);
        value := div(value, 128);
    END LOOP;
    RETURN bytes || set_byte('\x00'::bytea, 0, value::integer);
END $$;

-- The block of rows given row after row: `hours` (null for a daily cube), `vals` (`dimensions` texts a row), `sums`
-- (`measures` integers a row, an amount as its micros).
CREATE FUNCTION backbeat_block(hours smallint[], vals text[], sums numeric[], dimensions integer, measures integer)
RETURNS bytea LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    n constant integer := cardinality(sums) / measures;
    ranks integer[] := array_fill(0, ARRAY[greatest(n * dimensions, 1)]);
    dictionary bytea[];
    ordered integer[];
    pieces bytea[] := ARRAY['\x01'::bytea, backbeat_varint(n)];
    previous_hour integer := 0;
    previous bytea;
    shared integer;
    value numeric;
    d integer;
    r integer;
    m integer;
BEGIN
    FOR d IN 1..dimensions LOOP
        dictionary := ARRAY(SELECT DISTINCT convert_to(vals[(i - 1) * dimensions + d], 'UTF8') FROM generate_series(1, n) i ORDER BY 1);
        FOR r IN 1..n LOOP
            ranks[(r - 1) * dimensions + d] := array_position(dictionary, convert_to(vals[(r - 1) * dimensions + d], 'UTF8')) - 1;
        END LOOP;
    END LOOP;
    ordered := ARRAY(
        SELECT i FROM generate_series(1, n) i
        ORDER BY coalesce(hours[i], 0),
                 CASE WHEN dimensions >= 1 THEN ranks[(i - 1) * dimensions + 1] END,
                 CASE WHEN dimensions >= 2 THEN ranks[(i - 1) * dimensions + 2] END,
                 CASE WHEN dimensions >= 3 THEN ranks[(i - 1) * dimensions + 3] END,
                 CASE WHEN dimensions >= 4 THEN ranks[(i - 1) * dimensions + 4] END,
                 CASE WHEN dimensions >= 5 THEN ranks[(i - 1) * dimensions + 5] END);
    IF hours IS NOT NULL THEN
        FOREACH r IN ARRAY ordered LOOP
            pieces := pieces || backbeat_varint(hours[r] - previous_hour);
            previous_hour := hours[r];
        END LOOP;
    END IF;
    FOR d IN 1..dimensions LOOP
        dictionary := ARRAY(SELECT DISTINCT convert_to(vals[(i - 1) * dimensions + d], 'UTF8') FROM generate_series(1, n) i ORDER BY 1);
        pieces := pieces || backbeat_varint(cardinality(dictionary));
        previous := '';
        FOR r IN 1..cardinality(dictionary) LOOP
            shared := 0;
            WHILE shared < length(previous) AND shared < length(dictionary[r])
                  AND get_byte(previous, shared) = get_byte(dictionary[r], shared) LOOP
                shared := shared + 1;
            END LOOP;
            pieces := pieces || backbeat_varint(shared) || backbeat_varint(length(dictionary[r]) - shared)
                             || substring(dictionary[r] FROM shared + 1);
            previous := dictionary[r];
        END LOOP;
        FOREACH r IN ARRAY ordered LOOP
            pieces := pieces || backbeat_varint(ranks[(r - 1) * dimensions + d]);
        END LOOP;
    END LOOP;
    FOR m IN 1..measures LOOP
        FOREACH r IN ARRAY ordered LOOP
            value := sums[(r - 1) * measures + m];
            pieces := pieces || backbeat_varint(CASE WHEN value >= 0 THEN 2 * value ELSE -2 * value - 1 END);
        END LOOP;
    END LOOP;
    RETURN (SELECT string_agg(p, ''::bytea ORDER BY i) FROM unnest(pieces) WITH ORDINALITY AS t(p, i));
END $$;

-- A block's rows (either version, `CubeBlock`): each row's hour of the day (null for a daily cube), its `dimensions`
-- values and its `measures` integers (an amount as its micros). A block that is not whole raises an error.
CREATE FUNCTION backbeat_block_rows(stored bytea, hourly boolean, dimensions integer, measures integer)
RETURNS TABLE (row_hour smallint, row_values text[], row_sums numeric[])
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    -- Decompressed once: each get_byte of a compressed value would decompress all of it again.
    block constant bytea := stored || ''::bytea;
    size constant integer := length(block);
    version integer;
    p integer := 1;  -- the next byte's index (from 0)
    n integer;
    v integer;
    b integer;
    shift integer;
    raw numeric;
    scale numeric;
    key numeric := 0;
    hours smallint[] := '{}';
    hour integer := 0;
    entries integer;
    shared integer;
    rest integer;
    previous bytea;
    dictionary text[] := '{}';  -- every dimension's entries, one dimension after another
    firsts integer[] := '{}';   -- where each dimension's entries start in `dictionary`
    sizes integer[] := '{}';
    vals text[] := '{}';
    sums numeric[] := '{}';
    d integer;
    m integer;
    r integer;
BEGIN
    IF size = 0 OR get_byte(block, 0) NOT IN (1, 2) THEN
        RAISE EXCEPTION 'not a cube block of version 1 or 2';
    END IF;
    version := get_byte(block, 0);
    -- Each unsigned varint below is read inline, into `v` (an integer) or `raw` (a numeric).
    v := 0; shift := 0;
    LOOP b := get_byte(block, p); p := p + 1; v := v | ((b & 127) << shift); EXIT WHEN b < 128; shift := shift + 7; END LOOP;
    n := v;
    IF version = 1 AND hourly THEN
        FOR r IN 1..n LOOP
            v := 0; shift := 0;
            LOOP b := get_byte(block, p); p := p + 1; v := v | ((b & 127) << shift); EXIT WHEN b < 128; shift := shift + 7; END LOOP;
            hour := hour + v;
            hours[r] := hour;
        END LOOP;
    END IF;
    FOR d IN 1..dimensions LOOP
        v := 0; shift := 0;
        LOOP b := get_byte(block, p); p := p + 1; v := v | ((b & 127) << shift); EXIT WHEN b < 128; shift := shift + 7; END LOOP;
        entries := v;
        firsts[d] := cardinality(dictionary) + 1;
        sizes[d] := entries;
        previous := '';
        FOR r IN 1..entries LOOP
            v := 0; shift := 0;
            LOOP b := get_byte(block, p); p := p + 1; v := v | ((b & 127) << shift); EXIT WHEN b < 128; shift := shift + 7; END LOOP;
            shared := v;
            v := 0; shift := 0;
            LOOP b := get_byte(block, p); p := p + 1; v := v | ((b & 127) << shift); EXIT WHEN b < 128; shift := shift + 7; END LOOP;
            rest := v;
            IF shared > length(previous) OR p + rest > size THEN
                RAISE EXCEPTION 'a cube block''s dictionary entry runs past its bytes';
            END IF;
            previous := substring(previous FROM 1 FOR shared) || substring(block FROM p + 1 FOR rest);
            p := p + rest;
            dictionary := dictionary || convert_from(previous, 'UTF8');
        END LOOP;
        IF version = 1 THEN
            FOR r IN 1..n LOOP
                v := 0; shift := 0;
                LOOP b := get_byte(block, p); p := p + 1; v := v | ((b & 127) << shift); EXIT WHEN b < 128; shift := shift + 7; END LOOP;
                IF v >= entries THEN
                    RAISE EXCEPTION 'a cube block''s index past its dictionary';
                END IF;
                vals[(r - 1) * dimensions + d] := dictionary[firsts[d] + v];
            END LOOP;
        END IF;
    END LOOP;
    IF version = 2 THEN
        -- Each row's key: the difference from the row before's; the hour, then each index, in mixed radix.
        FOR r IN 1..n LOOP
            raw := 0; scale := 1;
            LOOP b := get_byte(block, p); p := p + 1; raw := raw + (b & 127) * scale; EXIT WHEN b < 128; scale := scale * 128; END LOOP;
            key := key + raw;
            raw := key;
            FOR d IN REVERSE dimensions..1 LOOP
                vals[(r - 1) * dimensions + d] := dictionary[firsts[d] + mod(raw, sizes[d])::integer];
                raw := div(raw, sizes[d]);
            END LOOP;
            IF hourly THEN
                IF raw >= 24 THEN
                    RAISE EXCEPTION 'a cube block''s key past its day';
                END IF;
                hours[r] := raw;
            END IF;
        END LOOP;
    END IF;
    FOR m IN 1..measures LOOP
        FOR r IN 1..n LOOP
            raw := 0; scale := 1;
            LOOP b := get_byte(block, p); p := p + 1; raw := raw + (b & 127) * scale; EXIT WHEN b < 128; scale := scale * 128; END LOOP;
            sums[(r - 1) * measures + m] := CASE WHEN mod(raw, 2) = 0 THEN div(raw, 2) ELSE -div(raw + 1, 2) END;
        END LOOP;
    END LOOP;
    IF p <> size THEN
        RAISE EXCEPTION 'a cube block has bytes after its last column';
    END IF;
    RETURN QUERY SELECT CASE WHEN hourly THEN hours[i] END, vals[(i - 1) * dimensions + 1 : i * dimensions],
                        sums[(i - 1) * measures + 1 : i * measures]
                 FROM generate_series(1, n) i;
END $$;

DROP VIEW stream_daily, revenue_daily, social_daily;
DROP VIEW stream_hourly, revenue_hourly, social_hourly, streams_by_artist_hour, streams_by_artist_day_platform,
          streams_by_artist_day_country, streams_by_artist_day_demographics, streams_by_artist_day_track,
          revenue_by_artist_day, social_by_artist_day;

-- Carries one cube over: its artist-days encoded into a temporary table, the array table dropped and made again
-- with blocks, in the same month partitions.
CREATE FUNCTION pg_temp.backbeat_carry_over(name text, hourly boolean, dimensions text[], measures text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    started timestamptz := clock_timestamp();
    texts text := '''{}''::text[]';
    numbers text;
    month date;
    carried bigint;
BEGIN
    -- Each row's values, then its measures, one after another (`backbeat_block`'s input).
    IF cardinality(dimensions) > 0 THEN
        texts := format('ARRAY(SELECT x FROM unnest(%1$s) WITH ORDINALITY u(%1$s, o), unnest(ARRAY[%1$s]) WITH ORDINALITY w(x, k) ORDER BY o, k)',
                        array_to_string(dimensions, ', '));
    END IF;
    numbers := format('ARRAY(SELECT x FROM unnest(%1$s) WITH ORDINALITY u(%1$s, o), unnest(ARRAY[%2$s]) WITH ORDINALITY w(x, k) ORDER BY o, k)',
                      array_to_string(measures, ', '),
                      (SELECT string_agg(CASE WHEN m = 'amount' THEN '(amount * 1000000)::numeric' ELSE m || '::numeric' END, ', ')
                       FROM unnest(measures) m));
    EXECUTE format('CREATE TEMPORARY TABLE carried_blocks AS SELECT artist_id, day, backbeat_block(%s, %s, %s, %s, %s) AS block FROM %I',
                   CASE WHEN hourly THEN 'hour' ELSE 'NULL::smallint[]' END, texts, numbers, cardinality(dimensions),
                   cardinality(measures), name || '_days');
    EXECUTE format('DROP TABLE %I', name || '_days');
    EXECUTE format('CREATE TABLE %I (artist_id text NOT NULL, day date NOT NULL, block bytea NOT NULL, PRIMARY KEY (artist_id, day)) PARTITION BY RANGE (day)',
                   name || '_days');
    BEGIN
        EXECUTE format('ALTER TABLE %I ALTER COLUMN block SET COMPRESSION lz4', name || '_days');
    EXCEPTION WHEN feature_not_supported THEN
        NULL;
    END;
    FOR month IN SELECT DISTINCT date_trunc('month', day)::date FROM carried_blocks LOOP
        PERFORM backbeat_month_partition(name || '_days', month);
    END LOOP;
    EXECUTE format('INSERT INTO %I SELECT * FROM carried_blocks ORDER BY artist_id, day', name || '_days');
    GET DIAGNOSTICS carried = ROW_COUNT;
    DROP TABLE carried_blocks;
    RAISE NOTICE '%: % artist-days carried over into blocks in % s', name, carried,
        round(extract(epoch FROM clock_timestamp() - started)::numeric, 1);
END $$;

SELECT pg_temp.backbeat_carry_over('stream_hourly', true, ARRAY['track_id', 'platform', 'country', 'age_range', 'gender'], ARRAY['streams', 'skips', 'listening_ms']);
SELECT pg_temp.backbeat_carry_over('revenue_hourly', true, ARRAY['source', 'currency', 'platform', 'track_id'], ARRAY['amount', 'events']);
SELECT pg_temp.backbeat_carry_over('social_hourly', true, ARRAY['platform', 'action'], ARRAY['count']);
SELECT pg_temp.backbeat_carry_over('streams_by_artist_hour', true, '{}', ARRAY['streams', 'skips', 'listening_ms']);
SELECT pg_temp.backbeat_carry_over('streams_by_artist_day_platform', false, ARRAY['platform'], ARRAY['streams', 'skips', 'listening_ms']);
SELECT pg_temp.backbeat_carry_over('streams_by_artist_day_country', false, ARRAY['country'], ARRAY['streams', 'skips', 'listening_ms']);
SELECT pg_temp.backbeat_carry_over('streams_by_artist_day_demographics', false, ARRAY['age_range', 'gender'], ARRAY['streams', 'skips', 'listening_ms']);
SELECT pg_temp.backbeat_carry_over('streams_by_artist_day_track', false, ARRAY['track_id'], ARRAY['streams', 'skips', 'listening_ms']);
SELECT pg_temp.backbeat_carry_over('revenue_by_artist_day', false, ARRAY['source', 'currency'], ARRAY['amount', 'events']);
SELECT pg_temp.backbeat_carry_over('social_by_artist_day', false, ARRAY['platform', 'action'], ARRAY['count']);

CREATE VIEW stream_hourly AS
    SELECT d.artist_id,
           (d.day::timestamp + r.row_hour * interval '1 hour') AT TIME ZONE 'UTC' AS hour,
           r.row_values[1] AS track_id,
           r.row_values[2] AS platform,
           r.row_values[3] AS country,
           r.row_values[4] AS age_range,
           r.row_values[5] AS gender,
           r.row_sums[1]::bigint AS streams,
           r.row_sums[2]::bigint AS skips,
           r.row_sums[3]::bigint AS listening_ms,
           d.day
    FROM stream_hourly_days d, backbeat_block_rows(d.block, true, 5, 3) r;

CREATE VIEW revenue_hourly AS
    SELECT d.artist_id,
           (d.day::timestamp + r.row_hour * interval '1 hour') AT TIME ZONE 'UTC' AS hour,
           r.row_values[1] AS source,
           r.row_values[2] AS currency,
           r.row_values[3] AS platform,
           r.row_values[4] AS track_id,
           (r.row_sums[1] * 0.000001)::numeric(38, 6) AS amount,
           r.row_sums[2]::bigint AS events,
           d.day
    FROM revenue_hourly_days d, backbeat_block_rows(d.block, true, 4, 2) r;

CREATE VIEW social_hourly AS
    SELECT d.artist_id,
           (d.day::timestamp + r.row_hour * interval '1 hour') AT TIME ZONE 'UTC' AS hour,
           r.row_values[1] AS platform,
           r.row_values[2] AS action,
           r.row_sums[1]::bigint AS count,
           d.day
    FROM social_hourly_days d, backbeat_block_rows(d.block, true, 2, 1) r;

CREATE VIEW streams_by_artist_hour AS
    SELECT d.artist_id,
           (d.day::timestamp + r.row_hour * interval '1 hour') AT TIME ZONE 'UTC' AS hour,
           r.row_sums[1]::bigint AS streams,
           r.row_sums[2]::bigint AS skips,
           r.row_sums[3]::bigint AS listening_ms,
           d.day
    FROM streams_by_artist_hour_days d, backbeat_block_rows(d.block, true, 0, 3) r;

CREATE VIEW streams_by_artist_day_platform AS
    SELECT d.artist_id,
           d.day,
           r.row_values[1] AS platform,
           r.row_sums[1]::bigint AS streams,
           r.row_sums[2]::bigint AS skips,
           r.row_sums[3]::bigint AS listening_ms
    FROM streams_by_artist_day_platform_days d, backbeat_block_rows(d.block, false, 1, 3) r;

CREATE VIEW streams_by_artist_day_country AS
    SELECT d.artist_id,
           d.day,
           r.row_values[1] AS country,
           r.row_sums[1]::bigint AS streams,
           r.row_sums[2]::bigint AS skips,
           r.row_sums[3]::bigint AS listening_ms
    FROM streams_by_artist_day_country_days d, backbeat_block_rows(d.block, false, 1, 3) r;

CREATE VIEW streams_by_artist_day_demographics AS
    SELECT d.artist_id,
           d.day,
           r.row_values[1] AS age_range,
           r.row_values[2] AS gender,
           r.row_sums[1]::bigint AS streams,
           r.row_sums[2]::bigint AS skips,
           r.row_sums[3]::bigint AS listening_ms
    FROM streams_by_artist_day_demographics_days d, backbeat_block_rows(d.block, false, 2, 3) r;

CREATE VIEW streams_by_artist_day_track AS
    SELECT d.artist_id,
           d.day,
           r.row_values[1] AS track_id,
           r.row_sums[1]::bigint AS streams,
           r.row_sums[2]::bigint AS skips,
           r.row_sums[3]::bigint AS listening_ms
    FROM streams_by_artist_day_track_days d, backbeat_block_rows(d.block, false, 1, 3) r;

CREATE VIEW revenue_by_artist_day AS
    SELECT d.artist_id,
           d.day,
           r.row_values[1] AS source,
           r.row_values[2] AS currency,
           (r.row_sums[1] * 0.000001)::numeric(38, 6) AS amount,
           r.row_sums[2]::bigint AS events
    FROM revenue_by_artist_day_days d, backbeat_block_rows(d.block, false, 2, 2) r;

CREATE VIEW social_by_artist_day AS
    SELECT d.artist_id,
           d.day,
           r.row_values[1] AS platform,
           r.row_values[2] AS action,
           r.row_sums[1]::bigint AS count
    FROM social_by_artist_day_days d, backbeat_block_rows(d.block, false, 2, 1) r;
-- The full dimensions by day (migration 0015), as before.
CREATE VIEW stream_daily AS
    SELECT artist_id, hour, day, track_id, platform, country, age_range, gender, streams, skips, listening_ms
    FROM stream_hourly
    UNION ALL
    SELECT artist_id, day::timestamp AT TIME ZONE 'UTC', day, track_id, platform, country, age_range, gender,
           streams, skips, listening_ms
    FROM stream_daily_rolled;

CREATE VIEW revenue_daily AS
    SELECT artist_id, hour, day, source, currency, platform, track_id, amount, events
    FROM revenue_hourly
    UNION ALL
    SELECT artist_id, day::timestamp AT TIME ZONE 'UTC', day, source, currency, platform, track_id, amount, events
    FROM revenue_daily_rolled;

CREATE VIEW social_daily AS
    SELECT artist_id, hour, day, platform, action, count
    FROM social_hourly
    UNION ALL
    SELECT artist_id, day::timestamp AT TIME ZONE 'UTC', day, platform, action, count
    FROM social_daily_rolled;
