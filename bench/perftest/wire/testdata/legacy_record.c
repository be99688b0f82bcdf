/* legacy_record.c: prints, as hex, the negotiation record a perftest
 * 6.28/6.29 build (x86_64, with mlx5dv) sends for
 *   ib_write_lat -s 64 -n 1000 (RC, WRITE, LAT, iterations, MiB/s, 1 QP)
 * on a device whose max_qp_rd_atom is 16 (rxe). The struct is laid out by
 * the C compiler from ibv_device_attr in <infiniband/verbs.h>; the values
 * are in network order as perftest stores them, the device attributes in
 * host order. Regenerate legacy-6.28.hex with:
 *   cc -o /tmp/lr legacy_record.c && /tmp/lr > legacy-6.28.hex */
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <endian.h>
#include <infiniband/verbs.h>

struct rec {
	int32_t test_method, connection_type, verb, tst, atomic_type, test_type, report_fmt;
	uint64_t size, iters;
	int32_t aes_xts, num_of_qps, duration, use_rdma_cm, use_write_with_imm, no_enhanced_reorder, sig_offload, data_validation;
	struct ibv_device_attr attr;
	uint64_t mlx5dv_comp_mask;
};

int main(void)
{
	struct rec r;
	unsigned char *p = (unsigned char *)&r;
	size_t i;

	memset(&r, 0, sizeof r);
	r.test_method = htonl(0);     /* RUN_REGULAR */
	r.connection_type = htonl(0); /* RC */
	r.verb = htonl(2);            /* WRITE */
	r.tst = htonl(0);             /* LAT */
	r.atomic_type = htonl(1);     /* FETCH_AND_ADD */
	r.test_type = htonl(0);       /* ITERATIONS */
	r.report_fmt = htonl(1);      /* MBS */
	r.size = htobe64(64);
	r.iters = htobe64(1000);
	r.num_of_qps = htonl(1);
	r.duration = htonl(5);
	r.attr.max_qp_rd_atom = 16;
	r.attr.vendor_id = 0x1234;
	for (i = 0; i < sizeof r; i++)
		printf("%02x%s", p[i], (i % 32 == 31) ? "\n" : "");
	printf("\n");
	return 0;
}
