#!/usr/bin/env bash
#
# scripts/pgport.sh
#	Sourced by scripts/test.sh and bench/lib.sh: pick a free TCP port for a
#	throwaway PostgreSQL cluster.

# Succeeds if something listens on TCP port $1 or a PostgreSQL socket for it
# exists in the usual socket directories.
port_in_use()
{
	local hex f

	hex=$(printf '%04X' "$1")
	for f in /proc/net/tcp /proc/net/tcp6; do
		[ -r "$f" ] || continue
		# field 2 is local_address as ADDR:PORT in hex, field 4 the state
		# (0A = LISTEN)
		if awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { found = 1 } END { exit !found }' "$f"; then
			return 0
		fi
	done
	[ -e "/tmp/.s.PGSQL.$1" ] || [ -e "/var/run/postgresql/.s.PGSQL.$1" ]
}

pick_port()
{
	local port

	for _ in $(seq 1 200); do
		port=$((55000 + RANDOM % 1000))
		if ! port_in_use "$port"; then
			echo "$port"
			return 0
		fi
	done
	return 1
}
