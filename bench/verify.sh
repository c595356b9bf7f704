#!/usr/bin/env bash
# bench/verify.sh sets binlogcdc verify beside what users run to prove a
# copy equal: CHECKSUM TABLE on both servers and pt-table-checksum
# (Debian package percona-toolkit), on two private MariaDB servers.
#
#   anchor  tables that differ on the two servers in ways pt-table-checksum
#           does not see (its row checksum is CRC32(CONCAT_WS('#', col...,
#           CONCAT(ISNULL(col)...))) with text columns CONVERTed to utf8mb4,
#           folded per chunk with BIT_XOR): '#' in a value, the ENUM ''
#           member against the error value, SET('','x') 1 against 0,
#           duplicate rows in a table without a key, a FLOAT's seventh
#           digit, another character set. pt-table-checksum runs on each
#           server alone (--recursion-method none) and its per-chunk
#           this_cnt/this_crc are compared: what a replica would compute.
#   speed   two equal tables of ROWS rows (default 1.5M; BIGINT key, INT,
#           VARCHAR, DATETIME, DECIMAL, TEXT, DOUBLE): CHECKSUM TABLE on one
#           server then the other and on both at once, pt-table-checksum on
#           one then the other, and binlogcdc verify (both sides at once),
#           RUNS times (default 3) interleaved; wall seconds, the servers'
#           CPU seconds, the client's CPU seconds and peak RSS (medians),
#           and verify's peak RSS at ROWS/10 rows (memory flat with size).
#
# The servers and the machine are shared with whatever else runs: the
# load average is printed beside the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
export BENCH_DIR=${BENCH_DIR:-/tmp/binlogcdc-bench-verify}
source bench/lib.sh
trap mdb_stop_all EXIT
trap 'exit 130' INT TERM
ROWS=${ROWS:-1500000}
RUNS=${RUNS:-3}
BIN=$BENCH_DIR/bin
RES=$BENCH_DIR/results
mkdir -p "$BIN" "$RES"
rm -f "$RES"/*
command -v pt-table-checksum >/dev/null || { echo "verify.sh: pt-table-checksum not found (apt-get install percona-toolkit)" >&2; exit 1; }
go build -o "$BIN/binlogcdc" ./cmd/binlogcdc

mdb_start "$BENCH_DIR/src" --log-bin=binlog && SP=$MDB_PORT SPID=$MDB_PID
mdb_start "$BENCH_DIR/dst" --log-bin=binlog && DP=$MDB_PORT DPID=$MDB_PID
q() { local p=$1; shift; mariadb --no-defaults -h127.0.0.1 -P"$p" -uroot --batch --skip-column-names "$@"; }
pt() { pt-table-checksum "h=127.0.0.1,P=$1,u=root" --databases "$2" --replicate "$2_pt.checksums" --create-replicate-table \
	--recursion-method none --no-check-binlog-format --no-check-replication-filters >/dev/null 2>&1; }
verify() { "$BIN/binlogcdc" verify --source "mysql://root@127.0.0.1:$SP" --to "mysql://root@127.0.0.1:$DP/" --tables "$1.*"; }

echo "== anchor: pt-table-checksum and binlogcdc verify on tables that differ"
q "$SP" -e "CREATE DATABASE anchor"
q "$DP" -e "CREATE DATABASE anchor"
#      table  definition                                  source rows          target rows
cases=(
	"sep|id INT PRIMARY KEY, a VARCHAR(10), b VARCHAR(10)|(1, 'a#', 'b')|(1, 'a', '#b')"
	"enums|id INT PRIMARY KEY, e ENUM('', 'a')|(1, '')|(1, 'bogus')"
	"sets|id INT PRIMARY KEY, s SET('', 'x')|(1, 1)|(1, 0)"
	"dups|a INT|(1), (1)|(2), (2)"
	"flt|id INT PRIMARY KEY, f FLOAT|(1, 1.0000001)|(1, 1.0000002)"
	"cset|id INT PRIMARY KEY, s VARCHAR(10) CHARACTER SET latin1|(1, 'x')|(1, 'x')"
)
for c in "${cases[@]}"; do
	IFS='|' read -r t def sr dr <<<"$c"
	[ "$t" = cset ] && ddef="id INT PRIMARY KEY, s VARCHAR(10) CHARACTER SET utf8mb4" || ddef=$def
	q "$SP" anchor -e "CREATE TABLE $t ($def); INSERT INTO $t VALUES $sr"
	q "$DP" anchor -e "SET sql_mode = ''; CREATE TABLE $t ($ddef); INSERT INTO $t VALUES $dr"
done
pt "$SP" anchor
pt "$DP" anchor
vout=$(verify anchor || true)
printf '%-6s %-60s %-30s %s\n' table "difference" "pt-table-checksum" "binlogcdc verify"
for c in "${cases[@]}"; do
	IFS='|' read -r t def sr dr <<<"$c"
	a=$(q "$SP" -e "SELECT GROUP_CONCAT(this_cnt, ':', this_crc ORDER BY chunk) FROM anchor_pt.checksums WHERE tbl = '$t'")
	b=$(q "$DP" -e "SELECT GROUP_CONCAT(this_cnt, ':', this_crc ORDER BY chunk) FROM anchor_pt.checksums WHERE tbl = '$t'")
	[ "$a" = "$b" ] && ptv="equal (fooled)" || ptv="differs"
	grep -q "^DIFFERS \`anchor\`.\`$t\`" <<<"$vout" && vv="differs" || vv="equal (fooled)"
	[ "$t" = cset ] && what="latin1 against utf8mb4" || what="$sr against $dr"
	printf '%-6s %-60s %-30s %s\n' "$t" "$what" "$ptv" "$vv"
done

echo
echo "== speed: $ROWS equal rows on each server"
fill() {
	q "$1" -e "CREATE DATABASE IF NOT EXISTS speed"
	q "$1" speed -e "DROP TABLE IF EXISTS t; CREATE TABLE t (id BIGINT PRIMARY KEY, a INT NOT NULL, b VARCHAR(64), c DATETIME, d DECIMAL(12,2), e TEXT, f DOUBLE);
		INSERT INTO t SELECT seq, seq * 7 % 100000, CONCAT('name-', seq, '-', REPEAT('x', seq % 20)), '2024-01-01' + INTERVAL seq SECOND,
		seq / 100, IF(seq % 5, REPEAT('lorem ipsum ', seq % 10), NULL), seq / 3 FROM seq_1_to_$2"
}
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # clock ticks
hz=$(getconf CLK_TCK)
# measure NAME 'COMMANDS': wall s, servers' CPU s, client CPU s (bash,
# mariadb, perl or binlogcdc) and the client's peak RSS KiB.
measure() {
	local name=$1 s0 d0 t0 t1
	s0=$(cpu "$SPID") d0=$(cpu "$DPID") t0=$(date +%s.%N)
	/usr/bin/time -f "%U %S %M" -o "$RES/time" bash -c "$2" >/dev/null 2>&1 || true
	t1=$(date +%s.%N)
	read -r u sy rss <"$RES/time"
	echo "$(echo "$t1 - $t0" | bc) $(echo "($(cpu "$SPID") - $s0 + $(cpu "$DPID") - $d0) / $hz" | bc -l) $(echo "$u + $sy" | bc) $rss" >>"$RES/$name"
}
median() { sort -n -k"${2:-1}" "$RES/$1" | awk -v k="${2:-1}" '{v[NR] = $k} END {printf "%.2f", v[int((NR + 1) / 2)]}'; }
checksum_seq() { q "$SP" -e "CHECKSUM TABLE speed.t" && q "$DP" -e "CHECKSUM TABLE speed.t"; }
checksum_par() { q "$SP" -e "CHECKSUM TABLE speed.t" & local p=$!; q "$DP" -e "CHECKSUM TABLE speed.t"; wait "$p"; }
pt_seq() { pt "$SP" speed && pt "$DP" speed; }
export -f q pt checksum_seq checksum_par pt_seq verify
export SP DP BIN

# (wait on the one job: a bare wait would wait for the servers too)
fill "$SP" "$((ROWS / 10))" & f=$!; fill "$DP" "$((ROWS / 10))"; wait "$f"
measure small-verify "verify speed"
fill "$SP" "$ROWS" & f=$!; fill "$DP" "$ROWS"; wait "$f"
verify speed >/dev/null # warm both buffer pools
for i in $(seq 1 "$RUNS"); do
	measure checksum-seq checksum_seq
	measure checksum-par checksum_par
	measure pt-seq pt_seq
	measure verify "verify speed"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores (shared machine)"
printf '%-46s %8s %12s %12s %10s\n' "medians of $RUNS" "wall s" "servers CPU" "client CPU" "RSS MiB"
for n in checksum-seq checksum-par pt-seq verify; do
	printf '%-46s %8s %12s %12s %10s\n' "$n" "$(median "$n" 1)" "$(median "$n" 2)" "$(median "$n" 3)" "$(awk '{printf "%.0f", $1 / 1024}' <<<"$(median "$n" 4)")"
done
cw=$(median checksum-seq 1)
printf 'verify / CHECKSUM TABLE one side then the other: %.2fx wall, %.2fx servers CPU\n' \
	"$(echo "$(median verify 1) / $cw" | bc -l)" "$(echo "$(median verify 2) / $(median checksum-seq 2)" | bc -l)"
printf 'verify / CHECKSUM TABLE on both at once: %.2fx wall\n' "$(echo "$(median verify 1) / $(median checksum-par 1)" | bc -l)"
printf 'verify / pt-table-checksum one side then the other: %.2fx wall\n' "$(echo "$(median verify 1) / $(median pt-seq 1)" | bc -l)"
printf 'verify peak RSS: %s MiB at %s rows, %s MiB at %s rows\n' "$(awk '{printf "%.0f", $4 / 1024}' "$RES/small-verify")" "$((ROWS / 10))" \
	"$(awk '{printf "%.0f", $1 / 1024}' <<<"$(median verify 4)")" "$ROWS"
