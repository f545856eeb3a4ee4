#!/usr/bin/env bash
# Remote devices against local ones on this host: two manifold-servers on 127.0.0.1 (each
# serving this machine's devices), the client's bench (remote_bench), and plain UCX puts and gets
# of the same sizes (ucx_perftest) as the transport's own ceiling.
#   bench/remote/run.sh [BUILD_DIR]   (default: build)
set -uo pipefail
build=${1:-build}
server=$build/server/manifold-server
bench=$build/bench/remote/remote_bench
[ -x "$server" ] && [ -x "$bench" ] || { echo "run.sh: build $server and $bench first" >&2; exit 2; }
export OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-$PWD/$build/icd}
dir=$(mktemp -d)
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/token"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
remote=
for i in 1 2; do
  "$server" --listen 127.0.0.1 --port 0 --token-file "$dir/token" 2> "$dir/log$i" &
  pids+=($!)
  for _ in $(seq 300); do grep -q "listening on" "$dir/log$i" && break; sleep 0.1; done
  port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$dir/log$i" | head -1)
  [ -n "$port" ] || { cat "$dir/log$i" >&2; exit 1; }
  remote+="${remote:+,}127.0.0.1:$port"
done
echo "## remote devices over loopback ($(nproc) cores, $(uname -r))"
MANIFOLD_REMOTE=$remote MANIFOLD_REMOTE_TOKEN=$dir/token MANIFOLD_DEVICES=${MANIFOLD_DEVICES:-} "$bench"
if command -v ucx_perftest > /dev/null; then
  echo
  echo "## plain UCX over loopback (ucx_perftest, the same sizes)"
  for test in ucp_put_bw ucp_get; do
    for mib in 1 16 256; do
      size=$((mib << 20))
      ucx_perftest -p 13411 -t "$test" -s "$size" -n 20 > "$dir/perf-server" 2>&1 &
      perf=$!
      sleep 0.5
      bw=$(ucx_perftest 127.0.0.1 -p 13411 -t "$test" -s "$size" -n 20 2>/dev/null |
           awk '/^ *Final:/ {print $(NF-2)}')
      wait "$perf" 2>/dev/null
      echo "| $test $mib MiB | ucx_perftest | ${bw:-?} MB/s |"
    done
  done
fi
