#!/usr/bin/env bash
# bench/snapshot.sh measures 'binlogcdc snapshot' next to
# 'mariadb-dump --single-transaction' on one table of ROWS rows (default
# 1,500,000): rows/s and peak RSS (GNU time's maximum resident set size),
# median of RUNS (default 3) runs each, output to /dev/null, after one
# warm-up run of each.
#
# Table: INT primary key, BIGINT, DECIMAL(12,2), DATETIME(6), ENUM,
# VARCHAR(100), TEXT (as bench/gen.sh's workload), filled with
# INSERT … SELECT from the sequence engine. A private MariaDB in
# $BENCH_DIR/snapshot-server (default /tmp/binlogcdc-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

ROWS=${ROWS:-1500000}
RUNS=${RUNS:-3}
READERS=${READERS-1,2,4}
mkdir -p "$BENCH_DIR"
trap mdb_stop_all EXIT
go build -o "$BENCH_DIR/binlogcdc" ./cmd/binlogcdc
go build -o "$BENCH_DIR/readers" ./bench/readers

echo "snapshot: starting a private MariaDB and filling bench.t with $ROWS rows" >&2
mdb_start "$BENCH_DIR/snapshot-server" "${mdb_binlog_flags[@]}"
mdb -e "CREATE DATABASE bench;
CREATE TABLE bench.t (id INT PRIMARY KEY, n BIGINT, amount DECIMAL(12,2), at DATETIME(6),
  state ENUM('new','paid','shipped','cancelled'), name VARCHAR(100), note TEXT) ENGINE=InnoDB;
INSERT INTO bench.t SELECT seq, seq * 7919, (seq % 100000) / 100, '2024-01-01' + INTERVAL seq SECOND,
  1 + seq % 4, CONCAT('customer ', seq), REPEAT('note ', seq % 20) FROM bench.seq_1_to_$ROWS;"
echo "snapshot: $(mdb -e 'SELECT ROUND(DATA_LENGTH/1048576) FROM information_schema.TABLES WHERE TABLE_NAME = "t"') MiB of data" >&2

# server_cpu prints mariadbd's user+sys CPU seconds so far.
server_cpu() {
	awk '{ sub(/.*\) /, ""); print ($12 + $13) / 100 }' "/proc/$MDB_PID/stat"
}

# run NAME CMD...: prints "NAME seconds maxrss_kib cpu_s server_cpu_s".
run() {
	local name=$1 s0
	shift
	rm -f "$BENCH_DIR/snap.out" "$BENCH_DIR/snap.cp"
	s0=$(server_cpu)
	/usr/bin/time -f "%e %M %U %S" -o "$BENCH_DIR/time.out" "$@" >/dev/null 2>"$BENCH_DIR/stderr.out" ||
		{ cat "$BENCH_DIR/stderr.out" >&2; return 1; }
	echo "$name $(awk -v s0="$s0" -v s1="$(server_cpu)" '{ print $1, $2, $3 + $4, s1 - s0 }' "$BENCH_DIR/time.out")"
}
snap=("$BENCH_DIR/binlogcdc" snapshot --source "mysql://root@127.0.0.1:$MDB_PORT" --tables bench.t)
snapcp=("${snap[@]}" -o "$BENCH_DIR/snap.out" --checkpoint "$BENCH_DIR/snap.cp")
dump=(mariadb-dump --no-defaults -h127.0.0.1 -P"$MDB_PORT" -uroot --single-transaction bench t)

# A warm-up pass of each (the buffer pool, and InnoDB's purge of the
# fill's undo log, which competes for the CPU at first), then the two
# tools in turn, so that a busier moment of the machine hits both.
echo "snapshot: load average $(cut -d' ' -f1-3 /proc/loadavg) before the runs" >&2
run warmup "${snap[@]}" >/dev/null
run warmup "${dump[@]}" >/dev/null
for i in $(seq 1 "$RUNS"); do
	run binlogcdc "${snap[@]}"
	run binlogcdc-cp "${snapcp[@]}"
	run mariadb-dump "${dump[@]}"
done >"$BENCH_DIR/snapshot.results"
rm -f "$BENCH_DIR/snap.out" "$BENCH_DIR/snap.cp"
echo "snapshot: load average $(cut -d' ' -f1-3 /proc/loadavg) after the runs" >&2

awk -v rows="$ROWS" '
	function median(s,   n, a) { n = split(substr(s, 2), a, " "); asort(a); return a[int((n + 1) / 2)] }
	{ t[$1] = t[$1] " " $2; c[$1] = c[$1] " " $4; s[$1] = s[$1] " " $5; m[$1] = ($3 > m[$1] ? $3 : m[$1]) }
	END {
		for (k in t) {
			med = median(t[k])
			printf "%-14s median %6.2f s  %9.0f rows/s  peak RSS %6.1f MiB  CPU %5.2f s  server CPU %5.2f s\n",
				k, med, rows / med, m[k] / 1024, median(c[k]), median(s[k])
		}
	}' "$BENCH_DIR/snapshot.results"
sed 's/^/  run: /' "$BENCH_DIR/snapshot.results"

[ -n "$READERS" ] || exit 0
echo "readers: load average $(cut -d' ' -f1-3 /proc/loadavg) before" >&2
"$BENCH_DIR/readers" -addr "127.0.0.1:$MDB_PORT" -table bench.t -rows "$ROWS" -readers "$READERS" \
	-runs "$RUNS" -server-pid "$MDB_PID" >"$BENCH_DIR/readers.results"
echo "readers: load average $(cut -d' ' -f1-3 /proc/loadavg) after" >&2
awk -v rows="$ROWS" '
	function median(s,   n, a) { n = split(substr(s, 2), a, " "); asort(a); return a[int((n + 1) / 2)] }
	{ t[$2] = t[$2] " " $3; c[$2] = c[$2] " " $5; s[$2] = s[$2] " " $6 }
	END {
		for (k in t) {
			med = median(t[k])
			printf "%d reader(s)   median %6.2f s  %9.0f rows/s  client CPU %5.2f s  server CPU %5.2f s\n",
				k, med, rows / med, median(c[k]), median(s[k])
		}
	}' "$BENCH_DIR/readers.results"
sed 's/^/  run: /' "$BENCH_DIR/readers.results"
