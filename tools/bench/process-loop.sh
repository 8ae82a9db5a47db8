# Sourced by record-processes.sh and record-exit-latency.sh, which time a shell loop of N short
# programs (fork, exec, exit) plain and recorded: their arguments, environment and checks, a
# work directory in tmpfs, and the quiet host (quiet-host.sh).
# Before sourcing: bench (the script's name, for messages). After: root, iorr, lib, runs, n,
# prog, base, work, loop (the sh -c text of the loop).
# Usage (in the script): source "$(dirname "$0")/process-loop.sh" "$@"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
iorr=${IORR:-$root/build/bin/iorr}
lib=$(dirname "$iorr")/../lib/libiorr-preload.so
runs=${RUNS:-5}
n=${1:-300}
prog=${PROG:-/bin/true}
base=${BASE_LIB:-}
[[ -x $iorr && -f $lib ]] || { echo "$bench: build first (tools/build.sh)" >&2; exit 2; }
[[ -z $base || -f $base ]] || { echo "$bench: no library at BASE_LIB=$base" >&2; exit 2; }
work=$(mktemp -d "/dev/shm/iorr-$bench.XXXXXX")
source "$root/tools/bench/quiet-host.sh"
trap 'rm -rf "$work"; quiet_host_end' EXIT
quiet_host_begin
loop="i=0; while [ \$i -lt $n ]; do $prog; i=\$((i + 1)); done"
