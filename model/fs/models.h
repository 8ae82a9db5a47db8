// The file-system models' constructors, one per file (model/fs_model.h lists them).
#pragma once

#include <memory>

#include "model/fs/fs_base.h"

namespace iorr::model::fs {

std::unique_ptr<FsBase> MakeExt4(DeviceModel& dev, const FsModelOptions& o);
std::unique_ptr<FsBase> MakeExt3(DeviceModel& dev, const FsModelOptions& o);
std::unique_ptr<FsBase> MakeExt2(DeviceModel& dev, const FsModelOptions& o);
std::unique_ptr<FsBase> MakeXfs(DeviceModel& dev, const FsModelOptions& o);
std::unique_ptr<FsBase> MakeXfsLegacy(DeviceModel& dev, const FsModelOptions& o);

}  // namespace iorr::model::fs
