#!/usr/bin/env bash
# bench/incremental.sh measures an incremental snapshot (stream
# --signal-table) of one table of ROWS rows (default 300,000; the table of
# bench/snapshot.sh) next to 'binlogcdc snapshot' of it: wall time from the
# signal to "done", binlogcdc's CPU time (user+sys, from /proc) and peak
# RSS, for --snapshot-chunk CHUNKS (default "1000 10000"), output to
# /dev/null, the source otherwise idle. A private MariaDB in
# $BENCH_DIR/incremental-server (default /tmp/binlogcdc-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

ROWS=${ROWS:-300000}
CHUNKS=${CHUNKS:-"1000 10000"}
mkdir -p "$BENCH_DIR"
trap mdb_stop_all EXIT
go build -o "$BENCH_DIR/binlogcdc" ./cmd/binlogcdc
tck=$(getconf CLK_TCK)

mdb_start "$BENCH_DIR/incremental-server" "${mdb_binlog_flags[@]}"
mdb -e "CREATE DATABASE bench; CREATE DATABASE ctl;
CREATE TABLE ctl.signal (id INT AUTO_INCREMENT PRIMARY KEY, type VARCHAR(32) NOT NULL, data TEXT);
CREATE TABLE bench.t (id INT PRIMARY KEY, n BIGINT, amount DECIMAL(12,2), at DATETIME(6),
  state ENUM('new','paid','shipped','cancelled'), name VARCHAR(100), note TEXT) ENGINE=InnoDB;
INSERT INTO bench.t SELECT seq, seq * 7919, (seq % 100000) / 100, '2024-01-01' + INTERVAL seq SECOND,
  1 + seq % 4, CONCAT('customer ', seq), REPEAT('note ', seq % 20) FROM bench.seq_1_to_$ROWS;"
src="mysql://root@127.0.0.1:$MDB_PORT"

# cpu PID: user+sys seconds of a running process.
cpu() { awk -v t="$tck" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"; }

/usr/bin/time -f "%e %U %S %M" -o "$BENCH_DIR/time.out" "$BENCH_DIR/binlogcdc" snapshot --source "$src" --tables bench.t >/dev/null 2>/dev/null
read -r e u s m <"$BENCH_DIR/time.out"
echo "snapshot (warm-up)   $e s  CPU $(echo "$u + $s" | bc) s  peak RSS $((m / 1024)) MiB"
/usr/bin/time -f "%e %U %S %M" -o "$BENCH_DIR/time.out" "$BENCH_DIR/binlogcdc" snapshot --source "$src" --tables bench.t >/dev/null 2>/dev/null
read -r e u s m <"$BENCH_DIR/time.out"
echo "snapshot             $e s  CPU $(echo "$u + $s" | bc) s  peak RSS $((m / 1024)) MiB"

for chunk in $CHUNKS; do
	log=$BENCH_DIR/incremental.$chunk.err
	"$BENCH_DIR/binlogcdc" stream --source "$src" --from now --tables ctl.none --signal-table ctl.signal \
		--snapshot-chunk "$chunk" >/dev/null 2>"$log" &
	pid=$!
	until grep -q "connected to" "$log"; do sleep 0.1; done
	sleep 0.5
	c0=$(cpu $pid)
	t0=$(date +%s.%N)
	mdb -e "INSERT INTO ctl.signal (type, data) VALUES ('snapshot', 'bench.t')"
	until grep -q 'incremental snapshot of `bench`.`t` done' "$log"; do sleep 0.05; done
	t1=$(date +%s.%N)
	c1=$(cpu $pid)
	hwm=$(awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$pid/status")
	kill -TERM $pid
	wait $pid || true
	echo "incremental, chunk $chunk  $(echo "$t1 - $t0" | bc | cut -c1-5) s  CPU $(echo "$c1 - $c0" | bc) s  peak RSS $hwm MiB"
done
