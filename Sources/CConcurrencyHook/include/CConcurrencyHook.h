#ifndef GATEHOUSE_CONCURRENCY_HOOK_H
#define GATEHOUSE_CONCURRENCY_HOOK_H

/// The address of the Swift runtime's global-enqueue hook (`swift_task_enqueueGlobal_hook`),
/// resolved by the linker. SwiftNIO finds the hook with dlsym, which sees it only when the runtime
/// is a shared library; a binary with the runtime linked in statically (the release build) keeps it
/// as a hidden symbol, which the linker still resolves for this file.
void *_Nullable *_Nonnull gatehouse_concurrency_enqueue_global_hook(void);

#endif
