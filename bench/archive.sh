#!/usr/bin/env bash
# bench/archive.sh compares 'binlogcdc archive --stop-at-end' with
# 'mariadb-binlog --read-from-remote-server --raw --to-last-log' on the
# same private MariaDB and binlogs (SIZE_MB, default 500, of row events
# written by INSERT … SELECT of 200-byte rows, rotated at 256 MB): wall
# time, user+system CPU, peak RSS of each, and that both copies are
# cmp-equal to the server's files (median of RUNS runs); then the live delay from commit to the
# event in the archive file (p50, p99) at a steady rate (see the end).
# A benchmark, not a test: run it by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
trap mdb_stop_all EXIT
SIZE_MB=${SIZE_MB:-500}
w=$BENCH_DIR/archive
mkdir -p "$w"
go build -o "$w/binlogcdc" ./cmd/binlogcdc
mdb_start "$w/db" "${mdb_binlog_flags[@]}" --max-binlog-size=256M
mdb -e "CREATE DATABASE b; CREATE TABLE b.t (id BIGINT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(200), n INT)"
fill_binlogs "$SIZE_MB"
mdb -e "FLUSH BINARY LOGS"
first=$(mdb -e 'SHOW BINARY LOGS' | head -1 | cut -f1)
echo "binlogs: $(mdb -e 'SHOW BINARY LOGS' | awk '{s+=$2; n++} END {printf "%d files, %.0f MB", n, s/1048576}')"
# Each tool copies the files RUNS times (default 3); each run's line is
# printed, then the median of each tool's wall time and CPU (user+sys).
# PROFILE=FILE writes a CPU profile of binlogcdc's last run there.
RUNS=${RUNS:-3}
run() { # name cmd...
	local name=$1
	shift
	/usr/bin/time -o "$w/time" -f "$name: %e s wall, %U s user, %S s sys, %M KB max RSS" "$@"
	cat "$w/time"
	tail -1 "$w/time" | awk -v n="$name" '{printf "%s\t%s\t%.2f\n", n, $(NF-12), $(NF-9)+$(NF-6)}' >>"$w/times"
}
: >"$w/times"
prof=()
for i in $(seq "$RUNS"); do
	rm -rf "$w/raw" "$w/arch"
	mkdir -p "$w/raw"
	sync
	(cd "$w/raw" && run mariadb-binlog mariadb-binlog --no-defaults --read-from-remote-server -h127.0.0.1 -P"$MDB_PORT" -uroot --raw --to-last-log "$first")
	[ "$i" = "$RUNS" ] && [ -n "${PROFILE:-}" ] && prof=(--cpuprofile "$PROFILE")
	run "binlogcdc archive" "$w/binlogcdc" archive --source "mysql://root@127.0.0.1:$MDB_PORT" --dir "$w/arch" --stop-at-end --from earliest "${prof[@]}" 2>/dev/null
done
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for name in mariadb-binlog "binlogcdc archive"; do
	wall=$(awk -F'\t' -v n="$name" '$1 == n {print $2}' "$w/times" | median)
	cpu=$(awk -F'\t' -v n="$name" '$1 == n {print $3}' "$w/times" | median)
	echo "$name: median of $RUNS runs: $wall s wall, $cpu CPU-s (user+sys)"
done
for f in $(mdb -e 'SHOW BINARY LOGS' | cut -f1); do
	last=$f
done
for f in $(mdb -e 'SHOW BINARY LOGS' | cut -f1); do
	[ "$f" = "$last" ] && continue # the open file: a prefix in both
	cmp "$w/db/$f" "$w/arch/$f"
	cmp "$w/db/$f" "$w/raw/$f"
done
echo "every closed file cmp-equal in both copies"

# Live delay: an archiver follows the server (--from now) while
# bench/archivelag commits RATE (default 200) single-row transactions a
# second for LAG_SECONDS (default 20); each one's delay is from its commit
# to its last byte being in the archive's file (p50, p99). With LAG_SYNC=1
# the archiver runs with --sync.
RATE=${RATE:-200}
LAG_SECONDS=${LAG_SECONDS:-20}
[ "$LAG_SECONDS" = 0 ] && exit 0 # LAG_SECONDS=0: the catch-up only
go build -o "$w/archivelag" ./bench/archivelag
rm -rf "$w/live"
sync_flag=()
[ "${LAG_SYNC:-0}" = 1 ] && sync_flag=(--sync)
"$w/binlogcdc" archive --source "mysql://root@127.0.0.1:$MDB_PORT" --dir "$w/live" --from now "${sync_flag[@]}" 2>"$w/live.log" &
arch_pid=$!
until grep -q "connected to" "$w/live.log" 2>/dev/null; do
	kill -0 "$arch_pid" || { cat "$w/live.log"; exit 1; }
	sleep 0.1
done
"$w/archivelag" -dir "$w/live" -port "$MDB_PORT" -rate "$RATE" -duration "${LAG_SECONDS}s"
kill -TERM "$arch_pid"
wait "$arch_pid"
