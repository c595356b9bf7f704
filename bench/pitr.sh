#!/usr/bin/env bash
# bench/pitr.sh measures what a point-in-time restore's search costs:
# on an archive of SIZE_MB (default 100) of row events (INSERT … SELECT of
# 200-byte rows, rotated at 32 MB) with a DROP TABLE at the end, the wall
# time, CPU and peak RSS of 'read DIR' (JSON to /dev/null), of
# 'read DIR --find DDL', and of 'read DIR --stop-before DROP TABLE …'
# (the search, then the same read up to the statement). A benchmark, not
# a test: run it by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
trap mdb_stop_all EXIT
SIZE_MB=${SIZE_MB:-100}
w=$BENCH_DIR/pitr
mkdir -p "$w"
go build -o "$w/binlogcdc" ./cmd/binlogcdc
mdb_start "$w/db" "${mdb_binlog_flags[@]}" --max-binlog-size=32M
mdb -e "CREATE DATABASE b; CREATE TABLE b.t (id BIGINT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(200), n INT); CREATE TABLE b.gone (id INT PRIMARY KEY)"
fill_binlogs "$SIZE_MB"
mdb -e "DROP TABLE b.gone"
mdb b -e "INSERT INTO t (v, n) VALUES ('after', 1)"
echo "binlogs: $(mdb -e 'SHOW BINARY LOGS' | awk '{s+=$2; n++} END {printf "%d files, %.0f MB", n, s/1048576}')"
rm -rf "$w/arch"
"$w/binlogcdc" archive --source "mysql://root@127.0.0.1:$MDB_PORT" --dir "$w/arch" --stop-at-end --from earliest 2>/dev/null
run() { # name cmd...
	local name=$1
	shift
	/usr/bin/time -o "$w/time" -f "$name: %e s wall, %U s user, %S s sys, %M KB max RSS" "$@" >/dev/null 2>"$w/err" || { cat "$w/err" >&2; exit 1; }
	cat "$w/time"
}
sync
run "read DIR" "$w/binlogcdc" read "$w/arch"
run "read DIR --find DDL" "$w/binlogcdc" read "$w/arch" --find DDL
run "read DIR --stop-before 'DROP TABLE b.gone'" "$w/binlogcdc" read "$w/arch" --stop-before 'DROP TABLE b.gone'
run "read DIR --stop-before 'DELETE b.gone' (rows of one table: never matches)" sh -c "'$w/binlogcdc' read '$w/arch' --stop-before 'DELETE b.gone'; [ \$? -ne 0 ]"
