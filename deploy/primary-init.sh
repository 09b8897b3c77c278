#!/usr/bin/env bash
# Runs once, when the db container initializes its data folder (docker-entrypoint-initdb.d): lets the standby
# replicate and makes it the synchronous standby (docs/postgres.md#runbook, step 1). ALTER SYSTEM takes effect at
# the real server's start, after this temporary one (whose commits must not wait for a standby not yet there).
set -euo pipefail
echo "host replication all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
psql -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d postgres <<'SQL'
ALTER SYSTEM SET synchronous_standby_names = 'standby1';
ALTER SYSTEM SET wal_keep_size = '512MB';
SQL
