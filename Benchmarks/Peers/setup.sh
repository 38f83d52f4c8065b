#!/usr/bin/env bash
# Installs what peer-bench needs beyond Swift: SQLite's C header and library
# (Debian's libsqlite3-dev), only when the header is missing. GRDB comes through
# the package manager. Run as root (or with sudo) on Debian/Ubuntu.
set -euo pipefail
if [ -f /usr/include/sqlite3.h ]; then
    echo "setup: sqlite3.h present ($(grep -m1 'define SQLITE_VERSION ' /usr/include/sqlite3.h | awk '{print $3}'))"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends libsqlite3-dev
