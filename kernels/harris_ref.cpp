// SPDX-License-Identifier: MIT
// CPU twin of harris: an exact integer core, then one evaluation in double (harris.h spells out the
// operations; the CUDA twin repeats them bit for bit):
//   Dx, Dy     = integer Sobel(ksize) of the image extended by its border            (int32)
//   Sxx, Sxy, Syy = Σ over the block_size² box (anchor block_size / 2) of Dx², Dx·Dy, Dy²,
//                 the border applying to the structure tensor (constant: 0)
//   R          = evaluated in double from the three sums, rounded once to float.
// Integer sums are exact in any order, so the code streams tensor rows: each row's gradients from
// a ring of extended image rows (separable: down, then across), its products summed across the
// box, and a running sum of the last block_size such rows down. Loops run along x over planar
// rows so the compiler vectorizes them; the sums are int32 where they cannot overflow it (ksize 1
// or 3 up to block 22: the default), int64 otherwise. Decision 038 has the figures.
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/harris.h"
#include "kernels/ref_util.h"
#include "kernels/sobel.h"

namespace jetpipe {

namespace {

struct Taps {
  std::vector<int> x, y;  // along x, along y (odd lengths)
  long long abs_x = 0, abs_y = 0;  // Σ|taps|
};

Taps sobel_for(int dx, int dy, int ksize) {
  SobelParams sp;
  sp.dx = dx;
  sp.dy = dy;
  sp.ksize = ksize;
  std::vector<float> kx, ky;
  sobel_taps(sp, &kx, &ky);  // small integers, exact in float
  Taps t;
  for (float v : kx) t.x.push_back(static_cast<int>(v));
  for (float v : ky) t.y.push_back(static_cast<int>(v));
  for (int v : t.x) t.abs_x += v < 0 ? -v : v;
  for (int v : t.y) t.abs_y += v < 0 ? -v : v;
  return t;
}

// Extended image rows (ref::extended_row, r pixels each side), kept by row number in a ring of
// 2r + 1: the rows one gradient row reads are 2r + 1 consecutive numbers, so never share a slot.
class RowRing {
 public:
  RowRing(const ImageView& src, const Border& border, int r)
      : src_(src),
        border_(border),
        r_(r),
        n_(2 * r + 1),
        stride_(static_cast<std::size_t>(src.width) + 2 * r),
        data_(stride_ * static_cast<std::size_t>(n_)),
        held_(static_cast<std::size_t>(n_), std::numeric_limits<int>::min()) {}
  // Row y extended (element 0 is x = −r).
  const std::uint8_t* row(int y) {
    const int slot = ((y % n_) + n_) % n_;
    std::uint8_t* out = &data_[stride_ * static_cast<std::size_t>(slot)];
    if (held_[slot] != y) {
      ref::extended_row(src_, border_, y, r_, out);
      held_[slot] = y;
    }
    return out;
  }

 private:
  const ImageView& src_;
  const Border& border_;
  int r_, n_;
  std::size_t stride_;
  std::vector<std::uint8_t> data_;
  std::vector<int> held_;
};

// d[i] = Σ_a t[a] · rows[a][i] for i < n (the taps down one column); zero taps skipped.
void filter_down(const std::vector<int>& t, const std::uint8_t* const* rows, int n,
                 std::int32_t* d) {
  for (int i = 0; i < n; ++i) d[i] = 0;
  for (std::size_t a = 0; a < t.size(); ++a) {
    const std::int32_t c = t[a];
    if (c == 0) continue;
    const std::uint8_t* s = rows[a];
    for (int i = 0; i < n; ++i) d[i] += c * static_cast<std::int32_t>(s[i]);
  }
}

// d[x] = Σ_b t[b] · v[x + b] for x < n (the taps across one row); zero taps skipped.
void filter_across(const std::vector<int>& t, const std::int32_t* v, int n, std::int32_t* d) {
  for (int x = 0; x < n; ++x) d[x] = 0;
  for (std::size_t b = 0; b < t.size(); ++b) {
    const std::int32_t c = t[b];
    if (c == 0) continue;
    const std::int32_t* s = v + b;
    for (int x = 0; x < n; ++x) d[x] += c * s[x];
  }
}

// Output rows [y0, y1), the sums in S (int32 where harris_ref proves they fit, else int64).
template <class S>
void harris_rows(const HarrisParams& p, const Taps& tdx, const Taps& tdy, const ImageView& src,
                 const ImageView& dst, int y0, int y1) {
  const int w = src.width, h = src.height;
  const int r = p.ksize == 1 ? 1 : p.ksize / 2;  // gradient radius
  const int bs = p.block_size, anchor = bs / 2;
  const double s2 = harris_s2(p);
  const double k = p.k;
  const std::size_t wz = static_cast<std::size_t>(w);
  const std::size_t ew = wz + 2 * static_cast<std::size_t>(r);   // extended image row
  const std::size_t pw = wz + static_cast<std::size_t>(bs) - 1;  // extended tensor row

  RowRing ring(src, p.border, r);
  std::vector<const std::uint8_t*> rows(static_cast<std::size_t>(2 * r + 1));
  std::vector<std::int32_t> down_x(ew), down_y(ew), gx(wz), gy(wz);
  // One tensor row's products, extended by the border across ([0] is x = −anchor).
  std::vector<S> pxx(pw), pxy(pw), pyy(pw);
  // The last bs rows of box sums across (a ring), and their running sum down.
  std::vector<S> hxx(wz * bs), hxy(wz * bs), hyy(wz * bs);
  std::vector<S> vxx(wz, 0), vxy(wz, 0), vyy(wz, 0);

  // Tensor rows y0 − anchor … y1 − 1 + (bs − 1 − anchor): each the remapped image row's (0 outside
  // a constant border, where the tensor is 0).
  const int first = y0 - anchor;
  const int count = y1 - y0 + bs - 1;
  for (int i = 0; i < count; ++i) {
    const int sy = border_remap(first + i, h, p.border.mode);
    S* hx = &hxx[(i % bs) * wz];
    S* hy = &hxy[(i % bs) * wz];
    S* hz = &hyy[(i % bs) * wz];
    if (i >= bs) {  // the row leaving the box down
      for (std::size_t x = 0; x < wz; ++x) {
        vxx[x] -= hx[x];
        vxy[x] -= hy[x];
        vyy[x] -= hz[x];
      }
    }
    if (sy < 0) {
      std::fill(hx, hx + wz, S(0));
      std::fill(hy, hy + wz, S(0));
      std::fill(hz, hz + wz, S(0));
    } else {
      // Gradients of image row sy: down each column, then across.
      const auto grad = [&](const Taps& t, std::int32_t* down, std::int32_t* g) {
        const int hy = static_cast<int>(t.y.size()) / 2, hxr = static_cast<int>(t.x.size()) / 2;
        for (std::size_t a = 0; a < t.y.size(); ++a) {
          rows[a] = ring.row(sy - hy + static_cast<int>(a));
        }
        filter_down(t.y, rows.data(), static_cast<int>(ew), down);
        filter_across(t.x, down + (r - hxr), w, g);
      };
      grad(tdx, down_x.data(), gx.data());
      grad(tdy, down_y.data(), gy.data());
      S* qxx = pxx.data() + anchor;
      S* qxy = pxy.data() + anchor;
      S* qyy = pyy.data() + anchor;
      for (std::size_t x = 0; x < wz; ++x) {
        const S dx = gx[x], dy = gy[x];
        qxx[x] = dx * dx;
        qxy[x] = dx * dy;
        qyy[x] = dy * dy;
      }
      // The tensor across the border: the remapped cell's, 0 for a constant border.
      for (int j = 0; j < bs - 1; ++j) {
        const int e = j < anchor ? j : w + j;  // the extended index of the j-th edge cell
        const int sx = border_remap(e - anchor, w, p.border.mode);
        pxx[e] = sx < 0 ? S(0) : qxx[sx];
        pxy[e] = sx < 0 ? S(0) : qxy[sx];
        pyy[e] = sx < 0 ? S(0) : qyy[sx];
      }
      // Box sums across.
      for (std::size_t x = 0; x < wz; ++x) {
        S a = 0, b = 0, c = 0;
        for (int j = 0; j < bs; ++j) {
          a += pxx[x + j];
          b += pxy[x + j];
          c += pyy[x + j];
        }
        hx[x] = a;
        hy[x] = b;
        hz[x] = c;
      }
    }
    for (std::size_t x = 0; x < wz; ++x) {
      vxx[x] += hx[x];
      vxy[x] += hy[x];
      vyy[x] += hz[x];
    }
    if (i < bs - 1) continue;
    // Output row y's box is complete; harris.h: |sums| < 2^47, exact in double; then the
    // operations in this order, each rounded to nearest (no contraction: the kernels library
    // builds with -ffp-contract=off).
    float* d = dst.row<float>(y0 + i - (bs - 1));
    for (std::size_t x = 0; x < wz; ++x) {
      const double a = static_cast<double>(vxx[x]) * s2;
      const double b = static_cast<double>(vxy[x]) * s2;
      const double c = static_cast<double>(vyy[x]) * s2;
      const double det = a * c - b * b;
      const double tr = a + c;
      d[x] = static_cast<float>(det - k * tr * tr);
    }
  }
}

}  // namespace

void harris_ref(const HarrisParams& p, const ImageView& src, const ImageView& dst, int y0, int y1) {
  if (y0 >= y1) return;
  const Taps tdx = sobel_for(1, 0, p.ksize), tdy = sobel_for(0, 1, p.ksize);
  // |D| ≤ 255 · Σ|taps across| · Σ|taps down|; a box sum ≤ block_size² · max|D|².
  const long long gmax = 255 * std::max(tdx.abs_x * tdx.abs_y, tdy.abs_x * tdy.abs_y);
  const long long bs = p.block_size;
  if (gmax * gmax * bs * bs <= std::numeric_limits<std::int32_t>::max()) {
    harris_rows<std::int32_t>(p, tdx, tdy, src, dst, y0, y1);
  } else {
    harris_rows<std::int64_t>(p, tdx, tdy, src, dst, y0, y1);
  }
}

}  // namespace jetpipe
