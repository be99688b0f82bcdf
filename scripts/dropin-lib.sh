# dropin-lib.sh: shell functions of the drop-in's guest scripts
# (dropin-perftest.sh, dropin-perftest-agree.sh), sourced.

# wait_listen PORT: until something listens on TCP PORT (at most 15 s)
wait_listen() {
  hex=$(printf '%04X' "$1") i=0
  while [ $i -lt 150 ]; do
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }' && return 0
    sleep 0.1; i=$((i + 1))
  done
  return 1
}

# wait_cm_listen PORT: until an rdma_cm id listens on PORT (at most 15 s;
# rdma_cm's ports are not in /proc/net/tcp: 'rdma resource show cm_id')
wait_cm_listen() {
  i=0
  while [ $i -lt 150 ]; do
    rdma resource show cm_id 2>/dev/null | grep LISTEN | grep -q -E "[:.]$1( |$)" && return 0
    sleep 0.1; i=$((i + 1))
  done
  return 1
}
