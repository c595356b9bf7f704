#!/usr/bin/env bash
# Runs every test of the project on a fresh Debian machine:
#   - installs MariaDB (server + client) when mariadbd is missing, and
#     mariadb-backup when it is (TestPITR backs up and restores); the tests
#     start private mariadbd instances of their own (internal/testserver) and
#     neither use nor stop the system MariaDB service;
#   - finds go (PATH or /usr/local/go/bin);
#   - go vet ./... and go test -count=1 -timeout 45m ./... "$@" (the e2e package starts
#     dozens of private servers: on a loaded machine it outgrows go test's
#     default 10 minutes);
#   - says once when the upstream fixtures are missing (their tests are then
#     skipped), and fails when they are missing under CI=true.
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		echo "test.sh: need root (or sudo) to run: $*" >&2
		exit 1
	fi
}

have_mariadbd() {
	command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]
}

if ! have_mariadbd; then
	echo "test.sh: mariadbd not found; installing mariadb-server and mariadb-client" >&2
	as_root apt-get update
	# Installing starts the system service on some machines; the tests do
	# not use it.
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y mariadb-server mariadb-client
	have_mariadbd || { echo "test.sh: mariadbd still missing after install" >&2; exit 1; }
fi
# The point-in-time restore test (e2e TestPITR) takes and restores a
# backup with mariadb-backup.
if ! command -v mariadb-backup >/dev/null 2>&1; then
	echo "test.sh: mariadb-backup not found; installing it" >&2
	as_root apt-get update
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y mariadb-backup
	command -v mariadb-backup >/dev/null 2>&1 || { echo "test.sh: mariadb-backup still missing after install" >&2; exit 1; }
fi

if ! command -v go >/dev/null 2>&1; then
	if [ -x /usr/local/go/bin/go ]; then
		export PATH="$PATH:/usr/local/go/bin"
	else
		echo "test.sh: go not found in PATH or /usr/local/go/bin" >&2
		exit 1
	fi
fi
# mariadb-binlog and mariadb-install-db live in /usr/bin, mariadbd in /usr/sbin.
export PATH="$PATH:/usr/sbin:/usr/bin"

# Tests that read the upstream real-server binlog fixtures
# (../shared/fixtures/upstream beside the repository, or $BINLOGCDC_FIXTURES)
# run when they are there; a clone of the repository alone skips them
# (internal/fixtures), and says so here once. Under CI=true they must be
# there.
fixtures="${BINLOGCDC_FIXTURES:-../shared/fixtures/upstream}"
if [ ! -f "$fixtures/MANIFEST.md" ]; then
	if [ "${CI:-}" = "true" ]; then
		echo "test.sh: $fixtures/MANIFEST.md is missing, and CI=true: the tests that read the upstream fixtures must run in CI" >&2
		exit 1
	fi
	trap 'echo "test.sh: NOTE: the tests that read the upstream real-server binlog fixtures were NOT run: $fixtures is missing. They come with the binlogcdc development tree as ../shared/fixtures/upstream beside the repository (MANIFEST.md there lists where each file came from); put them there or set BINLOGCDC_FIXTURES=DIR to run them." >&2' EXIT
fi

go version
echo "== go vet ./..."
go vet ./...
echo "== go test -count=1 -timeout 45m ./... $*"
go test -count=1 -timeout 45m ./... "$@"
