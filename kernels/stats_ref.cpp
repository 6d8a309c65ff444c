// SPDX-License-Identifier: MIT
// CPU twin of stats: exact 64-bit integer sums for GRAY8 and S16, double sums for F32.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/stats.h"

namespace jetpipe {

namespace {

// Integer formats: a row's minimum, maximum and sums in integer locals (the compiler vectorizes
// the loop), folded into acc once a row; the same integers as pixel by pixel.
template <class T>
void accumulate_int(const ImageView& src, int y0, int y1, StatsAccum* acc) {
  if (src.width <= 0) return;
  for (int y = y0; y < y1; ++y) {
    const T* s = src.row<const T>(y);
    std::int32_t lo = s[0], hi = s[0];
    std::int64_t sum = 0;
    std::uint64_t sumsq = 0;
    for (int x = 0; x < src.width; ++x) {
      const std::int32_t v = s[x];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
      sumsq += static_cast<std::uint64_t>(static_cast<std::uint32_t>(v * v));
    }
    if (acc->count == 0) {
      acc->min = lo;
      acc->max = hi;
    } else {
      acc->min = std::min(acc->min, static_cast<double>(lo));
      acc->max = std::max(acc->max, static_cast<double>(hi));
    }
    acc->isum += sum;
    acc->isumsq += sumsq;
    acc->count += src.width;
  }
}

void accumulate_float(const ImageView& src, int y0, int y1, StatsAccum* acc) {
  for (int y = y0; y < y1; ++y) {
    const float* s = src.row<const float>(y);
    for (int x = 0; x < src.width; ++x) {
      const double v = s[x];
      if (acc->count == 0) acc->min = acc->max = v;
      acc->min = std::min(acc->min, v);
      acc->max = std::max(acc->max, v);
      acc->fsum += v;
      acc->fsumsq += v * v;
      ++acc->count;
    }
  }
}

}  // namespace

void stats_ref(const ImageView& src, int y0, int y1, StatsAccum* acc) {
  switch (src.format) {
    case PixelFormat::kS16:
      accumulate_int<std::int16_t>(src, y0, y1, acc);
      break;
    case PixelFormat::kF32:
      accumulate_float(src, y0, y1, acc);
      break;
    default:
      accumulate_int<std::uint8_t>(src, y0, y1, acc);
      break;
  }
}

void stats_merge(StatsAccum* into, const StatsAccum& part) {
  if (part.count == 0) return;
  if (into->count == 0) {
    into->min = part.min;
    into->max = part.max;
  } else {
    into->min = std::min(into->min, part.min);
    into->max = std::max(into->max, part.max);
  }
  into->isum += part.isum;
  into->isumsq += part.isumsq;
  into->fsum += part.fsum;
  into->fsumsq += part.fsumsq;
  into->count += part.count;
}

StatsResult stats_finish(const StatsAccum& acc, PixelFormat format) {
  StatsResult r;
  r.count = acc.count;
  r.integral = format != PixelFormat::kF32;
  if (acc.count == 0) return r;
  r.min = acc.min;
  r.max = acc.max;
  const double n = static_cast<double>(acc.count);
  if (format == PixelFormat::kF32) {
    r.mean = acc.fsum / n;
    r.stddev = std::sqrt(std::max(acc.fsumsq / n - r.mean * r.mean, 0.0));
  } else {
    // n²·variance = n·Σv² − (Σv)², exact in 128-bit integers (a GCC/Clang extension); the division
    // by n² and the square root are the only roundings.
    using i128 = __int128;
    const i128 num = static_cast<i128>(acc.count) * static_cast<i128>(acc.isumsq) -
                     static_cast<i128>(acc.isum) * static_cast<i128>(acc.isum);
    r.mean = static_cast<double>(acc.isum) / n;
    r.stddev = std::sqrt(static_cast<double>(num) / (n * n));
  }
  return r;
}

}  // namespace jetpipe
