#!/bin/bash
# The open-loop tail while events arrive: whose CPU makes it? A release serve consumes 200,000 events, then 2,000
# events/s of yesterday arrive (generate --rate) while backbeat-load asks /healthz at 5,000/s and one artist's streams
# of 28 days at 2,000/s (HEALTHZ_RATE and STREAMS_RATE; 64 connections, 15 s each), three rounds of two alternated conditions: A, everything at nice
# 0; B, at nice 10: with MODE=others (default) PostgreSQL, the dev broker and the publisher; with MODE=threads the
# serve's threads whose name matches PATTERN (default `rdk:*`, librdkafka's; `*overcommit*`: dispatch's serial
# queues); with MODE=arrivals, B publishes the same events to a topic serve does not consume (`idle`): the broker
# and the publisher work alike, serve's ingest and PostgreSQL do not; with MODE=flush, serve is started again for each
# run, in B with FLUSH_B (default --flush-interval 3600s --pending-limit 2GB: it consumes, but flushes nothing); with
# MODE=binary, serve is started again for each run from BIN_A in A and BIN_B in B (two builds compared; a wrapper
# script that sets an environment variable compares two settings of one build). ROUNDS alternated rounds (default 3).
# Prints each run's report and the serve's CPU ticks per thread. Run as root from the repository (PostgreSQL
# is started as the postgres user on port 55433, fsync on); needs the release build of backbeat and backbeat-load.
set -e
cd "$(dirname "$0")/../.."
. scripts/lib/postgres.sh
bindir=$(pg_bindir)
BIN=$(swift build -c release --show-bin-path)/backbeat
LOAD=$(swift build -c release --show-bin-path)/backbeat-load
D=/tmp/floor; rm -rf $D; mkdir -p $D; chown postgres:postgres $D
P=55433
su postgres -c "$bindir/initdb -D $D/data -U postgres -A trust --no-sync" >/dev/null
su postgres -c "$bindir/pg_ctl -D $D/data -l $D/server.log -w -o '-p $P -k $D -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=200' start" >/dev/null
su postgres -c "$bindir/createdb -h 127.0.0.1 -p $P -U postgres backbeat"
URL=postgres://postgres@127.0.0.1:$P/backbeat
$BIN dev-broker --partitions 12 --bootstrap-file $D/bs >/dev/null 2>&1 &
BPID=$!
sleep 3; B=$(cat $D/bs)
$BIN generate --brokers $B --events 200000 --artists 200 --days 30 --seed 5 | tail -1
export BACKBEAT_ADMIN_TOKEN=0123456789abcdef0123
BACKBEAT_POSTGRES_URL=$URL $BIN serve --brokers $B --topics streams,revenue,social,page --http-port 18383 > $D/serve.log 2>&1 &
SPID=$!
prev=-1
while true; do
  sleep 10
  n=$(curl -s localhost:18383/metrics | awk '/^backbeat_events_consumed_total/{s+=$2} END{print s+0}')
  [ "$n" = "$prev" ] && [ "$n" != 0 ] && break
  prev=$n
done
echo "consumed $n"
yesterday=$(date -u -d yesterday +%F)
$BIN generate --brokers $B --events 3000000 --rate ${RATE:-2000} --artists 200 --days 1 --start $yesterday --seed 77 >/dev/null 2>&1 &
GPID=$!
sleep 15
for t in /proc/$SPID/task/*; do cat $t/comm; done | sort | uniq -c
echo "/healthz" > $D/healthz.txt
echo "/v1/artists/artist-0001/streams?from=$(date -u -d '28 days ago' +%F)&to=$(date -u +%F)&granularity=day" > $D/streams.txt
pgpids() { pgrep -f "postgres.*$D/data" ; pgrep -P "$(head -1 $D/data/postmaster.pid)" ; }
for round in $(seq ${ROUNDS:-3}); do
  for cond in A B; do
    n=0; [ $cond = B ] && n=10
    if [ "${MODE:-others}" = binary ]; then
      kill -INT $SPID; wait $SPID || true
      SBIN=$BIN_A; [ $cond = B ] && SBIN=$BIN_B
      BACKBEAT_POSTGRES_URL=$URL $SBIN serve --brokers $B --topics streams,revenue,social,page --http-port 18383 >> $D/serve.log 2>&1 &
      SPID=$!
      until curl -sf localhost:18383/healthz >/dev/null 2>&1; do sleep 1; done
      sleep 25
    elif [ "${MODE:-others}" = flush ]; then
      kill -INT $SPID; wait $SPID || true
      extra=""; [ $cond = B ] && extra="${FLUSH_B:---flush-interval 3600s --pending-limit 2GB}"
      BACKBEAT_POSTGRES_URL=$URL $BIN serve --brokers $B --topics streams,revenue,social,page --http-port 18383 $extra >> $D/serve.log 2>&1 &
      SPID=$!
      until curl -sf localhost:18383/healthz >/dev/null 2>&1; do sleep 1; done
      sleep 20
    elif [ "${MODE:-others}" = arrivals ]; then
      kill $GPID 2>/dev/null || true
      topics=streams,revenue,social,page; [ $cond = B ] && topics=idle
      $BIN generate --brokers $B --events 3000000 --rate ${RATE:-2000} --artists 200 --days 1 --start $yesterday --seed $((77 + round)) --topics $topics >/dev/null 2>&1 &
      GPID=$!
      sleep 5
    elif [ "${MODE:-others}" = others ]; then
      for pid in $(pgpids | sort -u) $BPID $GPID; do renice -n $n -p $pid >/dev/null 2>&1 || true; done
    else
      for t in /proc/$SPID/task/*; do
        case "$(cat $t/comm)" in ${PATTERN:-rdk:*}) renice -n $n -p $(basename $t) >/dev/null 2>&1 || true;; esac
      done
    fi
    for target in healthz streams; do
      rate=${HEALTHZ_RATE:-5000}; [ $target = streams ] && rate=${STREAMS_RATE:-2000}
      out=$($LOAD --port 18383 --rate $rate --seconds 15 --connections 64 --paths $D/$target.txt --token $BACKBEAT_ADMIN_TOKEN --accept-encoding "gzip, deflate, br, zstd" 2>&1 | tr '\n' ' ')
      echo "round $round cond $cond $target $rate/s: $out"
    done
  done
done
for t in /proc/$SPID/task/*; do echo "$(cat $t/comm) $(awk '{print $14+$15}' $t/stat)"; done | sort -k2 -n -r | head -14
kill $GPID; kill -INT $SPID; wait $SPID || true; kill $BPID
su postgres -c "$bindir/pg_ctl -D $D/data -m immediate stop" >/dev/null
