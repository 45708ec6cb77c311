/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device quirks (rv_quirks.c): the calls through which the rest of rv
 * lets one driver's defects be worked around.
 */
#ifndef RV_QUIRKS_H
#define RV_QUIRKS_H

#include <rdma/ib_verbs.h>

void rv_quirk_free_cq(struct ib_cq *cq);

#endif /* RV_QUIRKS_H */
