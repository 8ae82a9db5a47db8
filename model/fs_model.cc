// See fs_model.h: the registry of file-system models.
#include "model/fs_model.h"

#include "model/fs/models.h"

namespace iorr::model {

const std::vector<std::string_view>& FsModelNames() {
  static const std::vector<std::string_view> names = {"ext4", "ext3", "ext2", "xfs", "xfs-legacy"};
  return names;
}

Result<FsModelResult> RunFsModel(std::string_view fs, const std::string& trace_path,
                                 DeviceModel& device, const FsModelOptions& options) {
  std::unique_ptr<fs::FsBase> m;
  if (fs == "ext4")
    m = fs::MakeExt4(device, options);
  else if (fs == "ext3")
    m = fs::MakeExt3(device, options);
  else if (fs == "ext2")
    m = fs::MakeExt2(device, options);
  else if (fs == "xfs")
    m = fs::MakeXfs(device, options);
  else if (fs == "xfs-legacy")
    m = fs::MakeXfsLegacy(device, options);
  else {
    std::string known;
    for (std::string_view n : FsModelNames())
      known += std::string(known.empty() ? "" : ", ") + std::string(n);
    return Status::Error("no file-system model \"" + std::string(fs) + "\" (known: " + known + ")");
  }
  FsModelResult r;
  if (Status s = m->Run(trace_path, &r); !s.ok()) return s;
  return r;
}

}  // namespace iorr::model
