# Shared helpers of bench/gen.sh and bench/compare.sh: private MariaDB
# servers (never the system one on port 3306). Source it; it uses
# BENCH_DIR.

BENCH_DIR=${BENCH_DIR:-/tmp/binlogcdc-bench}
MDB_PIDS=() # servers started by this shell, stopped by mdb_stop_all

# mdb_free_port prints a TCP port that was free a moment ago.
mdb_free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

# mdb_template initialises $BENCH_DIR/template once (mariadb-install-db is
# slow); servers start from copies of it.
mdb_template() {
	local t=$BENCH_DIR/template
	[ -f "$t/.ready" ] && return 0
	rm -rf "$t"
	mkdir -p "$t"
	mariadb-install-db --no-defaults --datadir="$t" --user=root \
		--auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
		--innodb-log-file-size=64M --character-set-server=utf8mb4 \
		--collation-server=utf8mb4_general_ci >"$BENCH_DIR/install-db.log" 2>&1 ||
		{ cat "$BENCH_DIR/install-db.log" >&2; return 1; }
	touch "$t/.ready"
}

# mdb_start DIR [mariadbd flags...] copies the template to DIR (a fresh
# server), starts mariadbd there on a free port and waits until it
# answers. It sets MDB_PORT and MDB_PID. Binary logging is off unless the
# flags turn it on.
mdb_start() {
	local d=$1
	shift
	mdb_template || return 1
	local try
	for try in 1 2 3 4 5; do
		mdb_start_once "$d" "$@" && return 0
		# Another process took the port between mdb_free_port and the
		# bind: try another one.
		grep -q 'Address already in use' "$d/error.log" 2>/dev/null || return 1
	done
	return 1
}

mdb_start_once() {
	local d=$1
	shift
	rm -rf "$d" "$d.tmp"
	cp -a "$BENCH_DIR/template" "$d"
	# A private tmpdir: at startup mariadbd deletes every #sql* file in
	# its tmpdir, so a shared /tmp lets one server's start remove another's
	# temporary tables ("Error on delete of '/tmp/#sql-temptable-…'").
	mkdir -p "$d.tmp"
	MDB_PORT=$(mdb_free_port)
	mariadbd --no-defaults --datadir="$d" --socket="$d/s" --port="$MDB_PORT" --tmpdir="$d.tmp" \
		--bind-address=127.0.0.1 --user=root --pid-file="$d/pid" --log-error="$d/error.log" \
		--server-id=1 --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
		--default-time-zone=+00:00 --skip-name-resolve --max-allowed-packet=256M \
		--innodb-buffer-pool-size=512M --innodb-log-file-size=64M \
		--innodb-flush-log-at-trx-commit=2 --sync-binlog=0 --innodb-doublewrite=0 \
		--innodb-use-native-aio=0 --innodb-buffer-pool-dump-at-shutdown=0 \
		--innodb-buffer-pool-load-at-startup=0 --performance-schema=0 \
		"$@" >/dev/null 2>&1 &
	MDB_PID=$!
	MDB_PIDS+=("$MDB_PID")
	local i
	for i in $(seq 1 600); do
		if mariadb --no-defaults -h127.0.0.1 -P"$MDB_PORT" -uroot -e 'SELECT 1' >/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$MDB_PID" 2>/dev/null; then
			grep -q 'Address already in use' "$d/error.log" && return 1
			echo "mariadbd in $d did not start:" >&2
			tail -20 "$d/error.log" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "mariadbd in $d did not answer within 60 s" >&2
	return 1
}

# mdb_binlog_flags are the source server's flags (binlogcdc's requirements).
mdb_binlog_flags=(--log-bin=binlog --log-bin-index=binlog.index --binlog-format=ROW
	--binlog-row-metadata=FULL --binlog-row-image=FULL)

# mdb SQL... runs statements on the server at port $MDB_PORT.
mdb() {
	mariadb --no-defaults -h127.0.0.1 -P"$MDB_PORT" -uroot --batch --skip-column-names "$@"
}

# mdb_stop PID stops one server this shell started and waits for it.
mdb_stop() {
	local pid=$1 i p rest=()
	for p in "${MDB_PIDS[@]}"; do
		[ "$p" = "$pid" ] || rest+=("$p")
	done
	MDB_PIDS=("${rest[@]}")
	kill "$pid" 2>/dev/null || return 0
	for i in $(seq 1 300); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	return 0
}

# mdb_stop_all stops every server this shell started.
mdb_stop_all() {
	local pid
	for pid in "${MDB_PIDS[@]}"; do
		mdb_stop "$pid"
	done
}

# fill_binlogs MB: inserts 50,000-row batches into b.t (id BIGINT
# PRIMARY KEY AUTO_INCREMENT, v VARCHAR(200), n INT) of the running server
# until its binlogs hold MB megabytes (archive.sh, pitr.sh).
fill_binlogs() {
	while [ "$(mdb -e 'SHOW BINARY LOGS' | awk '{s+=$2} END {print int(s/1048576)}')" -lt "$1" ]; do
		mdb b -e "INSERT INTO t (v, n) SELECT REPEAT(CHAR(65 + seq % 26), 200), seq FROM seq_1_to_50000"
	done
}
