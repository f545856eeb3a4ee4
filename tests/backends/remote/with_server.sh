#!/usr/bin/env bash
# Runs COMMAND as a client of a manifold-server started here: on 127.0.0.1, a port the system
# picks, a fresh token. WITH_SERVERS=N starts N servers sharing one token, all of them in
# MANIFOLD_REMOTE. The client sees only the servers' devices unless MANIFOLD_DEVICES says
# otherwise (empty: all devices). MANIFOLD_TEST_SERVER_PID tells the command which process
# serves it (the first server: a test that kills the server). The servers are stopped
# afterwards; their logs are shown when the command fails.
# WITH_SERVER_NETNS=1: the servers run in a network namespace of their own (another "machine",
# reached over a veth pair); where namespaces cannot be made here, exit 77 (skipped).
#   with_server.sh SERVER [SERVER-ARGS...] -- COMMAND [ARGS...]
set -uo pipefail
server=("$1"); shift
while [ $# -gt 0 ] && [ "$1" != "--" ]; do server+=("$1"); shift; done
shift
count="${WITH_SERVERS-1}"
dir=$(mktemp -d)
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$dir/token"
pids=()
address=127.0.0.1 in_ns=() netns=
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  [ -n "$netns" ] && { ip link del "v$netns" 2>/dev/null; ip netns del "$netns" 2>/dev/null; }
  rm -rf "$dir"
}
trap cleanup EXIT
if [ -n "${WITH_SERVER_NETNS-}" ]; then
  netns=mnfd$$
  octet=$(($$ % 250 + 1))
  if ! { ip netns add "$netns" && ip link add "v$netns" type veth peer name "p$netns" &&
    ip link set "p$netns" netns "$netns" &&
    ip addr add "10.213.$octet.1/30" dev "v$netns" && ip link set "v$netns" up &&
    ip -n "$netns" addr add "10.213.$octet.2/30" dev "p$netns" &&
    ip -n "$netns" link set "p$netns" up && ip -n "$netns" link set lo up; } 2> "$dir/netns"; then
    echo "with_server.sh: no network namespace here ($(head -1 "$dir/netns")): skipped" >&2
    exit 77
  fi
  address=10.213.$octet.2 in_ns=(ip netns exec "$netns")
fi
# UCX uses every network interface it finds, and other tests make and remove interfaces (the
# namespace's veth pair): each side keeps to the interface that joins it to the other.
server_ucx_devices=${UCX_NET_DEVICES-lo} client_ucx_devices=${UCX_NET_DEVICES-lo}
if [ -n "$netns" ] && [ -z "${UCX_NET_DEVICES-}" ]; then
  server_ucx_devices=p$netns client_ucx_devices=v$netns
fi
show_logs() {
  for ((i = 0; i < count; i++)); do
    [ "$count" -gt 1 ] && echo "--- server $i:" >&2
    cat "$dir/log$i" >&2 2>/dev/null
  done
}
for ((i = 0; i < count; i++)); do
  env -u MANIFOLD_DEVICES -u MANIFOLD_TEST_DEVICE_TYPE -u MANIFOLD_REMOTE -u MANIFOLD_DEVICE_GROUPS \
    "${in_ns[@]}" env UCX_NET_DEVICES="$server_ucx_devices" "${server[@]}" --listen "$address" --port 0 --token-file "$dir/token" 2> "$dir/log$i" &
  pids+=($!)
done
remote=
for ((i = 0; i < count; i++)); do
  port=
  for _ in $(seq 300); do
    port=$(sed -n 's/.*listening on [^ ]*:\([0-9][0-9]*\).*/\1/p' "$dir/log$i" | head -1)
    [ -n "$port" ] && break
    if ! kill -0 "${pids[$i]}" 2>/dev/null; then
      echo "with_server.sh: server $i did not start:" >&2
      cat "$dir/log$i" >&2
      exit 1
    fi
    sleep 0.1
  done
  [ -n "$port" ] || { echo "with_server.sh: server $i did not listen within 30 s" >&2; exit 1; }
  remote="${remote:+$remote,}$address:$port"
done
# MANIFOLD_TEST_EXPECT_REFUSAL: the client presents another token, and the server must say so.
cp "$dir/token" "$dir/client-token"
[ -n "${MANIFOLD_TEST_EXPECT_REFUSAL-}" ] && echo "not-the-token" > "$dir/client-token"
export MANIFOLD_REMOTE="$remote" MANIFOLD_REMOTE_TOKEN="$dir/client-token"
export MANIFOLD_TEST_SERVER_PID=${pids[0]} UCX_NET_DEVICES="$client_ucx_devices"
export MANIFOLD_DEVICES="${MANIFOLD_DEVICES-$address}"
"$@"
status=$?
if [ $status -eq 0 ] && [ -n "${MANIFOLD_TEST_EXPECT_REFUSAL-}" ] && ! grep -q "refused" "$dir"/log*; then
  echo "with_server.sh: the server did not log the refusal" >&2
  status=1
fi
if [ $status -ne 0 ]; then
  echo "with_server.sh: the command failed ($status); the servers' logs:" >&2
  show_logs
fi
exit $status
