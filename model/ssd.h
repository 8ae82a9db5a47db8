// The SSD model: flash read and program latency, channels serving requests (or parts of one)
// in parallel, bandwidth, a volatile write buffer drained in the background, and the flush
// cost with and without power-loss protection. Instances are not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "model/device.h"
#include "model/params.h"
#include "traces/status.h"

namespace iorr::model {

// Checks every field of p; the error names it (`"channels": must be >= 1 (got 0)`), with
// field_prefix inside the quotes.
Status ValidateSsd(const SsdParams& p, std::string_view field_prefix = "");

Result<std::unique_ptr<DeviceModel>> MakeSsd(std::string name, const SsdParams& p,
                                             const DeviceSettings& settings);

}  // namespace iorr::model
