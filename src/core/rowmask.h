/* evtop — masking a result set: what a list, a detail or a trace read, its personal data
 * hidden before anything shows or writes it (doc/privacy.md). */
#ifndef EV_CORE_ROWMASK_H
#define EV_CORE_ROWMASK_H

#include "core/mask.h"
#include "core/rowset.h"

/* Mask rs in place by m: the payload and header columns (JSON: by key and by value,
 * core/mask.h) and the text columns an application writes free text or a business id into
 * (biz_id, aggregate_id, fail_reason, remark: by value). Other columns — ids, event_no,
 * types, times, statuses — are never changed. Returns the number of values masked. */
size_t ev_mask_rowset(const struct ev_mask *m, struct ev_rowset *rs);

#endif
