#!/bin/sh
# isolation-guest.sh: 'rdmabench isolation' in the SoftRoCE guest (make
# isolation-test; needs rdmabench and jcheck):
#   1. loopback, the whole catalogue, 2 rounds: the plan line, the table, the
#      JSON (/out/catalogue.json): every attacker ran in every round with its
#      own rate (on the host TestIsolationFiles checks that every figure's ratio
#      that enough runs back has its interval);
#   2. against 'rdmabench server' (isolation HOST): the RNR storm, the PCIe
#      sizes, the MR thrash and the registration churn, role client
#      (/out/host.json);
#   3. --max-inflation: p50=100000x is not crossed (exit 0); p50=1x,p90=1x
#      beside bw-hog, small-flood and pcie-sizes against the server is (exit 1,
#      naming the attacker, the figure, the ratio and its interval), once more
#      if not (a loaded host).
# Exit 0 when all holds; 1 with the reason otherwise.
set -u
fail() { echo "isolation-guest FAIL: $*"; exit 1; }
mkdir -p /out
export RDMABENCH_REQUIRE_RDMA=1
rdmabench isolation -D 1 --repeat 2 --json /out/catalogue.json >/out/catalogue.txt 2>/out/catalogue.err
rc=$?
grep -v '^warning' /out/catalogue.txt
[ $rc = 0 ] || { cat /out/catalogue.err; fail "the catalogue exited $rc"; }
grep -q '^isolation: send lat 2B alone and beside 7 attackers (bw-hog, small-flood, rnr-storm, pcie-sizes, qp-thrash, mr-thrash, mr-churn), 2 rounds: 16 runs, about' \
	/out/catalogue.err || fail "no plan line"
jcheck /out/catalogue.json 'count(attackers.*) == 7' 'count(alone.*) == 2' 'count(attackers.*.runs.*) == 14' \
	'count(attackers.*.achieved.*.mpps > 0) == 12' 'count(attackers[name=mr-churn].achieved.*.registrations_per_sec > 0) == 2' \
	'count(attackers[name=rnr-storm].load.rnr == true) == 1' \
	'attackers[name=pcie-sizes].load.alt_size_bytes == 257' 'attackers[name=qp-thrash].load.qps == 512' \
	'attackers[name=mr-thrash].load.mrs == 4096' 'count(attackers[name=mr-thrash].achieved.*.mpps > 0) == 2' \
	|| fail "the catalogue's JSON"
rdmabench server --bind 192.0.2.1 -p 18630 >/tmp/isolation-server.log 2>&1 &
spid=$!
sleep 1
rdmabench isolation 192.0.2.1 -p 18630 --attackers rnr-storm,pcie-sizes,mr-thrash,mr-churn --repeat 1 -D 1 --json /out/host.json >/out/host.txt 2>&1
rc=$?
grep -v '^warning' /out/host.txt
[ $rc = 0 ] || fail "isolation HOST exited $rc"
jcheck /out/host.json 'role == "client"' 'count(attackers.*.runs.*) == 4' 'count(attackers.*.ratios[figure=p50].method == "order_statistics") == 4' \
	'attackers[name=mr-thrash].load.mrs == 4096' \
	|| fail "isolation HOST's JSON"
rdmabench isolation 192.0.2.1 -p 18630 --attackers small-flood --repeat 1 -D 0.5 --max-inflation p50=100000x >/out/pass.txt 2>&1
rc=$?
[ $rc = 0 ] && grep -q '^max-inflation p50=100000x, small-flood: PASS' /out/pass.txt || { cat /out/pass.txt; fail "a bound not crossed exited $rc"; }
# p50=1x,p90=1x beside three attackers: crossed when any of the six intervals lies above 1x
crossed() {
	rdmabench isolation 192.0.2.1 -p 18630 --attackers bw-hog,small-flood,pcie-sizes --repeat 1 -D 1 --max-inflation p50=1x,p90=1x \
		--json /out/crossed.json >/out/crossed.txt 2>&1
	rc=$?
	[ $rc = 1 ] && grep -Eq 'isolation: --max-inflation crossed: (bw-hog|small-flood|pcie-sizes) p[59]0 [0-9.]+x \([0-9.]+-[0-9.]+\) \(bound 1x\)' /out/crossed.txt
}
crossed || {
	grep -v '^warning' /out/crossed.txt
	echo "ISOLATION RETRY: p50=1x,p90=1x beside three attackers exited $rc, once more (a loaded host makes rxe's latency noisy)"
	crossed || { cat /out/crossed.txt; fail "a bound surely crossed exited $rc"; }
}
jcheck /out/crossed.json 'count(verdicts.*) == 6' 'verdicts.*.verdict == "crossed"' || fail "the verdicts in the JSON"
grep -E '^(max-inflation|rdmabench: isolation)' /out/crossed.txt
kill $spid
echo "isolation-guest OK"
