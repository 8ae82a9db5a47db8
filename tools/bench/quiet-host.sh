# Sourced by the benchmarks: pauses the guest kernel's free-page reporting while they run.
#
# On a VM whose kernel reports free pages to the host (virtio-balloon's free page reporting, as
# on this project's machines: /sys/module/page_reporting), the host takes back pages the guest
# has freed, and the next run that allocates them waits for the host to fault them in again. A
# `tar xf` of the Linux tarball into tmpfs then took 1.4 s or 3.9 to 4.4 s by the luck of which
# pages it got (perf: half of the slow runs' samples in copy_folio_from_iter_atomic, the copy
# into fresh tmpfs pages), after the previous run's `rm -rf` had freed 1.4 GB. Raising
# page_reporting_order past the largest free block stops the reporting; the benchmark puts the
# old value back when it exits. Without the file (or without root) nothing changes and a line
# says so.
#
#
# The same machines run a DAMON proactive reclaimer (a kdamond in /sys/kernel/mm/damon/admin
# whose scheme pages out memory it finds cold): between two runs it paged the tarball's page
# cache out (2.7 GB paged out in the first half hour of a fresh boot), so that a plain `tar xf`
# read it back from disk and took 2.6 to 2.9 s instead of 1.3 s, in no fixed pattern. The
# running kdamonds are stopped while the benchmark runs and started again (with the settings
# they had) when it exits.
#
# Usage: source quiet-host.sh; quiet_host_begin; ...; (the EXIT trap calls quiet_host_end)
_quiet_host_param=/sys/module/page_reporting/parameters/page_reporting_order
_quiet_host_old=
_quiet_host_damon=()
quiet_host_begin() {
  local k
  for k in /sys/kernel/mm/damon/admin/kdamonds/[0-9]*; do
    [[ $(cat "$k/state" 2> /dev/null) == on ]] || continue
    if echo off > "$k/state" 2> /dev/null; then
      _quiet_host_damon+=("$k")
      echo "bench: DAMON reclaimer $k stopped while the benchmark runs" >&2
    else
      echo "bench: DAMON reclaimer $k stays on (cannot stop it): runs may vary" >&2
    fi
  done
  if [[ ! -w $_quiet_host_param ]]; then
    [[ -e $_quiet_host_param ]] &&
      echo "bench: free page reporting stays on (cannot write $_quiet_host_param): runs may vary" >&2
    return 0
  fi
  _quiet_host_old=$(cat "$_quiet_host_param")
  local v
  for v in 11 10; do  # the largest order the kernel accepts
    if echo "$v" > "$_quiet_host_param" 2> /dev/null; then
      echo "bench: free page reporting to the host paused (page_reporting_order $_quiet_host_old -> $v)" >&2
      return 0
    fi
  done
  _quiet_host_old=
  echo "bench: free page reporting stays on ($_quiet_host_param refused 11 and 10): runs may vary" >&2
}
quiet_host_end() {
  local k
  for k in "${_quiet_host_damon[@]}"; do
    echo on > "$k/state" 2> /dev/null || echo "bench: could not start $k again" >&2
  done
  _quiet_host_damon=()
  [[ -n $_quiet_host_old ]] || return 0
  echo "$_quiet_host_old" > "$_quiet_host_param" 2> /dev/null || true
  _quiet_host_old=
}
