#!/usr/bin/env bash
# bench/memory.sh measures peak RSS where memory could grow with the data:
#
#   recover   binlogcdc recover --table rb.t --incarnation 1 -o FILE of the
#             issue's workload (bench/gen.sh replay: RN inserts, RN/10
#             updates, RN/100 deletes, 6 columns) at each RN of
#             $RECOVER_ROWS (default "300000 1000000 3000000"): it must
#             stay flat; with INMEM=1 (the default), also the same
#             recover with --memory-budget 1000000 (all rows in memory:
#             about 0.8 GB per million rows), for its CPU, and cmp of
#             the two outputs (they must be the same bytes)
#   bigtx     recover -o FILE of bench/gen.sh bigtx: a table filled by 20
#             INSERT … SELECT of 50,000 rows, then a 100,000-row UPDATE and
#             a DELETE, and one of one 1M-row INSERT … SELECT; on disk and
#             in memory (peak RSS, CPU; the outputs compared with cmp)
#   large row binlogcdc read FILE > /dev/null, read FILE --to mysql://,
#             read --format sql|debezium|maxwell|canal -o OUT, recover
#             -o OUT (rows on disk, and in memory with --memory-budget
#             1000) and recover --to mysql:// of one INSERT of a
#             $BIG_ROW_MB MB (default 200) LONGBLOB row: each should stay
#             within twice the row and a constant
#   wide      read FILE --to mysql:// on one connection and --parallel 2
#             of rows of 100 KB and of rows of 200 columns (below)
#
# Prints one line per measurement. Inputs are cached under $BENCH_DIR.
# Run alone (bench/memory.sh) or from bench/compare.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

RECOVER_ROWS=${RECOVER_ROWS:-300000 1000000 3000000}
BIG_ROW_MB=${BIG_ROW_MB:-200}
BIN=$BENCH_DIR/bin
trap mdb_stop_all EXIT
trap 'exit 130' INT TERM
log() { echo "memory: $*" >&2; }
mkdir -p "$BIN"
go build -o "$BIN/binlogcdc" ./cmd/binlogcdc
# Read back from disk on the first run, as an installed binary (see compare.sh).
sync "$BIN/binlogcdc" && dd if="$BIN/binlogcdc" iflag=nocache count=0 status=none
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k/1024}'; }

# kvout KEY=VALUE…: machine-readable results for bench/compare.sh.
kvout() { echo "$*" >>"${MEM_KV:-/dev/null}"; }
recmax=0
echo "peak RSS (MiB; wall s and CPU s are as loaded as the machine: $(cut -d' ' -f1-3 /proc/loadavg))"
for n in $RECOVER_ROWS; do
	d=$BENCH_DIR/recover-$n
	RN=$n BENCH_DIR=$d bench/gen.sh replay
	bl=$d/data/replay-tx1000/replay.binlog
	log "recover of $n rows ($(stat -c %s "$bl") bytes of binlog)"
	/usr/bin/time -f '%M %e %U %S' -o "$d/time" "$BIN/binlogcdc" recover --table rb.t --incarnation 1 -o "$d/recovered.sql" "$bl" 2>"$d/recover.log" ||
		{ cat "$d/recover.log" >&2; exit 1; }
	read -r rss wall usr sys <"$d/time"
	diskcpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN {print u+s}')
	recmax=$(awk -v a="$recmax" -v b="$(mib "$rss")" 'BEGIN {print (b > a) ? b : a}')
	printf '  recover, %8d inserts + %7d updates + %6d deletes  %7s MiB   %s s wall, %s CPU-s, %s MB of SQL\n' \
		"$n" $((n / 10)) $((n / 100)) "$(mib "$rss")" "$wall" "$(awk -v u="$usr" -v s="$sys" 'BEGIN {print u+s}')" $(($(stat -c %s "$d/recovered.sql") / 1000000))
	if [ "${INMEM:-1}" = 1 ]; then
		log "recover of $n rows in memory"
		/usr/bin/time -f '%M %e %U %S' -o "$d/time" "$BIN/binlogcdc" recover --table rb.t --incarnation 1 --memory-budget 1000000 -o "$d/recovered-mem.sql" "$bl" 2>"$d/recover.log" ||
			{ cat "$d/recover.log" >&2; exit 1; }
		cmp -s "$d/recovered.sql" "$d/recovered-mem.sql" || { echo "memory: recover of $n rows: the on-disk store's SQL differs from the in-memory rebuild's" >&2; exit 1; }
		read -r rss wall usr sys <"$d/time"
		printf '    the same, all rows in memory (--memory-budget 1000000)      %7s MiB   %s s wall, %s CPU-s, the same SQL (cmp)\n' \
			"$(mib "$rss")" "$wall" "$(awk -v u="$usr" -v s="$sys" 'BEGIN {print u+s}')"
		kvout "recover_cpu_ratio=$(awk -v d="$diskcpu" -v u="$usr" -v s="$sys" 'BEGIN {printf "%.2f", d/(u+s)}') recover_cpu_rows=$n"
	fi
	rm -f "$d/recovered.sql" "$d/recovered-mem.sql"
done

kvout "recover_max_mib=$recmax recover_sizes=$(echo "$RECOVER_ROWS" | tr ' ' /)"

# Big transactions (issue 26): bench/gen.sh bigtx, recover -o FILE of
# bt.bulk (20 INSERT … SELECT of 50,000 rows, a 100,000-row UPDATE, a
# 10,000-row DELETE) and bt.one (one INSERT … SELECT of 1M rows), on disk
# (default --memory-budget) and in memory (--memory-budget 1000000): peak
# RSS, CPU (user+sys) and cmp of the two outputs.
bench/gen.sh bigtx
bt=$BENCH_DIR/data/bigtx-recover
btmax=0
for tb in bulk one; do
	for budget in 16 1000000; do
		/usr/bin/time -f '%M %e %U %S' -o "$bt/time" "$BIN/binlogcdc" recover --table bt.$tb --memory-budget $budget -o "$bt/$tb-$budget.sql" "$bt/bigtx.binlog" 2>"$bt/recover.log" ||
			{ cat "$bt/recover.log" >&2; exit 1; }
		read -r rss wall usr sys <"$bt/time"
		cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN {print u+s}')
		printf '  recover bt.%-4s (%s) --memory-budget %-7s %7s MiB   %s s wall, %s CPU-s\n' $tb \
			"$([ $tb = bulk ] && echo "20 x 50,000-row INSERT ... SELECT, 100k UPDATE, DELETE" || echo "one 1M-row INSERT ... SELECT")" $budget "$(mib "$rss")" "$wall" "$cpu"
		kvout "bigtx_${tb}_budget${budget}_mib=$(mib "$rss") bigtx_${tb}_budget${budget}_cpu=$cpu"
		[ $budget = 16 ] && btmax=$(awk -v a="$btmax" -v b="$(mib "$rss")" 'BEGIN {print (b > a) ? b : a}')
	done
	cmp -s "$bt/$tb-16.sql" "$bt/$tb-1000000.sql" || { echo "memory: recover of bt.$tb: the on-disk store's SQL differs from the in-memory rebuild's" >&2; exit 1; }
	rm -f "$bt/$tb-16.sql" "$bt/$tb-1000000.sql"
done
kvout "bigtx_recover_max_mib=$btmax"

d=$BENCH_DIR/bigrow-$BIG_ROW_MB
big=(--max-allowed-packet=1G)
if [ ! -f "$d/big.binlog" ]; then
	log "generating a binlog with one $BIG_ROW_MB MB row"
	mdb_start "$BENCH_DIR/bigrow-src" "${mdb_binlog_flags[@]}" "${big[@]}"
	mdb -e 'FLUSH BINARY LOGS'
	f=$(mdb -e 'SHOW MASTER STATUS' | cut -f1)
	mdb -e "CREATE DATABASE big; CREATE TABLE big.t (id INT PRIMARY KEY, b LONGBLOB); INSERT INTO big.t VALUES (1, REPEAT('x', $BIG_ROW_MB * 1048576));"
	mdb -e 'FLUSH BINARY LOGS'
	mkdir -p "$d"
	cp "$BENCH_DIR/bigrow-src/$f" "$d/big.binlog"
	mdb_stop "$MDB_PID"
	rm -rf "$BENCH_DIR/bigrow-src"
fi
/usr/bin/time -f '%M' -o "$d/time" "$BIN/binlogcdc" read "$d/big.binlog" >/dev/null 2>"$d/read.log" || { cat "$d/read.log" >&2; exit 1; }
printf '  read > /dev/null, one %d MB LONGBLOB row                  %7s MiB\n' "$BIG_ROW_MB" "$(mib "$(cat "$d/time")")"
kvout "bigrow_mib=$BIG_ROW_MB bigrow_read_mib=$(mib "$(cat "$d/time")")"
for f in sql debezium maxwell canal; do
	/usr/bin/time -f '%M' -o "$d/time" "$BIN/binlogcdc" read "$d/big.binlog" --format $f -o "$d/out" 2>"$d/read.log" || { cat "$d/read.log" >&2; exit 1; }
	printf '  read --format %-8s -o FILE, one %d MB row             %7s MiB   (%d MB written)\n' $f "$BIG_ROW_MB" "$(mib "$(cat "$d/time")")" $(($(stat -c %s "$d/out") / 1000000))
	kvout "bigrow_${f}_mib=$(mib "$(cat "$d/time")")"
done
for budget in 16 1000; do
	/usr/bin/time -f '%M' -o "$d/time" "$BIN/binlogcdc" recover --table big.t --incarnation 1 --memory-budget $budget -o "$d/out" "$d/big.binlog" 2>"$d/recover.log" ||
		{ cat "$d/recover.log" >&2; exit 1; }
	printf '  recover -o FILE --memory-budget %-4s, one %d MB row       %7s MiB   (%d MB of SQL)\n' $budget "$BIG_ROW_MB" "$(mib "$(cat "$d/time")")" $(($(stat -c %s "$d/out") / 1000000))
	kvout "bigrow_recover_budget${budget}_mib=$(mib "$(cat "$d/time")")"
done
rm -f "$d/out"
mdb_start "$BENCH_DIR/bigrow-dst" "${big[@]}"
/usr/bin/time -f '%M' -o "$d/time" "$BIN/binlogcdc" read "$d/big.binlog" --to "mysql://root@127.0.0.1:$MDB_PORT/" 2>"$d/to.log" || { cat "$d/to.log" >&2; exit 1; }
printf '  read --to mysql://, one %d MB LONGBLOB row                %7s MiB   (target: LENGTH %s)\n' "$BIG_ROW_MB" "$(mib "$(cat "$d/time")")" "$(mdb -e 'SELECT LENGTH(b) FROM big.t')"
kvout "bigrow_to_mib=$(mib "$(cat "$d/time")")"
mdb -e 'DROP DATABASE big; DROP DATABASE IF EXISTS binlogcdc'
/usr/bin/time -f '%M' -o "$d/time" "$BIN/binlogcdc" recover --table big.t --incarnation 1 --to "mysql://root@127.0.0.1:$MDB_PORT/" "$d/big.binlog" 2>"$d/to.log" || { cat "$d/to.log" >&2; exit 1; }
printf '  recover --to mysql://, one %d MB LONGBLOB row             %7s MiB   (target: LENGTH %s)\n' "$BIG_ROW_MB" "$(mib "$(cat "$d/time")")" "$(mdb -e 'SELECT LENGTH(b) FROM big.t')"
kvout "bigrow_recover_to_mib=$(mib "$(cat "$d/time")")"
mdb_stop "$MDB_PID"
rm -rf "$BENCH_DIR/bigrow-dst"

# Wide rows: peak RSS of read --to mysql:// on one connection and with
# --parallel 2, of 3,000 rows of 100 KB (a MEDIUMTEXT) in 10-row
# transactions, and of 20,000 200-column rows in 100-row transactions
# (then 10,000 updated, 5,000 deleted). Each is under --parallel's
# bounds of a transaction queued whole (1000 rows, 4 MiB), so it is
# queued for a worker whole, and what a worker's queue holds is bounded
# by its bytes as well as by its count of jobs.
d=$BENCH_DIR/wide
if [ ! -f "$d/fat.binlog" ] || [ ! -f "$d/wide.binlog" ]; then
	log "generating binlogs of wide rows"
	mkdir -p "$d"
	mdb_start "$BENCH_DIR/wide-src" "${mdb_binlog_flags[@]}"
	mdb -e 'FLUSH BINARY LOGS'
	f=$(mdb -e 'SHOW MASTER STATUS' | cut -f1)
	mdb -e "CREATE DATABASE f; CREATE TABLE f.t (id INT PRIMARY KEY, a INT, m MEDIUMTEXT)"
	for s in $(seq 0 10 2999); do
		echo "INSERT INTO t SELECT seq, seq, REPEAT(CHAR(65 + seq % 26), 100000) FROM seq_$((s + 1))_to_$((s + 10));"
	done | mdb f
	mdb -e 'FLUSH BINARY LOGS'
	cp "$BENCH_DIR/wide-src/$f" "$d/fat.binlog"
	f=$(mdb -e 'SHOW MASTER STATUS' | cut -f1)
	cols="id INT PRIMARY KEY" sel=seq
	for i in $(seq 1 200); do
		case $((i % 5)) in
		0) cols="$cols, c$i INT" sel="$sel, seq*$i" ;;
		1) cols="$cols, c$i VARCHAR(20)" sel="$sel, CONCAT('v', seq, '-', $i)" ;;
		2) cols="$cols, c$i DECIMAL(10,2)" sel="$sel, seq/100" ;;
		3) cols="$cols, c$i DATETIME" sel="$sel, '2024-01-01' + INTERVAL seq SECOND" ;;
		4) cols="$cols, c$i BIGINT" sel="$sel, NULL" ;;
		esac
	done
	mdb -e "CREATE DATABASE w; CREATE TABLE w.t ($cols)"
	for s in $(seq 0 100 19999); do
		echo "INSERT INTO t SELECT $sel FROM seq_$((s + 1))_to_$((s + 100));"
	done | mdb w
	mdb -e "UPDATE w.t SET c5 = c5 + 1 WHERE id % 2 = 0; DELETE FROM w.t WHERE id % 4 = 0"
	mdb -e 'FLUSH BINARY LOGS'
	cp "$BENCH_DIR/wide-src/$f" "$d/wide.binlog"
	mdb_stop "$MDB_PID"
	rm -rf "$BENCH_DIR/wide-src"
fi
for b in fat wide; do
	for par in 1 2; do
		mdb_start "$BENCH_DIR/wide-dst"
		/usr/bin/time -f '%M' -o "$d/time" "$BIN/binlogcdc" read "$d/$b.binlog" --to "mysql://root@127.0.0.1:$MDB_PORT/" --parallel $par 2>"$d/to.log" ||
			{ cat "$d/to.log" >&2; exit 1; }
		case $b in
		fat) what="3,000 rows of 100 KB, 10 a transaction" ;;
		wide) what="20,000 rows of 200 columns, 100 a tx" ;;
		esac
		printf '  read --to mysql:// --parallel %d, %-38s %7s MiB\n' $par "$what" "$(mib "$(cat "$d/time")")"
		kvout "${b}_parallel${par}_mib=$(mib "$(cat "$d/time")")"
		mdb_stop "$MDB_PID"
		rm -rf "$BENCH_DIR/wide-dst"
	done
done
