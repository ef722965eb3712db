#!/bin/sh
# Runs inside the test guest (busybox sh): every test of the list, one after
# the other, each behind a "# selftest:" marker line and followed by its exit
# status, so the host can split the console log into per-test TAP.
list=${1:-list}
# Swap on zram, for the tests that swap pages out.
if [ -e /sys/block/zram0/disksize ] && ! grep -q zram0 /proc/swaps; then
	echo 256M >/sys/block/zram0/disksize && mkswap /dev/zram0 >/dev/null &&
		swapon /dev/zram0 || echo "# guest: zram swap setup failed"
fi
echo "# guest: swap $(awk 'NR > 1 { s += $3 } END { print s / 1024 " MB" }' /proc/swaps)"
echo "# guest: $(nproc) cpus, nodes $(cat /sys/devices/system/node/online)," \
	"Cpus_allowed $(awk '/Cpus_allowed_list/ { print $2 }' /proc/self/status)," \
	"Mems_allowed $(awk '/Mems_allowed_list/ { print $2 }' /proc/self/status)"
grep -v '^[[:space:]]*#' "$list" | grep -vE '^(allow-skip|allow-skip-without|allow-skip-with|kunit)[[:space:]]' | grep -v '^[[:space:]]*$' |
while read -r test args; do
	if [ "$test" = guest-write ]; then
		# "guest-write FILE VALUE": for the tests after it. No FILE:
		# nothing to change (tap-results.py fails a write that fails).
		# shellcheck disable=SC2086
		set -- $args
		if [ ! -e "$1" ]; then
			echo "# guest-write: no $1, nothing written"
		elif echo "$2" >"$1"; then
			echo "# guest-write: $2 > $1 (now $(cat "$1"))"
		else
			echo "# guest-write failed: $2 > $1"
		fi
		continue
	fi
	echo "# selftest: $test $args"
	start=$(date +%s)
	# shellcheck disable=SC2086
	./"$test" $args </dev/null 2>&1
	rc=$?
	echo "# selftest-exit: $test $rc $(($(date +%s) - start))s"
done
