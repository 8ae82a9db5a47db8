# Sourced by the demo and the benchmarks: sets `shared` to the project's shared folder (the
# one holding workloads/linux-tar.sh): $IORR_SHARED, else the folder beside this clone, else the
# one beside the repository it was cloned from (a local `git clone . /tmp/fresh` has none of its
# own). Exits 2 with one line when there is none. Needs `root`, the repository's top folder.
shared=${IORR_SHARED:-}
if [[ -z $shared ]]; then
  origin=$(git -C "$root" config --get remote.origin.url 2> /dev/null || true)
  for d in "$root/../shared" ${origin:+"$origin/../shared"}; do
    if [[ -f $d/workloads/linux-tar.sh ]]; then
      shared=$d
      break
    fi
  done
fi
if [[ ! -f ${shared:-/nonexistent}/workloads/linux-tar.sh ]]; then
  echo "$(basename "$0"): the project's shared folder (workloads/linux-tar.sh) is not beside this clone; set IORR_SHARED=DIR" >&2
  exit 2
fi
