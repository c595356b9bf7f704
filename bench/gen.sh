#!/usr/bin/env bash
# bench/gen.sh generates the benchmark binlogs on a private MariaDB:
#
#   $BENCH_DIR/data/workload.binlog  CREATE TABLE, then ~227k single-row
#                                    autocommit statements (inserts, updates,
#                                    deletes): one rows event each
#   $BENCH_DIR/data/bigtx.binlog     one transaction inserting 1M rows
#   $BENCH_DIR/data/checksum         CHECKSUM TABLE of the workload's table
#   $BENCH_DIR/data/info             workload.binlog's size and rows events
#
# Table: INT primary key, BIGINT, DECIMAL(12,2), DATETIME(6), ENUM,
# VARCHAR(100), TEXT. The files are cached: they are rebuilt only when this
# script changed (or with FORCE=1). BENCH_DIR defaults to
# /tmp/binlogcdc-bench. N (default 130000) is the number of inserts;
# updates are N/2, deletes N/4.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

N=${N:-130000}
out=$BENCH_DIR/data
trap mdb_stop_all EXIT

# gen_replay makes $out/replay-tx$RTX/: replay.binlog, a CREATE TABLE
# and then the issue's replay workload on a 6-column table: RN (default
# 1000000) inserts, then RN/10 updates and RN/100 deletes. With RTX=1000
# (the default) they come in transactions of 1000 inserts, 100 updates,
# 10 deletes (each covers 1000 consecutive ids); with RTX=1 each row is
# its own autocommit statement (1.11M transactions); with RTX above 1000
# (bench/compare.sh uses 50000) the inserts are INSERT ... SELECT of RTX
# rows each, then one UPDATE of RN/10 rows and one DELETE of RN/100, each
# a single transaction (issue 26's bulk-load shape). Also final.tsv, the
# table's final rows as SELECT … INTO OUTFILE writes them (for LOAD DATA
# INFILE); schema.sql, its CREATE TABLE; checksum, its CHECKSUM TABLE.
# Cached on its own stamp.
gen_replay() {
	local rn=${RN:-1000000} tx=${RTX:-1000}
	local d=$out/replay-tx$tx st
	st="$(declare -f gen_replay | sha256sum | cut -c1-16)-$rn"
	if [ "${FORCE:-0}" != 1 ] && [ -f "$d/stamp" ] && [ "$(cat "$d/stamp")" = "$st" ]; then
		echo "gen: replay input cached in $d" >&2
		return 0
	fi
	rm -rf "$d"
	mkdir -p "$d"
	echo "gen: replay workload ($rn inserts, $((rn / 10)) updates, $((rn / 100)) deletes)" >&2
	mdb_start "$BENCH_DIR/gen-replay" "${mdb_binlog_flags[@]}"
	local dd=$BENCH_DIR/gen-replay
	mdb -e 'FLUSH BINARY LOGS'
	local f
	f=$(mdb -e 'SHOW MASTER STATUS' | cut -f1)
	cat >"$d/schema.sql" <<-'SQL'
	CREATE DATABASE rb;
	CREATE TABLE rb.t (
	  id INT NOT NULL PRIMARY KEY,
	  customer BIGINT NOT NULL,
	  amount DECIMAL(12,2) NOT NULL,
	  created DATETIME(6) NOT NULL,
	  email VARCHAR(100),
	  note TEXT
	) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
	SQL
	{
		cat "$d/schema.sql"
		echo 'USE rb;'
		awk -v n="$rn" -v tx="$tx" 'BEGIN {
			if (tx == 1) {
				for (i = 1; i <= n; i++)
					printf "INSERT INTO rb.t VALUES (%d,%d,%d.%02d,TIMESTAMPADD(MICROSECOND,%d*1234567,\x272024-01-01\x27),\x27user%d@example.com\x27,REPEAT(\x27lorem ipsum \x27,%d));\n",
						i, i * 7919 % 1000003, int(i % 100000 / 100), i % 100, i, i % 50000, 1 + i % 10
				for (i = 10; i <= n; i += 10)
					printf "UPDATE rb.t SET amount = amount + 1.25, note = CONCAT(\x27upd \x27, note) WHERE id = %d;\n", i
				for (i = 5; i <= n; i += 100)
					printf "DELETE FROM rb.t WHERE id = %d;\n", i
				exit
			}
			if (tx > 1000) {
				# Bulk loads: INSERT ... SELECT of tx rows each, then one
				# UPDATE of every 10th row and one DELETE of every 100th,
				# each a single transaction.
				for (a = 1; a <= n; a += tx) {
					b = a + tx - 1; if (b > n) b = n
					printf "INSERT INTO rb.t SELECT seq, seq*7919 %% 1000003, (seq %% 100000)/100, TIMESTAMPADD(MICROSECOND, seq*1234567, \x272024-01-01\x27), CONCAT(\x27user\x27, seq %% 50000, \x27@example.com\x27), REPEAT(\x27lorem ipsum \x27, 1 + seq %% 10) FROM seq_%d_to_%d;\n", a, b
				}
				printf "UPDATE rb.t SET amount = amount + 1.25, note = CONCAT(\x27upd \x27, note) WHERE id %% 10 = 0;\n"
				printf "DELETE FROM rb.t WHERE id %% 100 = 5;\n"
				exit
			}
			for (a = 1; a <= n; a += 1000) {
				b = a + 999; if (b > n) b = n
				printf "INSERT INTO rb.t SELECT seq, seq*7919 %% 1000003, (seq %% 100000)/100, TIMESTAMPADD(MICROSECOND, seq*1234567, \x272024-01-01\x27), CONCAT(\x27user\x27, seq %% 50000, \x27@example.com\x27), REPEAT(\x27lorem ipsum \x27, 1 + seq %% 10) FROM seq_%d_to_%d;\n", a, b
			}
			for (a = 1; a <= n; a += 1000)
				printf "UPDATE rb.t SET amount = amount + 1.25, note = CONCAT(\x27upd \x27, note) WHERE id BETWEEN %d AND %d AND id %% 10 = 0;\n", a, a + 999
			for (a = 1; a <= n; a += 1000)
				printf "DELETE FROM rb.t WHERE id BETWEEN %d AND %d AND id %% 100 = 5;\n", a, a + 999
		}'
	} | mdb
	mdb -e 'FLUSH BINARY LOGS'
	mdb -e 'CHECKSUM TABLE rb.t' | cut -f2 >"$d/checksum"
	mdb -e "SELECT * FROM rb.t ORDER BY id INTO OUTFILE '$d/final.tsv'"
	cp "$dd/$f" "$d/replay.binlog"
	mdb_stop "$MDB_PID"
	rm -rf "$dd"
	echo "gen: replay.binlog: $(stat -c %s "$d/replay.binlog") bytes, $(wc -l <"$d/final.tsv") final rows" >&2
	echo "$st" >"$d/stamp"
}
# gen_bigtx makes $out/bigtx-recover/: bigtx.binlog, the big-transaction
# shapes of issue 26 for recover, in tables of (id INT PRIMARY KEY, a
# BIGINT, d DECIMAL(12,2), dt DATETIME(6), s VARCHAR(60), t TEXT):
# bt.bulk filled by 20 INSERT … SELECT of 50,000 rows each (one
# transaction each), then one UPDATE of 100,000 rows and one DELETE of
# 10,000; bt.one filled by one INSERT … SELECT of 1M rows (one
# transaction). Both tables are dropped at the end (recover's default
# incarnation). Also bulk.tsv and one.tsv, each table's rows before the
# drop as SELECT … INTO OUTFILE writes them. Cached on its own stamp.
gen_bigtx() {
	local d=$out/bigtx-recover st
	st="$(declare -f gen_bigtx | sha256sum | cut -c1-16)"
	if [ "${FORCE:-0}" != 1 ] && [ -f "$d/stamp" ] && [ "$(cat "$d/stamp")" = "$st" ]; then
		echo "gen: bigtx-recover input cached in $d" >&2
		return 0
	fi
	rm -rf "$d"
	mkdir -p "$d"
	echo "gen: big transactions for recover (20 x 50,000-row INSERT ... SELECT, a 100,000-row UPDATE, a DELETE; one 1M-row INSERT ... SELECT)" >&2
	mdb_start "$BENCH_DIR/gen-bigtx" "${mdb_binlog_flags[@]}"
	local dd=$BENCH_DIR/gen-bigtx f cols sel
	mdb -e 'FLUSH BINARY LOGS'
	f=$(mdb -e 'SHOW MASTER STATUS' | cut -f1)
	cols="id INT PRIMARY KEY, a BIGINT, d DECIMAL(12,2), dt DATETIME(6), s VARCHAR(60), t TEXT"
	sel="seq, seq*7919 % 1000003, (seq % 100000)/100, TIMESTAMPADD(MICROSECOND, seq*1234567, '2024-01-01'), CONCAT('user', seq % 50000, '@example.com'), REPEAT('lorem ipsum ', 1 + seq % 10)"
	{
		echo "CREATE DATABASE bt; USE bt; CREATE TABLE bt.bulk ($cols); CREATE TABLE bt.one ($cols);"
		for i in $(seq 0 19); do
			echo "INSERT INTO bt.bulk SELECT $sel FROM seq_$((i * 50000 + 1))_to_$((i * 50000 + 50000));"
		done
		echo "UPDATE bt.bulk SET d = d + 1.25, t = CONCAT('upd ', t) WHERE id % 10 = 0;"
		echo "DELETE FROM bt.bulk WHERE id % 100 = 5;"
		echo "INSERT INTO bt.one SELECT $sel FROM seq_1_to_1000000;"
	} | mdb
	mdb -e "SELECT * FROM bt.bulk ORDER BY id INTO OUTFILE '$d/bulk.tsv'"
	mdb -e "SELECT * FROM bt.one ORDER BY id INTO OUTFILE '$d/one.tsv'"
	mdb -e 'DROP TABLE bt.bulk, bt.one'
	mdb -e 'FLUSH BINARY LOGS'
	cp "$dd/$f" "$d/bigtx.binlog"
	mdb_stop "$MDB_PID"
	rm -rf "$dd"
	echo "gen: bigtx-recover/bigtx.binlog: $(stat -c %s "$d/bigtx.binlog") bytes" >&2
	echo "$st" >"$d/stamp"
}
if [ "${1:-}" = bigtx ]; then
	gen_bigtx
	exit 0
fi
if [ "${1:-}" = replay ]; then
	gen_replay
	exit 0
fi
stamp="$(cat bench/gen.sh bench/lib.sh | sha256sum | cut -c1-16)-$N"
if [ "${FORCE:-0}" != 1 ] && [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$stamp" ]; then
	echo "gen: cached in $out" >&2
	exit 0
fi
mkdir -p "$BENCH_DIR"
# Only this workload's files: the other inputs (replay-tx*, bigtx-*) have
# stamps of their own and take minutes to make again.
rm -f "$out/workload.binlog" "$out/bigtx.binlog" "$out/checksum" "$out/info" "$out/stamp"
mkdir -p "$out"

echo "gen: starting a private MariaDB" >&2
mdb_start "$BENCH_DIR/gen-server" "${mdb_binlog_flags[@]}"
datadir=$BENCH_DIR/gen-server

current() { mdb -e 'SHOW MASTER STATUS' | cut -f1; }
mdb -e 'FLUSH BINARY LOGS'
wl=$(current)

schema="CREATE DATABASE bench;
CREATE TABLE bench.orders (
  id INT NOT NULL PRIMARY KEY,
  customer BIGINT NOT NULL,
  amount DECIMAL(12,2) NOT NULL,
  created DATETIME(6) NOT NULL,
  status ENUM('new','paid','shipped','cancelled') NOT NULL,
  email VARCHAR(100),
  note TEXT
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE bench.big LIKE bench.orders;"

# The workload: insert i; update row i-1000 (even i); delete row i-2000
# (i a multiple of 4): every update and delete hits an existing row, and
# a deleted row is never updated later. Each statement autocommits.
workload() {
	echo "$schema"
	echo "USE bench;"
	awk -v n="$N" 'BEGIN {
		srand(42)
		split("alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu café naïve Zürich \"quoted\" it\x27s", w, " ")
		nw = length(w)
		st[0] = "new"; st[1] = "paid"; st[2] = "shipped"; st[3] = "cancelled"
		for (i = 1; i <= n; i++) {
			printf "INSERT INTO orders VALUES (%d,%d,%d.%02d,TIMESTAMPADD(MICROSECOND,%d*1234567,\x272024-01-01 00:00:00\x27),\x27%s\x27,\x27user%d@example.com\x27,\x27%s\x27);\n",
				i, i * 7919 % 1000003, int(rand() * 100000), int(rand() * 100), i, st[i % 4], i % 50000, note()
			if (i % 2 == 0 && i > 1000)
				printf "UPDATE orders SET amount=amount+1.25,status=\x27paid\x27,note=\x27%s\x27 WHERE id=%d;\n", note(), i - 1000
			if (i % 4 == 0 && i > 2000)
				printf "DELETE FROM orders WHERE id=%d;\n", i - 2000
		}
	}
	function note(   s, k, len) {
		len = 20 + int(rand() * 200)
		s = ""
		while (length(s) < len) {
			k = 1 + int(rand() * nw)
			s = s (s == "" ? "" : " ") w[k]
		}
		gsub(/\x27/, "\x27\x27", s)
		return s
	}'
}

echo "gen: running the workload ($N inserts, $((N / 2)) updates, $((N / 4)) deletes)" >&2
t0=$(date +%s)
workload | mdb
echo "gen: workload took $(($(date +%s) - t0)) s" >&2
mdb -e 'CHECKSUM TABLE bench.orders' | cut -f2 >"$out/checksum"
mdb -e 'FLUSH BINARY LOGS'
big=$(current)

echo "gen: one transaction of 1M rows" >&2
mdb bench -e "INSERT INTO big SELECT seq, seq*7919 % 1000003, (seq % 100000)/100, TIMESTAMPADD(MICROSECOND, seq*1234567, '2024-01-01'),
	1 + seq % 4, CONCAT('user', seq % 50000, '@example.com'), REPEAT('lorem ipsum ', 1 + seq % 10) FROM seq_1_to_1000000"
mdb -e 'FLUSH BINARY LOGS'

cp "$datadir/$wl" "$out/workload.binlog"
cp "$datadir/$big" "$out/bigtx.binlog"
mdb_stop_all

# Check what was asked for: >= 90 MB and >= 200k rows events (at the
# default N; a smaller N, for a quick trial of the scripts, is taken as is).
events=$(mariadb-binlog "$out/workload.binlog" | grep -cE '(Write|Update|Delete)_rows(_v1)?: table id' || true)
size=$(stat -c %s "$out/workload.binlog")
echo "gen: workload.binlog: $size bytes, $events rows events; bigtx.binlog: $(stat -c %s "$out/bigtx.binlog") bytes" >&2
if [ "$N" -ge 130000 ] && { [ "$size" -lt $((90 << 20)) ] || [ "$events" -lt 200000 ]; }; then
	echo "gen: workload.binlog is too small (want >= 90 MiB and >= 200000 rows events)" >&2
	exit 1
fi
echo "$size $events" >"$out/info"
echo "$stamp" >"$out/stamp"
rm -rf "$datadir"
