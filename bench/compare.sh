#!/usr/bin/env bash
# bench/compare.sh measures binlogcdc against what users would pick
# instead, side by side on the same input and machine:
#
#   read      binlogcdc read FILE > /dev/null (full JSON lines)
#             vs mariadb-binlog --verbose --base64-output=DECODE-ROWS FILE > /dev/null
#             vs bench/goparse (go-mysql's BinlogParser, events discarded);
#             and binlogcdc's row changes per CPU-second (user+sys), also
#             on the 1M-row transaction (which spills to a temporary file)
#             and on the replay workload's binlog (bench/gen.sh replay)
#   catch-up  binlogcdc stream --from earliest on a server whose binlog is
#             FILE, vs binlogcdc read FILE: CPU-seconds into a pipe and
#             into a file with -o (bench/catchup), and the output checked
#             to be the same bytes. Alone: bench/compare.sh catchup
#   memory    peak RSS of binlogcdc read, on that file and on one 1M-row transaction
#   replay    binlogcdc read FILE --to mysql://… into a fresh MariaDB
#             vs mariadb-binlog FILE | mariadb into another fresh one,
#             with CHECKSUM TABLE of both
#   loaddata  binlogcdc read --to of 1M inserts + 100k updates + 10k
#             deletes (bench/gen.sh replay) vs LOAD DATA INFILE of the
#             table's final rows, each into a fresh server; wall and CPU
#             seconds, and the seconds the target's connection thread ran,
#             waited for a CPU and was blocked (its schedstat: on a busy
#             machine, the share of the wall time that is the machine's);
#             then the same with --parallel 2 (and, as its reference,
#             two LOAD DATA INFILE of halves of the rows at once), and with
#             --load-data (LOAD DATA INFILE measured again beside each,
#             and binlogcdc read of the binlog, whose CPU the replay's is
#             compared with). Alone: bench/compare.sh loaddata (REPLAY_FLAGS are
#             added to binlogcdc's arguments; RTX=1 for one-row
#             transactions instead of 1000-row ones; LD_SPLIT=1 also
#             replays into a third server in two runs, the inserts, then
#             the updates and deletes, and prints the CPU of each)
#             The same again on the bulk-load shape (RTX=50000: 50,000-row
#             INSERT ... SELECT transactions, one 100k-row UPDATE, one
#             DELETE), on one connection and with --parallel 2
#   snapshot  bench/snapshot.sh: binlogcdc snapshot vs mariadb-dump
#             --single-transaction of 1.5M rows (rows/s, server CPU)
#   memory    bench/memory.sh: peak RSS and CPU of recover at 300k / 1M /
#             3M rows (RECOVER_ROWS), beside the in-memory rebuild's CPU
#             (its SQL compared with cmp), and peak RSS of read / read
#             --to with a 200 MB row.
#             Alone: bench/compare.sh memory
#   live      binlogcdc stream: lag from commit to JSON line at a steady
#             rate (bench/lag), p50 and p99
#   summary   the scale targets of issues 15 and 26 (recover RSS, large-row
#             RSS, replay vs LOAD DATA on both shapes, replay CPU vs read
#             CPU, snapshot vs mariadb-dump, read rows per CPU-second on
#             each shape, stream vs read CPU, live lag, read's RSS), each
#             beside this run's figure: met or not
#
# It builds everything, generates the input with bench/gen.sh (cached in
# $BENCH_DIR, default /tmp/binlogcdc-bench), runs each pair $RUNS times
# (default 5), interleaved, and prints medians and ratios. Every server it
# starts is private (never the system MariaDB on 3306) and stopped at the
# end. Tunables: RUNS, REPLAY_RUNS (default RUNS), LAG_RATE (5000 rows/s),
# LAG_SECONDS (20).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

RUNS=${RUNS:-5}
REPLAY_RUNS=${REPLAY_RUNS:-$RUNS}
LAG_RATE=${LAG_RATE:-5000}
LAG_SECONDS=${LAG_SECONDS:-20}
BIN=$BENCH_DIR/bin
RES=$BENCH_DIR/results
LOG=$BENCH_DIR/compare.log
trap mdb_stop_all EXIT
trap 'exit 130' INT TERM

log() { echo "compare: $*" >&2; }

mkdir -p "$BIN"
rm -rf "$RES"
mkdir -p "$RES"
: >"$LOG"

# server_cpu PID: the server's user+system CPU seconds so far.
server_cpu() { awk '{printf "%.2f\n", ($14 + $15) / 100}' "/proc/$1/stat"; }

# sched_snap PID FILE: "tid on-CPU-ns run-queue-ns" of each of the
# server's threads (/proc/PID/task/TID/schedstat).
sched_snap() {
	local t
	for t in /proc/"$1"/task/*; do echo "${t##*/} $(cat "$t/schedstat" 2>/dev/null)"; done >"$2"
}
# conn_sched BEFORE AFTER WALL: of the server thread that ran most in
# between (the connection's; with --parallel, the busiest one), the
# seconds it ran, waited for a CPU, and was blocked (WALL less both:
# waiting for the client's next statement, or for I/O or a lock).
conn_sched() {
	awk -v w="$3" 'NR == FNR {c[$1] = $2; q[$1] = $3; next}
		{d = $2 - c[$1]; if (d > best) {best = d; rq = $3 - q[$1]}}
		END {printf "%.2f %.2f %.2f", best / 1e9, rq / 1e9, w - best / 1e9 - rq / 1e9}' "$1" "$2"
}

# loaddata: replay of the issue's workload (bench/gen.sh replay: 1M
# inserts, 100k updates, 10k deletes) vs LOAD DATA INFILE of the table's
# final rows, each into a fresh server of the same configuration, run
# back to back REPLAY_RUNS times; prints wall and CPU seconds of each
# (binlogcdc's own, and the target server's) and the ratio of the medians.
loaddata() {
	bench/gen.sh replay
	local d=$BENCH_DIR/data/replay-tx${RTX:-1000} i t0 t1 c0 c1 args tag=${LD_TAG:-}
	log "loaddata: $REPLAY_RUNS runs of each on $(basename "$d")/replay.binlog (load $(cut -d' ' -f1-3 /proc/loadavg))"
	for i in $(seq 1 "$REPLAY_RUNS"); do
		mdb_start "$BENCH_DIR/target-c"
		c0=$(server_cpu "$MDB_PID")
		sched_snap "$MDB_PID" "$RES/.s0"
		t0=$(date +%s.%N)
		args=(read "$d/replay.binlog" --to "mysql://root@127.0.0.1:$MDB_PORT/")
		/usr/bin/time -f '%U %S' -o "$RES/.c" "$BIN/binlogcdc" "${args[@]}" ${REPLAY_FLAGS:-} 2>>"$LOG" ||
			{ echo "compare: binlogcdc --to failed, see $LOG" >&2; exit 1; }
		t1=$(date +%s.%N)
		c1=$(server_cpu "$MDB_PID")
		sched_snap "$MDB_PID" "$RES/.s1"
		echo "$t0 $t1 $c0 $c1 $(cat "$RES/.c")" | awk '{printf "%.3f %.2f %.2f", $2-$1, $4-$3, $5+$6}' >>"$RES/ld-replay$tag"
		echo " $(conn_sched "$RES/.s0" "$RES/.s1" "$(tail -1 "$RES/ld-replay$tag" | cut -d' ' -f1)")" >>"$RES/ld-replay$tag"
		mdb -e 'CHECKSUM TABLE rb.t' | cut -f2 >>"$RES/ld-sum$tag"
		mdb_stop "$MDB_PID"
		# read of the same binlog, beside each replay: the replay CPU /
		# read CPU target compares the two as the host runs now (its
		# speed drifts: read took 0.48 and 0.78 CPU-s half an hour apart).
		/usr/bin/time -f '%U %S' -o "$RES/.r" "$BIN/binlogcdc" read "$d/replay.binlog" >/dev/null 2>>"$LOG" ||
			{ echo "compare: binlogcdc read failed, see $LOG" >&2; exit 1; }
		awk '{printf "%.2f\n", $1+$2}' "$RES/.r" >>"$RES/ld-read$tag"

		[ "${LD_SPLIT:-0}" = 1 ] && loaddata_split "$d" "$tag"

		mdb_start "$BENCH_DIR/target-d"
		mdb <"$d/schema.sql"
		c0=$(server_cpu "$MDB_PID")
		sched_snap "$MDB_PID" "$RES/.s0"
		t0=$(date +%s.%N)
		mdb -e "LOAD DATA INFILE '$d/final.tsv' INTO TABLE rb.t"
		t1=$(date +%s.%N)
		c1=$(server_cpu "$MDB_PID")
		sched_snap "$MDB_PID" "$RES/.s1"
		echo "$t0 $t1 $c0 $c1" | awk '{printf "%.3f %.2f 0", $2-$1, $4-$3}' >>"$RES/ld-load$tag"
		echo " $(conn_sched "$RES/.s0" "$RES/.s1" "$(tail -1 "$RES/ld-load$tag" | cut -d' ' -f1)")" >>"$RES/ld-load$tag"
		mdb -e 'CHECKSUM TABLE rb.t' | cut -f2 >>"$RES/ld-sum$tag"
		mdb_stop "$MDB_PID"
		case " ${REPLAY_FLAGS:-} " in *" --parallel "*) loaddata_halves "$d" "$tag" ;; esac
		log "loaddata run $i: replay $(tail -1 "$RES/ld-replay$tag"), LOAD DATA $(tail -1 "$RES/ld-load$tag") (wall, server CPU, binlogcdc CPU, and the server's connection thread: running, waiting for a CPU, blocked; load $(cut -d' ' -f1 /proc/loadavg))"
	done
	rm -rf "$BENCH_DIR/target-c" "$BENCH_DIR/target-d"
	local sums want
	sums=$(sort -u "$RES/ld-sum$tag")
	want=$(cat "$d/checksum")
	[ "$sums" = "$want" ] || { echo "compare: loaddata: CHECKSUM TABLE differs: source $want, targets $sums" >&2; exit 1; }
	local rw lw
	rw=$(median "$RES/ld-replay$tag")
	lw=$(median "$RES/ld-load$tag")
	local lw2=
	[ -s "$RES/ld-halves$tag" ] && lw2=$(median "$RES/ld-halves$tag")
	echo "ratio=$(ratio "$lw" "$rw") replay=$rw load=$lw halves_ratio=$(ratio "$lw" "$lw2") replay_cpu=$(median "$RES/ld-replay$tag" 3) replay_server_cpu=$(median "$RES/ld-replay$tag" 2) load_server_cpu=$(median "$RES/ld-load$tag" 2) read_cpu=$(median "$RES/ld-read$tag")" >"$RES/loaddata$tag.kv"
	local split= halves=
	[ -s "$RES/ld-halves$tag" ] && halves=$(printf '\n%s' \
		"$(row "LOAD DATA INFILE of two halves at once (two connections)" "$(median "$RES/ld-halves$tag")" "server $(median "$RES/ld-halves$tag" 2) s: $(ratio "$lw" "$(median "$RES/ld-halves$tag")")x one LOAD DATA's speed, the server's own gain from a second connection")")
	[ -s "$RES/ld-split$tag" ] && split=$(printf '\n%s\n%s' \
		"$(row "  of which the 1M inserts (run stopped before UPDATEs)" "" "server $(median "$RES/ld-split$tag" 1) s, binlogcdc $(median "$RES/ld-split$tag" 3) s")" \
		"$(row "  and the 110k updates and deletes (run resumed)" "" "server $(median "$RES/ld-split$tag" 2) s, binlogcdc $(median "$RES/ld-split$tag" 4) s")")
	cat <<-EOF
	replay of $(basename "$d")/replay.binlog ($(case ${RTX:-1000} in 1) echo "1.11M one-row transactions" ;; 1000) echo "transactions of 1000 inserts, 100 updates or 10 deletes" ;; *) echo "INSERT ... SELECT transactions of ${RTX} rows, one 100k-row UPDATE, one 10k-row DELETE" ;; esac)) vs LOAD DATA INFILE of its final rows (fresh servers, median of $REPLAY_RUNS; wall s, target server CPU s, binlogcdc CPU s)
	$(row "binlogcdc read --to mysql:// ${REPLAY_FLAGS:-}" "$rw" "server $(median "$RES/ld-replay$tag" 2) s, binlogcdc $(median "$RES/ld-replay$tag" 3) s")$split
	$(row "LOAD DATA INFILE" "$lw" "server $(median "$RES/ld-load$tag" 2) s")$halves
	  the target's connection thread (its busiest with --parallel): ran / waited for a CPU / blocked, s
	$(row "  binlogcdc read --to mysql://" "" "$(median "$RES/ld-replay$tag" 4) / $(median "$RES/ld-replay$tag" 5) / $(median "$RES/ld-replay$tag" 6)")
	$(row "  LOAD DATA INFILE" "" "$(median "$RES/ld-load$tag" 4) / $(median "$RES/ld-load$tag" 5) / $(median "$RES/ld-load$tag" 6)")
	$(row "binlogcdc read > /dev/null, beside each replay" "" "$(median "$RES/ld-read$tag") CPU-s: replay's CPU $(ratio "$(median "$RES/ld-replay$tag" 3)" "$(median "$RES/ld-read$tag")")x read's")
	  replay runs at $(ratio "$lw" "$rw")x LOAD DATA's speed; CHECKSUM TABLE rb.t equal to the source's ($want) on every target
	EOF
}

# loaddata_halves DIR TAG (with --parallel): the reference for a replay
# on two connections. The final rows in two halves (alternate runs of
# 1024 ids, so that each half fills pages of its own, as a replay's
# transactions of consecutive ids do), loaded at once by two LOAD DATA
# INFILE into a fresh server; appends "wall server_cpu" to
# $RES/ld-halves$TAG. Its speed against one LOAD DATA is what the server
# itself gains from a second connection on this machine.
loaddata_halves() {
	local d=$1 tag=$2 t0 t1 c0 c1 p
	if [ ! -s "$d/half-b.tsv" ] || [ "$d/half-b.tsv" -ot "$d/final.tsv" ]; then
		awk -F'\t' -v a="$d/half-a.tsv" -v b="$d/half-b.tsv" '{ if (int($1 / 1024) % 2) print > a; else print > b }' "$d/final.tsv"
	fi
	mdb_start "$BENCH_DIR/target-h"
	mdb <"$d/schema.sql"
	c0=$(server_cpu "$MDB_PID")
	t0=$(date +%s.%N)
	mdb -e "LOAD DATA INFILE '$d/half-a.tsv' INTO TABLE rb.t" &
	p=$!
	mdb -e "LOAD DATA INFILE '$d/half-b.tsv' INTO TABLE rb.t"
	wait "$p"
	t1=$(date +%s.%N)
	c1=$(server_cpu "$MDB_PID")
	echo "$t0 $t1 $c0 $c1" | awk '{printf "%.3f %.2f\n", $2-$1, $4-$3}' >>"$RES/ld-halves$tag"
	mdb -e 'CHECKSUM TABLE rb.t' | cut -f2 >>"$RES/ld-sum$tag"
	mdb_stop "$MDB_PID"
	rm -rf "$BENCH_DIR/target-h"
}

# loaddata_split DIR TAG (LD_SPLIT=1): the same replay into another fresh
# server in two runs, the first stopped before the first UPDATE (its 1M
# inserts), the second resumed from the checkpoint (the updates and
# deletes); appends "inserts_server rest_server inserts_binlogcdc
# rest_binlogcdc" CPU seconds to $RES/ld-split$TAG, to attribute the
# target's CPU between them.
loaddata_split() {
	local d=$1 tag=$2 c0 c1 c2 args
	mdb_start "$BENCH_DIR/target-e"
	args=(read "$d/replay.binlog" --to "mysql://root@127.0.0.1:$MDB_PORT/")
	c0=$(server_cpu "$MDB_PID")
	/usr/bin/time -f '%U %S' -o "$RES/.c1" "$BIN/binlogcdc" "${args[@]}" --stop-before 'UPDATE rb.t' ${REPLAY_FLAGS:-} 2>>"$LOG" ||
		{ echo "compare: binlogcdc --to --stop-before failed, see $LOG" >&2; exit 1; }
	c1=$(server_cpu "$MDB_PID")
	/usr/bin/time -f '%U %S' -o "$RES/.c2" "$BIN/binlogcdc" "${args[@]}" ${REPLAY_FLAGS:-} 2>>"$LOG" ||
		{ echo "compare: binlogcdc --to (resumed) failed, see $LOG" >&2; exit 1; }
	c2=$(server_cpu "$MDB_PID")
	echo "$c0 $c1 $c2 $(cat "$RES/.c1") $(cat "$RES/.c2")" | awk '{printf "%.2f %.2f %.2f %.2f\n", $2-$1, $3-$2, $4+$5, $6+$7}' >>"$RES/ld-split$tag"
	mdb -e 'CHECKSUM TABLE rb.t' | cut -f2 >>"$RES/ld-sum$tag"
	mdb_stop "$MDB_PID"
	rm -rf "$BENCH_DIR/target-e"
}

# catchup: binlogcdc stream --from earliest on a private server whose
# binlog is workload.binlog vs binlogcdc read of the file (bench/catchup),
# RUNS times; leaves its key=value line in $RES/catchup.
catchup() {
	local WL=$BENCH_DIR/data/workload.binlog
	log "catch-up: $RUNS runs of stream and read on a server whose binlog is $(basename "$WL") (load $(cut -d' ' -f1-3 /proc/loadavg))"
	# A server that holds the workload as its first binlog: a template with
	# the file in place (a server started on it reads its GTID state from it).
	mkdir -p "$BENCH_DIR/catchup-tpl"
	rm -rf "$BENCH_DIR/catchup-tpl/template"
	cp -a "$BENCH_DIR/template" "$BENCH_DIR/catchup-tpl/template"
	cp "$WL" "$BENCH_DIR/catchup-tpl/template/binlog.000001"
	echo ./binlog.000001 >"$BENCH_DIR/catchup-tpl/template/binlog.index"
	BENCH_DIR=$BENCH_DIR/catchup-tpl mdb_start "$BENCH_DIR/catchup-source" "${mdb_binlog_flags[@]}"
	"$BIN/catchup" -binlogcdc "$BIN/binlogcdc" -port "$MDB_PORT" -binlog "$BENCH_DIR/catchup-source/binlog.000001" \
		-runs "$RUNS" -dir "$BENCH_DIR" >"$RES/catchup" 2>>"$LOG" ||
		{ echo "compare: catchup failed, see $LOG" >&2; exit 1; }
	mdb_stop "$MDB_PID"
	rm -rf "$BENCH_DIR/catchup-source" "$BENCH_DIR/catchup-tpl"
	log "catch-up done (load $(cut -d' ' -f1-3 /proc/loadavg))"
}

# summary prints the scale targets (issues 15 and 26) beside this run's
# figures, each from the results above: met or not.
summary() {
	kv() { sed -n "s/.*\<$2=\([^ ]*\).*/\1/p" "$1" | tail -1; }
	verdict() { awk -v v="$1" -v t="$2" -v d="$3" 'BEGIN {ok = (d == "le") ? v <= t : v >= t; print ok ? "met" : "NOT met"}'; }
	perc() { awk -v r="$1" -v c="$2" 'BEGIN {if (c > 0) printf "%.0f", r/c; else print 0}'; }
	local rec rowmb lim k v r c
	rec=$(kv "$RES/memory.kv" recover_max_mib)
	rowmb=$(kv "$RES/memory.kv" bigrow_mib)
	lim=$(awk -v r="$rowmb" 'BEGIN {print 1.5*r+64}')
	echo
	echo "scale targets (issues 15 and 26), every figure from this run"
	row "recover peak RSS, largest of $(kv "$RES/memory.kv" recover_sizes) rows" "$rec MiB" "<= 128 MiB: $(verdict "$rec" 128 le)"
	rec=$(kv "$RES/memory.kv" bigtx_recover_max_mib)
	row "recover peak RSS, big transactions (bench/gen.sh bigtx)" "$rec MiB" "<= 128 MiB: $(verdict "$rec" 128 le)"
	rec=$(kv "$RES/memory.kv" recover_cpu_ratio)
	row "recover CPU on disk / in memory ($(kv "$RES/memory.kv" recover_cpu_rows) rows)" "${rec}x" "<= 1.5x: $(verdict "$rec" 1.5 le)"
	tr ' ' '\n' <"$RES/memory.kv" | sed -n 's/^bigrow_\(.*\)_mib=\(.*\)/\1 \2/p' | while read -r k v; do
		row "one $rowmb MiB row, peak RSS: $k" "$v MiB" "<= 1.5x row + 64 MiB: $(verdict "$v" "$lim" le)"
	done
	for k in "":"1000-row transactions, one connection":0.8 -parallel:"1000-row transactions, --parallel 2":1.0 \
		-bulk:"50,000-row INSERT ... SELECT, one connection":0.8 -bulkparallel:"50,000-row INSERT ... SELECT, --parallel 2":1.0; do
		IFS=: read -r tag r v <<<"$k"
		row "replay vs LOAD DATA INFILE: $r" "$(kv "$RES/loaddata$tag.kv" ratio)x" ">= ${v}x: $(verdict "$(kv "$RES/loaddata$tag.kv" ratio)" "$v" ge)"
		case $tag in *parallel) row "  two LOAD DATA of halves at once vs one (the server's own gain)" "$(kv "$RES/loaddata$tag.kv" halves_ratio)x" "(reference)" ;; esac
	done
	row "the same with --load-data (LOAD DATA LOCAL)" "$(kv "$RES/loaddata-loaddata.kv" ratio)x" "(for comparison)"
	c=$(ratio "$(kv "$RES/loaddata.kv" replay_cpu)" "$(kv "$RES/loaddata.kv" read_cpu)")
	row "replay CPU / read CPU, replay-tx1000/replay.binlog" "${c}x" "<= 2x: $(verdict "$c" 2 le)"
	c=$(ratio "$(kv "$RES/loaddata-bulk.kv" replay_cpu)" "$(kv "$RES/loaddata-bulk.kv" read_cpu)")
	row "replay CPU / read CPU, replay-tx50000/replay.binlog" "${c}x" "<= 2x: $(verdict "$c" 2 le)"
	r=$(ratio "$(snapv binlogcdc 3)" "$(snapv mariadb-dump 3)")
	row "snapshot rows/s / mariadb-dump's (${ROWS:-1500000} rows)" "${r}x" ">= 1.0x: $(verdict "$r" 1 ge)"
	c=$(ratio "$(snapv binlogcdc 6)" "$(snapv mariadb-dump 6)")
	row "snapshot server CPU / mariadb-dump's" "${c}x" "<= 1.1x: $(verdict "$c" 1.1 le)"
	r=$(perc "$wl_events" "$bc")
	row "read, row changes per CPU-s: one-row transactions" "$r" ">= 1.0M: $(verdict "$r" 1000000 ge)"
	r=$(perc 1000000 "$bigc")
	row "read, row changes per CPU-s: one 1M-row transaction" "$r" ">= 1.5M: $(verdict "$r" 1500000 ge)"
	r=$(perc "$btrows" "$btc")
	row "read, row changes per CPU-s: bench/gen.sh bigtx" "$r" ">= 2M: $(verdict "$r" 2000000 ge)"
	row "read, row changes per CPU-s: 1000-row transactions" "$(perc 1110000 "$rbc")" "(for comparison)"
	echo "no regressions (issue 26)"
	row "live lag p99 at $(lagv rate) rows/s" "$(lagv p99_ms) ms" "was 1.2 ms"
	row "stream catch-up CPU / read CPU (into a pipe)" "$(cuv ratio)x" "<= 1.5x: $(verdict "$(cuv ratio)" 1.5 le)"
	r=$(mib "$(maxcol "$RES/binlogcdc" 2)")
	row "peak RSS of read (workload.binlog)" "$r MiB" "<= 30 MiB: $(verdict "$r" 30 le)"
}

log "building binlogcdc, goparse, lag"
go build -o "$BIN/binlogcdc" ./cmd/binlogcdc
# The binary is written back and dropped from the page cache, so that the
# first run reads it back as it would an installed one. Just written by
# the linker, it sits in 2 MiB folios, which the kernel (6.18 here) maps
# whole on a fault: for minutes after a build nearly all of its 25 MiB of
# text, rodata and pclntab count in every run's RSS (read of
# workload.binlog: 34 MiB, 26 MiB read back), less and less as the folios
# are split. bench/memory.sh does the same.
sync "$BIN/binlogcdc" && dd if="$BIN/binlogcdc" iflag=nocache count=0 status=none
go build -o "$BIN/goparse" ./bench/goparse
go build -o "$BIN/lag" ./bench/lag
go build -o "$BIN/catchup" ./bench/catchup

# timed NAME CMD...: runs CMD (stdout to /dev/null, stderr to the log) and
# appends "seconds maxrss_kb user_s sys_s" to $RES/NAME.
timed() {
	local name=$1
	shift
	/usr/bin/time -f '%e %M %U %S' -o "$RES/.t" "$@" >/dev/null 2>>"$LOG" ||
		{ echo "compare: $name failed, see $LOG" >&2; exit 1; }
	cat "$RES/.t" >>"$RES/$name"
}

# median FILE [COLUMN]: the median of a column (1: seconds, 2: RSS).
median() {
	sort -n -k"${2:-1}","${2:-1}" "$1" | awk -v c="${2:-1}" '{v[NR]=$c} END {m=int((NR+1)/2); if (NR%2) print v[m]; else printf "%.3f\n", (v[m]+v[m+1])/2}'
}
# cpu FILE: the median CPU seconds (user+sys) of timed's runs.
cpu() {
	awk '{print $3+$4}' "$1" >"$1.cpu"
	median "$1.cpu"
}
maxcol() { awk -v c="$2" 'BEGIN{m=0} $c>m {m=$c} END {print m}' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b + 0 > 0) printf "%.2f", a/b; else print "n/a"}'; }
row() { printf '  %-54s %10s   %s\n' "$1" "$2" "${3:-}"; }
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k/1024}'; }

if [ "${1:-}" = memory ]; then
	bench/memory.sh
	exit 0
fi
if [ "${1:-}" = catchup ]; then
	bench/gen.sh
	catchup
	cat "$RES/catchup"
	exit 0
fi
if [ "${1:-}" = loaddata ]; then
	loaddata
	exit 0
fi

bench/gen.sh
WL=$BENCH_DIR/data/workload.binlog
BIG=$BENCH_DIR/data/bigtx.binlog
read -r wl_size wl_events <"$BENCH_DIR/data/info"

log "read: $RUNS runs of each on $(basename "$WL") ($wl_size bytes, $wl_events rows events)"
for i in $(seq 1 "$RUNS"); do
	timed binlogcdc "$BIN/binlogcdc" read "$WL"
	timed mariadb-binlog mariadb-binlog --verbose --base64-output=DECODE-ROWS "$WL"
	timed goparse "$BIN/goparse" "$WL"
done
bench/gen.sh replay
RB=$BENCH_DIR/data/replay-tx1000/replay.binlog
log "read: $RUNS runs on $(basename "$(dirname "$RB")")/$(basename "$RB") (1M inserts, 100k updates, 10k deletes)"
for i in $(seq 1 "$RUNS"); do
	timed replayread "$BIN/binlogcdc" read "$RB"
done
bench/gen.sh bigtx
BT=$BENCH_DIR/data/bigtx-recover/bigtx.binlog
btrows=$("$BIN/binlogcdc" read "$BT" 2>>"$LOG" | wc -l)
log "read: $RUNS runs on bigtx-recover/$(basename "$BT") ($btrows rows: 50,000-row and 1M-row INSERT ... SELECT, a 100k-row UPDATE, a DELETE)"
for i in $(seq 1 "$RUNS"); do
	timed bigtxrecover "$BIN/binlogcdc" read "$BT"
done
RTX=50000 bench/gen.sh replay
RBULK=$BENCH_DIR/data/replay-tx50000/replay.binlog
log "read: $RUNS runs on replay-tx50000/$(basename "$RBULK")"
for i in $(seq 1 "$RUNS"); do
	timed replaybulkread "$BIN/binlogcdc" read "$RBULK"
done
log "memory: $RUNS runs on $(basename "$BIG") (one transaction of 1M rows)"
for i in $(seq 1 "$RUNS"); do
	timed bigtx "$BIN/binlogcdc" read "$BIG"
done

log "replay: $REPLAY_RUNS runs of each into fresh servers"
src_sum=$(cat "$BENCH_DIR/data/checksum")
for i in $(seq 1 "$REPLAY_RUNS"); do
	mdb_start "$BENCH_DIR/target-a"
	t0=$(date +%s.%N)
	"$BIN/binlogcdc" read "$WL" --to "mysql://root@127.0.0.1:$MDB_PORT/" 2>>"$LOG"
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{printf "%.3f\n", $2-$1}' >>"$RES/replay-binlogcdc"
	mdb -e 'CHECKSUM TABLE bench.orders' | cut -f2 >>"$RES/sum-binlogcdc"
	mdb_stop "$MDB_PID"

	mdb_start "$BENCH_DIR/target-b"
	t0=$(date +%s.%N)
	mariadb-binlog "$WL" | mariadb --no-defaults -h127.0.0.1 -P"$MDB_PORT" -uroot 2>>"$LOG"
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{printf "%.3f\n", $2-$1}' >>"$RES/replay-mariadb"
	mdb -e 'CHECKSUM TABLE bench.orders' | cut -f2 >>"$RES/sum-mariadb"
	mdb_stop "$MDB_PID"
done
rm -rf "$BENCH_DIR/target-a" "$BENCH_DIR/target-b"
sums=$(sort -u "$RES/sum-binlogcdc" "$RES/sum-mariadb")
if [ "$sums" = "$src_sum" ]; then
	sum_ok="identical on every target and equal to the source's ($src_sum)"
else
	sum_ok="DIFFERENT: source $src_sum, binlogcdc $(sort -u "$RES/sum-binlogcdc" | tr '\n' ' '), mariadb $(sort -u "$RES/sum-mariadb" | tr '\n' ' ')"
fi

ld=$(loaddata)
ldp=$(REPLAY_FLAGS="--parallel 2" LD_TAG=-parallel loaddata)
ldl=$(REPLAY_FLAGS="--load-data" LD_TAG=-loaddata loaddata)
ldb=$(RTX=50000 LD_TAG=-bulk loaddata)
ldbp=$(RTX=50000 REPLAY_FLAGS="--parallel 2" LD_TAG=-bulkparallel loaddata)
log "snapshot: bench/snapshot.sh, $RUNS runs (load $(cut -d' ' -f1-3 /proc/loadavg))"
READERS= RUNS=$RUNS bench/snapshot.sh >"$RES/snapshot" 2>>"$LOG" ||
	{ echo "compare: snapshot failed, see $LOG" >&2; exit 1; }
# snapv NAME FIELD: a field of bench/snapshot.sh's median line for NAME
# ($3 seconds, $5 rows/s, $9 peak RSS, $12 CPU, $16 server CPU).
snapv() {
	local f
	case $2 in 3) f=5 ;; 6) f=16 ;; *) f=$2 ;; esac
	awk -v n="$1" -v f="$f" '$1 == n && $2 == "median" {print $f}' "$RES/snapshot"
}
mem=$(MEM_KV=$RES/memory.kv bench/memory.sh)

catchup
cu=$(cat "$RES/catchup")
cuv() { echo "$cu" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

log "live: ${LAG_SECONDS}s at $LAG_RATE rows/s"
mdb_start "$BENCH_DIR/lag-source" "${mdb_binlog_flags[@]}"
"$BIN/lag" -binlogcdc "$BIN/binlogcdc" -port "$MDB_PORT" -rate "$LAG_RATE" -duration "${LAG_SECONDS}s" >"$RES/lag" 2>>"$LOG" ||
	{ echo "compare: lag failed, see $LOG" >&2; exit 1; }
mdb_stop "$MDB_PID"
rm -rf "$BENCH_DIR/lag-source"
lag=$(cat "$RES/lag")
lagv() { echo "$lag" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

b=$(median "$RES/binlogcdc")
bc=$(cpu "$RES/binlogcdc")
bigc=$(cpu "$RES/bigtx")
rbc=$(cpu "$RES/replayread")
rbulkc=$(cpu "$RES/replaybulkread")
btc=$(cpu "$RES/bigtxrecover")
m=$(median "$RES/mariadb-binlog")
g=$(median "$RES/goparse")
rb=$(median "$RES/replay-binlogcdc")
rm_=$(median "$RES/replay-mariadb")
cat <<EOF

== binlogcdc benchmark ($(date -u +%Y-%m-%d))
machine:  $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo) RAM
software: $(go version | cut -d' ' -f3), $(mariadbd --no-defaults --version | sed 's/.*Ver \([^ ]*\).*/MariaDB \1/'), binlogcdc $(git describe --always --dirty 2>/dev/null || echo '?')
input:    $(basename "$WL"): $(mib $((wl_size / 1024))) MiB, $wl_events rows events (single-row autocommit INSERT/UPDATE/DELETE)
          $(basename "$BIG"): $(mib $(($(stat -c %s "$BIG") / 1024))) MiB, one transaction of 1000000 rows

read (median of $RUNS, seconds)
$(row "binlogcdc read > /dev/null" "$b")
$(row "mariadb-binlog --verbose --base64-output=DECODE-ROWS" "$m" "binlogcdc $(ratio "$m" "$b")x faster")
$(row "goparse (go-mysql BinlogParser, events discarded)" "$g" "binlogcdc $(ratio "$g" "$b")x faster")

binlogcdc read, row changes per CPU-second (user+sys, median of $RUNS)
$(row "$(basename "$WL") ($wl_events rows, one per transaction)" "$(awk -v r="$wl_events" -v c="$bc" 'BEGIN {printf "%.0f", r/c}')" "$bc CPU-s")
$(row "$(basename "$BIG") (1M rows in one transaction)" "$(awk -v c="$bigc" 'BEGIN {printf "%.0f", 1000000/c}')" "$bigc CPU-s")
$(row "replay-tx1000/replay.binlog (1.11M rows, 1000 a transaction)" "$(awk -v c="$rbc" 'BEGIN {printf "%.0f", 1110000/c}')" "$rbc CPU-s")
$(row "replay-tx50000/replay.binlog (1.11M rows, bulk transactions)" "$(awk -v c="$rbulkc" 'BEGIN {printf "%.0f", 1110000/c}')" "$rbulkc CPU-s")
$(row "bigtx-recover/bigtx.binlog ($btrows rows, bench/gen.sh bigtx)" "$(awk -v r="$btrows" -v c="$btc" 'BEGIN {printf "%.0f", r/c}')" "$btc CPU-s")

stream --from earliest catching up on $(basename "$WL") vs read of it (CPU-s, median of $RUNS; same output)
$(row "into a pipe: stream / read" "$(cuv stream) / $(cuv read)" "stream $(cuv ratio)x read's CPU")
$(row "into a file (-o): stream / read" "$(cuv stream_o) / $(cuv read_o)" "stream $(cuv ratio_o)x read's CPU")

peak RSS of binlogcdc read (max of $RUNS)
$(row "$(basename "$WL")" "$(mib "$(maxcol "$RES/binlogcdc" 2)") MiB")
$(row "$(basename "$BIG") (1M-row transaction)" "$(mib "$(maxcol "$RES/bigtx" 2)") MiB" "read in $(median "$RES/bigtx") s (median)")

replay into a fresh MariaDB (median of $REPLAY_RUNS, seconds)
$(row "binlogcdc read --to mysql://" "$rb")
$(row "mariadb-binlog | mariadb" "$rm_" "binlogcdc $(ratio "$rm_" "$rb")x faster")
  CHECKSUM TABLE bench.orders: $sum_ok

$ld

$ldp

$ldl

$ldb

$ldbp

snapshot of ${ROWS:-1500000} rows (bench/snapshot.sh, median of $RUNS)
$(grep median "$RES/snapshot" | sed 's/^/  /')

$mem

live: binlogcdc stream, commit to JSON line, $(lagv rows) rows at $(lagv rate) rows/s
  p50 $(lagv p50_ms) ms   p90 $(lagv p90_ms) ms   p99 $(lagv p99_ms) ms   max $(lagv max_ms) ms
EOF
summary
