-- Every merged aggregate table is partitioned by month of its time column (`hour` or `day`), so that retention
-- drops a month of rows as one partition instead of deleting them (docs/operations.md, "Retention"). Each table is
-- copied once into its partitioned form; its view is dropped and made again from its own definition.
-- `backbeat_month_partition(table, month)` creates a month's partition if it is missing: compaction calls it for
-- the months it is about to merge, before it merges them.

SELECT pg_advisory_xact_lock(x'6261636B62656174'::bigint);

CREATE FUNCTION backbeat_month_partition(parent text, month date) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    first date := date_trunc('month', month::timestamp)::date;
    name text := parent || '_' || to_char(first, 'YYYY_MM');
    column_type text;
BEGIN
    IF to_regclass(name) IS NOT NULL THEN
        RETURN;
    END IF;
    SELECT format_type(a.atttypid, a.atttypmod) INTO column_type
    FROM pg_partitioned_table p JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
    WHERE p.partrelid = parent::regclass;
    IF column_type = 'date' THEN
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                       name, parent, first, (first + interval '1 month')::date);
    ELSE
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                       name, parent, first::timestamp AT TIME ZONE 'UTC', (first + interval '1 month')::timestamp AT TIME ZONE 'UTC');
    END IF;
END $$;

DO $$
DECLARE
    merged text;
    base text;
    view_definition text;
    time_column text;
    key_columns text;
    month date;
BEGIN
    FOR merged IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname LIKE '%\_merged' ORDER BY 1 LOOP
        base := left(merged, -length('_merged'));
        view_definition := pg_get_viewdef(base::regclass);
        SELECT attname INTO time_column FROM pg_attribute
        WHERE attrelid = merged::regclass AND attname IN ('hour', 'day') AND NOT attisdropped;
        SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY k.ordinality) INTO key_columns
        FROM pg_index x CROSS JOIN unnest(x.indkey) WITH ORDINALITY k(attnum, ordinality)
        JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
        WHERE x.indrelid = merged::regclass AND x.indisprimary;

        EXECUTE format('DROP VIEW %I', base);
        EXECUTE format('ALTER TABLE %I RENAME TO %I', merged, base || '_unpartitioned');
        EXECUTE format('ALTER INDEX %I RENAME TO %I', base || '_pkey', base || '_unpartitioned_pkey');
        EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS, CONSTRAINT %I PRIMARY KEY (%s)) PARTITION BY RANGE (%I)',
                       merged, base || '_unpartitioned', base || '_pkey', key_columns, time_column);
        FOR month IN EXECUTE format('SELECT DISTINCT date_trunc(''month'', %s)::date FROM %I',
                                    CASE WHEN time_column = 'hour' THEN 'hour AT TIME ZONE ''UTC''' ELSE 'day::timestamp' END,
                                    base || '_unpartitioned') LOOP
            PERFORM backbeat_month_partition(merged, month);
        END LOOP;
        EXECUTE format('INSERT INTO %I SELECT * FROM %I', merged, base || '_unpartitioned');
        EXECUTE format('DROP TABLE %I', base || '_unpartitioned');
        EXECUTE format('CREATE VIEW %I AS %s', base, view_definition);
    END LOOP;
END $$;
