// Parameters of the device models, as profiles (model/profiles/*.json, read by profile.h)
// give them. Plain value types; model/profiles/README.md documents every field. The defaults
// are the shipped hdd-7200 and ssd-sata profiles.
#pragma once

#include <cstdint>
#include <string>

namespace iorr::model {

struct HddParams {
  double capacity_gb = 500;  // decimal GB (1e9 bytes)
  double rpm = 7200;
  uint32_t heads = 4;              // recording surfaces: tracks per cylinder
  double track_to_track_ms = 1.0;  // seek of one cylinder
  double average_seek_ms = 8.5;    // mean seek between two uniformly random sectors
  double full_stroke_ms = 18.0;    // seek across the whole disk
  double outer_mb_per_s = 85;      // media rate at sector 0 (1 MB = 1e6 bytes)
  double inner_mb_per_s = 45;      // media rate at the last sector
  double interface_mb_per_s = 300;
  double command_overhead_ms = 0.1;  // controller time per host command
  double cache_mib = 32;             // write-back capacity
  bool write_cache = true;           // as the drive ships
  double read_ahead_kib = 1024;      // read-ahead after a read miss; 0: none
  uint32_t queue_depth = 31;         // commands the drive holds (NCQ/TCQ); 1: none
  bool reorder = true;               // shortest-positioning-time-first among queued commands
  bool fua = true;                   // FUA writes reach it as FUA (else: write + flush)
};

struct SsdParams {
  double capacity_gb = 500;
  double read_latency_us = 40;      // flash read of a small request
  double write_latency_us = 35;     // accepting a write into the write buffer
  double program_latency_us = 300;  // writing a small request to flash, buffer bypassed
  double read_mb_per_s = 540;       // flash read bandwidth, all channels
  double write_mb_per_s = 500;      // flash program bandwidth, all channels
  double interface_mb_per_s = 550;
  uint32_t channels = 8;  // requests (or parts of one) served at once
  uint32_t queue_depth = 32;
  double buffer_mib = 32;  // volatile write buffer
  bool write_cache = true;
  bool power_loss_protection = false;
  double flush_ms = 2.0;         // fixed flush cost
  double flush_per_mb_ms = 2.0;  // added per MB in the buffer at a flush (no PLP)
  bool fua = true;
};

}  // namespace iorr::model
