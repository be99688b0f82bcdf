#!/bin/sh
# cliffs-guest.sh: 'rdmabench cliffs' in the SoftRoCE guest (make cliffs-test;
# needs rdmabench and cliffs.test from ./bench/cliffs):
#   1. the planted cliff: WRITE bw along the message size, shaped to 1000
#      messages/s and 512,000 B/s; the first knee lies in the ladder step
#      512..1024 (TestRDMAPlantedLoadCliff, which also checks the announced time);
#   2. the CLI along QPs 1..256: the plan line, the table, the JSON
#      (/out/qps.json, checked on the host with the plot);
#   3. the CLI against 'rdmabench server' (cliffs HOST) along the tx depth,
#      briefly: role client, every point measured (/out/server.json);
#   4. the CLI along the MR count 1..1024 (--mrs, READ bw of 64 B over one
#      slot per MR): the plan line, the table, the JSON (/out/mrs.json);
#   5. 4 KiB random READ and WRITE bandwidth over a 1 GiB region (--region
#      1G --access random; the guest has 3 GiB): /out/workload/region.json,
#      checked on the host, and how long registering took (/out/workload/region.err).
# Exit 0 when all holds; 1 with the reason otherwise.
set -u
fail() { echo "cliffs-guest FAIL: $*"; exit 1; }
mkdir -p /out
export RDMABENCH_REQUIRE_RDMA=1 RDMABENCH_CLIFFS_OUT=/out
cliffs.test -test.run '^TestRDMAPlantedLoadCliff$' -test.v || {
	echo "CLIFFS RETRY: the planted cliff, once more (a loaded host makes rxe's rates noisy)"
	cliffs.test -test.run '^TestRDMAPlantedLoadCliff$' -test.v || fail "the planted load cliff"
}
rdmabench cliffs -d rxe0 --axis qps --to 256 --runs 3 -D 0.5 --bisect 2 --json /out/qps.json >/out/qps.txt 2>/out/qps.err
rc=$?
[ $rc = 0 ] || { cat /out/qps.err /out/qps.txt; fail "cliffs along QPs exited $rc"; }
cat /out/qps.err /out/qps.txt
grep -q '^rdmabench cliffs: write bw 64B along qps 1..256' /out/qps.err || fail "no plan line"
grep -q '^cliffs \[' /out/qps.err || fail "no progress line"
grep -Eq '^(knee: mpps|no knee up to 256 QPs)' /out/qps.txt || fail "no knee line in the table"
rdmabench server --bind 192.0.2.1 -p 18620 >/tmp/cliffs-server.log 2>&1 &
spid=$!
sleep 1
rdmabench cliffs 192.0.2.1 -p 18620 --axis tx-depth --points 1,4,16 --runs 2 -D 0.2 --bisect 1 --json /out/server.json >/out/server.txt 2>&1
rc=$?
kill $spid; wait $spid 2>/dev/null
cat /out/server.txt
[ $rc = 0 ] || fail "cliffs against a server exited $rc" # its document's role: jcheck on the host (cliffs-test.sh)
rdmabench cliffs -d rxe0 --op read --axis mrs --to 1024 --factor 4 --runs 2 -D 0.3 --bisect 1 --json /out/mrs.json >/out/mrs.txt 2>/out/mrs.err
rc=$?
cat /out/mrs.err /out/mrs.txt
[ $rc = 0 ] || fail "cliffs along MRs exited $rc"
grep -q '^rdmabench cliffs: read bw 64B along mrs 1,4,16,64,256,1024:' /out/mrs.err || fail "no plan line along MRs"
grep -Eq '^(knee: mpps|no knee up to 1024 MRs)' /out/mrs.txt || fail "no knee line in the MR table"
mkdir -p /out/workload
start=$(date +%s)
rdmabench loopback -d rxe0 --op read,write --mode bw -s 4K --region 1G --access random -D 2 \
	--json /out/workload/region.json >/out/workload/region.txt 2>/out/workload/region.err
rc=$?
echo "1 GiB region: READ and WRITE bw took $(( $(date +%s) - start )) s in all (registration included)" | tee -a /out/workload/region.err
cat /out/workload/region.txt
[ $rc = 0 ] || { cat /out/workload/region.err; fail "4 KiB random over 1 GiB exited $rc"; }
echo "cliffs-guest OK"
