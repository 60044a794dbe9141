#include "CConcurrencyHook.h"

extern void *swift_task_enqueueGlobal_hook;

bool gatehouse_concurrency_install_enqueue_global_hook(void *hook) {
    void *expected = 0;
    return __atomic_compare_exchange_n(&swift_task_enqueueGlobal_hook, &expected, hook, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
