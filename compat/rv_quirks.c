// SPDX-License-Identifier: GPL-2.0
/*
 * Driver defects of older kernels that the out-of-tree build works
 * around (compat/Kbuild compiles this file only for the kernels that
 * have one; rv_compat.h sends rv's calls here). In tree, and on newer
 * kernels, rv calls the verbs API directly.
 *
 * Soft-RoCE (rdma_rxe), Linux 6.1 to 6.3: a CQ notification is handed to
 * a tasklet (cq->comp_task) that neither rxe_destroy_cq nor ib_free_cq
 * kills. When rv's poller has already reaped the drain's last completion
 * the tasklet can still be pending, or running on another CPU, and then
 * touch the freed CQ. Since 6.4 rxe calls the handler inline ("RDMA/rxe:
 * Remove tasklet call from rxe_cq.c"). Once the QP is destroyed nothing
 * schedules the tasklet again, so letting every pending tasklet run
 * before the free makes it safe.
 */
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/interrupt.h>
#include <linux/smp.h>

/* rv_compat.h, included first, renamed ib_free_cq() to this file's. */
#undef ib_free_cq

struct rv_tasklet_barrier {
	struct tasklet_struct tasklet;
	struct completion done;
};

static void rv_tasklet_barrier_done(struct tasklet_struct *t)
{
	struct rv_tasklet_barrier *b = from_tasklet(b, t, tasklet);

	complete(&b->done);
}

static void rv_tasklet_barrier_queue(void *arg)
{
	struct rv_tasklet_barrier *b = arg;

	tasklet_schedule(&b->tasklet);
}

/*
 * Wait until every tasklet that is pending on any CPU now has run. A CPU
 * runs its tasklets in the order they were scheduled, so one more,
 * scheduled on that CPU, completes after them. CPU hotplug is held off:
 * a CPU going down hands its pending tasklets to another.
 */
static void rv_tasklet_barrier(void)
{
	struct rv_tasklet_barrier b;
	int cpu;

	tasklet_setup(&b.tasklet, rv_tasklet_barrier_done);
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		init_completion(&b.done);
		smp_call_function_single(cpu, rv_tasklet_barrier_queue, &b, 1);
		wait_for_completion(&b.done);
	}
	cpus_read_unlock();
	/* The last run may still be leaving tasklet_action. */
	tasklet_kill(&b.tasklet);
}

/*
 * Free a CQ whose QP is destroyed. May sleep. On rxe it takes
 * cpu_hotplug_lock: rv frees CQs under rv_sconn.mutex (7 in the locking
 * order of rv.h), never under a spinlock, and cpu_hotplug_lock is never
 * held around rv's code, so it nests under 7.
 */
void rv_quirk_free_cq(struct ib_cq *cq)
{
	if (cq->device->ops.driver_id == RDMA_DRIVER_RXE)
		rv_tasklet_barrier();
	ib_free_cq(cq);
}
