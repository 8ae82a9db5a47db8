#!/usr/bin/env bash
# Installs what iorr needs to build and test on Debian 12 (run as root, or with sudo available).
# Idempotent: packages already present are not fetched again.
set -euo pipefail
pkgs=(cmake g++ make pkg-config
      libboost-iostreams1.81-dev libzstd-dev libcli11-dev librange-v3-dev libgtest-dev
      zstd xz-utils bzip2 gzip strace clang-14 libclang-rt-14-dev
      xfsprogs btrfs-progs e2fsprogs util-linux time valgrind)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
