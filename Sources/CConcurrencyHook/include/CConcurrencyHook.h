#ifndef GATEHOUSE_CONCURRENCY_HOOK_H
#define GATEHOUSE_CONCURRENCY_HOOK_H

#include <stdbool.h>

/// Sets the Swift runtime's global-enqueue hook (`swift_task_enqueueGlobal_hook`) to `hook` if no
/// hook is set yet (an atomic compare-and-swap, as SwiftNIO does); true when it was set. The hook
/// is resolved by the linker: SwiftNIO finds it with dlsym, which sees it only when the runtime is
/// a shared library, while a binary with the runtime linked in statically (the release build)
/// keeps it as a hidden symbol, which the linker still resolves for this file.
bool gatehouse_concurrency_install_enqueue_global_hook(void *_Nonnull hook);

#endif
