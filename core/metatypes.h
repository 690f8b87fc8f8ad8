// Registers core's value types for queued signals across threads. Safe to call more than once;
// the Engine calls it, and so should any program that connects to core signals from another thread.
#pragma once

namespace kev {

void registerMetaTypes();

} // namespace kev
