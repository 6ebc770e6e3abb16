/*
 * ecat's C shim over DPDK (22.11, Debian's libdpdk-dev): the few calls the `dpdk:` link needs,
 * as plain functions Rust can call. DPDK's burst and mbuf functions are static inline in its
 * headers, so they cannot be called through FFI directly; everything else stays in Rust.
 *
 * Design: one port, one Rx and one Tx queue, one mempool per port used only by the thread that
 * owns the link (single-producer/single-consumer ring ops, no per-lcore cache: the cycle thread
 * is not an EAL lcore). Transmit is a burst of 1; receive pulls up to 4 mbufs (vector Rx paths
 * round smaller requests down) and hands them out one per call. Nothing here allocates after
 * ecat_dpdk_port_open except DPDK's own mbufs, which come from the mempool.
 *
 * EAL initialisation and device probing print through stdout/stderr (DPDK's log and its usage
 * text); both calls capture that output into the caller's buffer so Rust can turn it into one
 * sentence instead of a page of EAL lines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#define RX_BURST 4

struct ecat_dpdk_port {
	uint16_t port_id;
	struct rte_mempool *pool;
	struct rte_mbuf *rx[RX_BURST];
	uint16_t rx_head;
	uint16_t rx_count;
	int intr_fd;
	int is_vdev;
	char name[RTE_ETH_NAME_MAX_LEN];
};

/* Output capture: fd 1 and 2 go to a memory file while DPDK talks. */
struct capture {
	int mem;
	int saved_out;
	int saved_err;
};

static void capture_begin(struct capture *c)
{
	fflush(stdout);
	fflush(stderr);
	c->mem = memfd_create("ecat-dpdk-log", MFD_CLOEXEC);
	c->saved_out = c->saved_err = -1;
	if (c->mem < 0)
		return;
	c->saved_out = dup(1);
	c->saved_err = dup(2);
	dup2(c->mem, 1);
	dup2(c->mem, 2);
}

/* Restore fd 1/2 and copy the captured text (its first `len - 1` bytes) into `msg`. */
static void capture_end(struct capture *c, char *msg, size_t len)
{
	if (len)
		msg[0] = 0;
	if (c->mem < 0)
		return;
	fflush(stdout);
	fflush(stderr);
	if (c->saved_out >= 0) {
		dup2(c->saved_out, 1);
		close(c->saved_out);
	}
	if (c->saved_err >= 0) {
		dup2(c->saved_err, 2);
		close(c->saved_err);
	}
	off_t size = lseek(c->mem, 0, SEEK_END);
	if (len > 1 && size > 0) {
		size_t want = (size_t)size < len - 1 ? (size_t)size : len - 1;
		ssize_t got = pread(c->mem, msg, want, 0);
		msg[got > 0 ? got : 0] = 0;
	}
	close(c->mem);
}

/* Start the EAL; with `quiet`, later notices are hidden (warnings and errors still show). */
int ecat_dpdk_eal_init(int argc, char **argv, int quiet, char *msg, size_t len)
{
	struct capture c;
	capture_begin(&c);
	int rc = rte_eal_init(argc, argv);
	int err = rte_errno;
	capture_end(&c, msg, len);
	if (rc < 0)
		return -(err ? err : EINVAL);
	if (quiet)
		rte_log_set_global_level(RTE_LOG_WARNING);
	return 0;
}

/* Probe a device (PCI address or vdev devargs). 0 on success, -errno otherwise. */
int ecat_dpdk_probe(const char *devargs, char *msg, size_t len)
{
	struct capture c;
	capture_begin(&c);
	int rc = rte_dev_probe(devargs);
	capture_end(&c, msg, len);
	return rc;
}

/* The port id of an ethdev by name (a vdev name or PCI address); -ENODEV if there is none. */
int ecat_dpdk_port_by_name(const char *name)
{
	uint16_t id;
	if (rte_eth_dev_get_port_by_name(name, &id) != 0)
		return -ENODEV;
	return id;
}

/* Names of the ports DPDK has, separated by ", " (for error messages). */
void ecat_dpdk_port_names(char *out, size_t len)
{
	uint16_t id;
	size_t used = 0;
	if (len)
		out[0] = 0;
	RTE_ETH_FOREACH_DEV(id)
	{
		char name[RTE_ETH_NAME_MAX_LEN];
		if (rte_eth_dev_get_name_by_port(id, name) != 0)
			continue;
		int n = snprintf(out + used, len - used, "%s%s", used ? ", " : "", name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

static int configure(uint16_t id, int rxq_intr, uint16_t nb_desc, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	conf.intr_conf.rxq = rxq_intr ? 1 : 0;
	int rc = rte_eth_dev_configure(id, 1, 1, &conf);
	if (rc < 0)
		return rc;
	uint16_t rxd = nb_desc, txd = nb_desc;
	rte_eth_dev_adjust_nb_rx_tx_desc(id, &rxd, &txd);
	int socket = rte_eth_dev_socket_id(id);
	if (socket < 0)
		socket = 0;
	rc = rte_eth_rx_queue_setup(id, 0, rxd, (unsigned)socket, NULL, pool);
	if (rc < 0)
		return rc;
	return rte_eth_tx_queue_setup(id, 0, txd, (unsigned)socket, NULL);
}

/*
 * Configure and start port `id` with one Rx and one Tx queue of `nb_desc` descriptors and a
 * pool of `nb_mbufs` mbufs. With `want_intr`, Rx interrupts are set up where the PMD has them
 * (ecat_dpdk_intr_fd then gives the eventfd). Returns the port or NULL with -errno in *err and
 * DPDK's words in msg.
 */
struct ecat_dpdk_port *ecat_dpdk_port_open(uint16_t id, uint16_t nb_desc, unsigned nb_mbufs,
					   int want_intr, int is_vdev, int *err, char *msg,
					   size_t len)
{
	struct capture c;
	struct ecat_dpdk_port *p = calloc(1, sizeof(*p));
	*err = 0;
	if (!p) {
		*err = -ENOMEM;
		return NULL;
	}
	p->port_id = id;
	p->intr_fd = -1;
	p->is_vdev = is_vdev;
	rte_eth_dev_get_name_by_port(id, p->name);
	capture_begin(&c);
	char pool_name[RTE_MEMPOOL_NAMESIZE];
	snprintf(pool_name, sizeof(pool_name), "ecat_pool_%u", id);
	int socket = rte_eth_dev_socket_id(id);
	p->pool = rte_pktmbuf_pool_create_by_ops(pool_name, nb_mbufs, 0, 0,
						 RTE_MBUF_DEFAULT_BUF_SIZE,
						 socket < 0 ? SOCKET_ID_ANY : socket, "ring_sp_sc");
	int rc = p->pool ? 0 : -(rte_errno ? rte_errno : ENOMEM);
	if (rc == 0) {
		rc = configure(id, want_intr, nb_desc, p->pool);
		if (rc < 0 && want_intr) {
			want_intr = 0;
			rc = configure(id, 0, nb_desc, p->pool);
		}
	}
	if (rc == 0)
		rc = rte_eth_dev_start(id);
	if (rc == 0) {
		/* EtherCAT frames are broadcast, but a SubDevice may rewrite addresses. */
		rte_eth_promiscuous_enable(id);
		if (want_intr && rte_eth_dev_rx_intr_enable(id, 0) == 0) {
			p->intr_fd = rte_eth_dev_rx_intr_ctl_q_get_fd(id, 0);
			rte_eth_dev_rx_intr_disable(id, 0);
		}
	}
	capture_end(&c, msg, len);
	if (rc < 0) {
		struct rte_eth_dev_info info;
		rte_eth_dev_stop(id);
		if (is_vdev && rte_eth_dev_info_get(id, &info) == 0 && info.device)
			rte_dev_remove(info.device);
		if (p->pool)
			rte_mempool_free(p->pool);
		free(p);
		*err = rc;
		return NULL;
	}
	return p;
}

/* Stop the port, free its mbufs and pool; a virtual device is removed as well (so the same
 * name can be probed again). */
void ecat_dpdk_port_close(struct ecat_dpdk_port *p)
{
	if (!p)
		return;
	while (p->rx_head < p->rx_count)
		rte_pktmbuf_free(p->rx[p->rx_head++]);
	struct rte_eth_dev_info info;
	int have_info = rte_eth_dev_info_get(p->port_id, &info) == 0;
	rte_eth_dev_stop(p->port_id);
	if (p->is_vdev && have_info && info.device)
		rte_dev_remove(info.device);
	else
		rte_eth_dev_close(p->port_id);
	rte_mempool_free(p->pool);
	free(p);
}

void ecat_dpdk_mac(const struct ecat_dpdk_port *p, uint8_t out[6])
{
	struct rte_ether_addr a;
	memset(&a, 0, sizeof(a));
	rte_eth_macaddr_get(p->port_id, &a);
	memcpy(out, a.addr_bytes, 6);
}

/* The Rx interrupt's eventfd, or -1 if the PMD has none. */
int ecat_dpdk_intr_fd(const struct ecat_dpdk_port *p)
{
	return p->intr_fd;
}

/* Arm (1) or disarm (0) the Rx interrupt; 0 on success. */
int ecat_dpdk_intr_arm(const struct ecat_dpdk_port *p, int on)
{
	return on ? rte_eth_dev_rx_intr_enable(p->port_id, 0)
		  : rte_eth_dev_rx_intr_disable(p->port_id, 0);
}

/* After the Rx interrupt's fd became readable: consume the event (a PCI device's VFIO eventfd
 * holds an 8-byte count, UIO a 4-byte one; a virtual device's fd is the queue itself and is
 * drained by receiving). */
void ecat_dpdk_intr_clear(const struct ecat_dpdk_port *p)
{
	uint64_t count;
	if (p->is_vdev || p->intr_fd < 0)
		return;
	if (read(p->intr_fd, &count, sizeof(count)) < 0 && errno == EINVAL)
		(void)!read(p->intr_fd, &count, sizeof(uint32_t));
}

/* Transmit one frame (burst of 1): 1 sent, 0 the Tx queue is full, -ENOBUFS no free mbuf,
 * -EMSGSIZE too long for an mbuf. */
int ecat_dpdk_send(struct ecat_dpdk_port *p, const uint8_t *frame, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(p->pool);
	if (!m)
		return -ENOBUFS;
	char *data = rte_pktmbuf_append(m, len);
	if (!data) {
		rte_pktmbuf_free(m);
		return -EMSGSIZE;
	}
	memcpy(data, frame, len);
	if (rte_eth_tx_burst(p->port_id, 0, &m, 1) == 1)
		return 1;
	rte_pktmbuf_free(m);
	return 0;
}

/* Receive one frame into buf: its length (the whole frame's, even if longer than cap: only
 * cap bytes are copied), or 0 if none is waiting. */
int ecat_dpdk_recv(struct ecat_dpdk_port *p, uint8_t *buf, uint32_t cap)
{
	if (p->rx_head == p->rx_count) {
		p->rx_head = 0;
		p->rx_count = rte_eth_rx_burst(p->port_id, 0, p->rx, RX_BURST);
		if (p->rx_count == 0)
			return 0;
	}
	struct rte_mbuf *m = p->rx[p->rx_head++];
	uint32_t n = rte_pktmbuf_pkt_len(m);
	uint32_t copy = n < cap ? n : cap;
	const void *d = rte_pktmbuf_read(m, 0, copy, buf);
	if (d && d != buf)
		memcpy(buf, d, copy);
	rte_pktmbuf_free(m);
	return (int)n;
}

/* Frames the port missed (queue full, no mbuf), as DPDK's statistics count them. */
int ecat_dpdk_drops(const struct ecat_dpdk_port *p, uint64_t *drops)
{
	struct rte_eth_stats s;
	int rc = rte_eth_stats_get(p->port_id, &s);
	if (rc == 0)
		*drops = s.imissed + s.rx_nombuf;
	return rc;
}
