// SPDX-License-Identifier: MIT
// read_image / write_image: the built-in PNM/PFM codecs, and OpenCV's for PNG, JPEG, BMP, TIFF.
#include "pipeline/io/image_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "pipeline/io/convert.h"
#include "pipeline/io/io_internal.h"

#if JETPIPE_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace jetpipe {

namespace io_detail {

FilePtr open_file(const std::string& path, const char* mode) {
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), mode);
  if (f == nullptr) {
    const std::string why = std::strerror(errno);
    if (mode[0] == 'r') throw input_error("cannot open: " + why);
    throw Error("cannot write: " + why);
  }
  return FilePtr(f);
}

std::uint64_t regular_file_size(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) throw input_error("no such file");
  if (ec) throw input_error("cannot open: " + ec.message());
  if (st.type() == fs::file_type::directory) throw input_error("is a directory, not an image file");
  if (st.type() != fs::file_type::regular) throw input_error("not a regular file");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw input_error("cannot open: " + ec.message());
  return size;
}

std::string lower_extension(const std::string& path) {
  const std::string name = file_name(path);
  const std::size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0) return std::string();
  std::string ext = name.substr(dot + 1);
  for (char& c : ext) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return ext;
}

std::string file_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool is_opencv_extension(const std::string& e) {
  return e == "png" || e == "jpg" || e == "jpeg" || e == "bmp" || e == "tif" || e == "tiff";
}

bool is_frame_extension(const std::string& e) {
  return e == "pgm" || e == "ppm" || e == "pnm" || is_opencv_extension(e);
}

namespace {

bool is_pnm_extension(const std::string& e) { return e == "pgm" || e == "ppm" || e == "pnm"; }

constexpr const char* kBuiltIn = ".pgm .ppm .pnm .pfm";

#if JETPIPE_HAVE_OPENCV
std::string codec_name(const std::string& ext) {
  if (ext == "png") return "PNG";
  if (ext == "jpg" || ext == "jpeg") return "JPEG";
  if (ext == "bmp") return "BMP";
  if (ext == "tif" || ext == "tiff") return "TIFF";
  return "image";
}

// Runs op(dst) with dst a cv::Mat header over the HostImage's pixels (pitch included), so OpenCV
// writes straight into our buffer (the allocator's, padded pitch and all); copies row by row if
// OpenCV chose to reallocate anyway.
template <class Op>
void into(const HostImage& img, int cv_type, Op op) {
  const ImageView v = img.view();
  cv::Mat dst(v.height, v.width, cv_type, v.data, v.pitch);
  op(dst);
  if (dst.data != v.data) dst.copyTo(cv::Mat(v.height, v.width, cv_type, v.data, v.pitch));
}

HostImage read_with_opencv(const std::string& path, const std::string& ext,
                           const ImageAllocator& alloc) {
  regular_file_size(path);
  cv::Mat m;
  try {
    // imread cannot decode into a given buffer (the size is unknown until the header is read):
    // decode into a Mat, then one copy into the allocator's image.
    m = cv::imread(path, cv::IMREAD_UNCHANGED);
  } catch (const cv::Exception& e) {
    throw input_error("cannot decode: " + e.msg);
  }
  if (m.empty()) {
    throw input_error("cannot decode: not a valid " + codec_name(ext) + " image, or truncated");
  }
  const int depth = m.depth();
  const int ch = m.channels();
  if (depth == CV_16U) {
    throw input_error("16-bit images are not supported (only 8-bit gray or colour)");
  }
  if (ch == 1 && depth == CV_16S) {
    HostImage img = allocate_image(alloc, m.cols, m.rows, PixelFormat::kS16);
    into(img, CV_16SC1, [&](cv::Mat& d) { m.copyTo(d); });
    return img;
  }
  if (ch == 1 && depth == CV_32F) {
    HostImage img = allocate_image(alloc, m.cols, m.rows, PixelFormat::kF32);
    into(img, CV_32FC1, [&](cv::Mat& d) { m.copyTo(d); });
    return img;
  }
  if (depth != CV_8U || ch < 1 || ch > 4) {
    throw input_error("unsupported pixel type (" + std::to_string(ch) + " channels, depth " +
                      std::to_string(depth) + "): only 8-bit gray or colour images are read");
  }
  if (ch <= 2) {
    HostImage img = allocate_image(alloc, m.cols, m.rows, PixelFormat::kGray8);
    into(img, CV_8UC1, [&](cv::Mat& d) {
      if (ch == 1) {
        m.copyTo(d);
      } else {
        cv::extractChannel(m, d, 0);  // gray + alpha: drop the alpha
      }
    });
    return img;
  }
  HostImage img = allocate_image(alloc, m.cols, m.rows, PixelFormat::kBgr8);
  into(img, CV_8UC3, [&](cv::Mat& d) {
    if (ch == 3) {
      m.copyTo(d);
    } else {
      cv::cvtColor(m, d, cv::COLOR_BGRA2BGR);  // drop the alpha
    }
  });
  return img;
}

// Why a file could not be written, as far as the file system says (OpenCV's imwrite gives no
// reason): the folder missing or not writable, or the disk full.
std::string why_not_written(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return dir.string() + " is not a folder";
  if (::access(dir.c_str(), W_OK) != 0) return dir.string() + ": " + std::strerror(errno);
  const fs::space_info sp = fs::space(dir, ec);
  if (!ec && sp.available < (std::uintmax_t{1} << 20)) {
    return "the disk is full: " + std::to_string(sp.available) + " bytes free";
  }
  return "the folder is writable and has space: the encoder failed";
}

void write_with_opencv(const std::string& path, const ImageView& v, const std::string& ext) {
  const bool tiff = ext == "tif" || ext == "tiff";
  int type;
  switch (v.format) {
    case PixelFormat::kGray8:
      type = CV_8UC1;
      break;
    case PixelFormat::kBgr8:
    case PixelFormat::kRgb8:
      type = CV_8UC3;
      break;
    case PixelFormat::kS16:
      type = CV_16SC1;
      break;
    case PixelFormat::kF32:
      type = CV_32FC1;
      break;
    default:
      type = -1;
  }
  if ((v.format == PixelFormat::kS16 || v.format == PixelFormat::kF32) && !tiff) {
    throw config_error(std::string("cannot write ") + to_string(v.format) + " as ." + ext +
                       " (s16/f32 → .tiff or .pfm)");
  }
  if (type < 0 || v.empty()) throw config_error("cannot write an empty or unknown image");
  cv::Mat m(v.height, v.width, type, v.data, v.pitch);
  cv::Mat bgr;
  if (v.format == PixelFormat::kRgb8) {
    cv::cvtColor(m, bgr, cv::COLOR_RGB2BGR);
    m = bgr;
  }
  bool ok = false;
  try {
    ok = cv::imwrite(path, m);
  } catch (const cv::Exception& e) {
    throw Error("cannot write: " + e.msg);
  }
  if (!ok)
    throw Error("cannot write: OpenCV could not encode or create the file (" +
                why_not_written(path) + ")");
}
#endif  // JETPIPE_HAVE_OPENCV

HostImage sniff_and_read(const std::string& path, const std::string& ext,
                         const ImageAllocator& alloc) {
  regular_file_size(path);
  FilePtr f = open_file(path, "rb");
  const int a = std::getc(f.get());
  const int b = std::getc(f.get());
  f.reset();
  if (a == 'P' && (b == 'f' || b == 'F')) return read_pfm(path, alloc);
  if (a == 'P' && b >= '1' && b <= '7') return read_pnm(path, alloc);
#if JETPIPE_HAVE_OPENCV
  return read_with_opencv(path, ext, alloc);
#else
  throw input_error("unknown image type (extension '" + ext + "'); built without OpenCV: only " +
                    kBuiltIn + " files can be read");
#endif
}

}  // namespace

HostImage decode_image_file(const std::string& path, const ImageAllocator& alloc) {
  const std::string ext = lower_extension(path);
  if (is_pnm_extension(ext)) return read_pnm(path, alloc);
  if (ext == "pfm") return read_pfm(path, alloc);
  if (is_opencv_extension(ext)) {
#if JETPIPE_HAVE_OPENCV
    return read_with_opencv(path, ext, alloc);
#else
    regular_file_size(path);
    throw input_error("built without OpenCV: only PGM/PPM frames can be read");
#endif
  }
  return sniff_and_read(path, ext, alloc);
}

}  // namespace io_detail

bool have_opencv_codecs() { return JETPIPE_HAVE_OPENCV != 0; }

HostImage read_image(const std::string& path, const ImageAllocator& alloc) {
  try {
    return io_detail::decode_image_file(path, alloc);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what(), e.kind());
  }
}

void write_image(const std::string& path, const ImageView& frame) {
  const std::string ext = io_detail::lower_extension(path);
  try {
    const bool gray = frame.format == PixelFormat::kGray8;
    const bool colour = frame.format == PixelFormat::kNv12 || is_colour(frame.format);
    if ((ext == "pgm" && !gray) || (ext == "ppm" && !colour)) {
      throw config_error(std::string("cannot write ") + to_string(frame.format) + " as ." + ext +
                         " (gray8 → .pgm, bgr8/rgb8/bgrx8/rgbx8/rgba8/nv12 → .ppm, s16/f32 → .pfm" +
                         (have_opencv_codecs() ? " or .tiff)" : ")"));
    }
    // The 4-byte layouts and NV12 are written as the BGR picture they hold (convert.h).
    HostImage bgr;
    if (colour && bytes_per_pixel(frame.format) != 3 && ext != "pfm") {
      bgr = convert_8bit(frame, PixelFormat::kBgr8);
    }
    const ImageView image = bgr.empty() ? frame : bgr.view();
    if (io_detail::is_pnm_extension(ext)) {
      io_detail::write_pnm(path, image);
    } else if (ext == "pfm") {
      io_detail::write_pfm(path, image);
    } else if (io_detail::is_opencv_extension(ext)) {
#if JETPIPE_HAVE_OPENCV
      io_detail::write_with_opencv(path, image, ext);
#else
      throw config_error("built without OpenCV: cannot write ." + ext +
                         "; built in: " + io_detail::kBuiltIn);
#endif
    } else {
      throw config_error(
          "unknown image extension '" + ext + "' (built in: " + io_detail::kBuiltIn +
          (have_opencv_codecs() ? "; with OpenCV: .png .jpg .jpeg .bmp .tif .tiff)" : ")"));
    }
  } catch (const Error& e) {
    throw Error(path + ": " + e.what(), e.kind());
  }
}

std::string preferred_extension(PixelFormat format) {
  switch (format) {
    case PixelFormat::kGray8:
      return have_opencv_codecs() ? "png" : "pgm";
    case PixelFormat::kBgr8:
    case PixelFormat::kRgb8:
    case PixelFormat::kBgrx8:
    case PixelFormat::kRgbx8:
    case PixelFormat::kRgba8:
    case PixelFormat::kNv12:
      return have_opencv_codecs() ? "png" : "ppm";
    case PixelFormat::kS16:
    case PixelFormat::kF32:
      return have_opencv_codecs() ? "tiff" : "pfm";
  }
  return "pgm";
}

// Digit runs compare by numeric value; text compares byte by byte (a digit against a non-digit
// compares as characters). When both strings are equal under that rule, the first digit run that
// differs in length decides (shorter first: "f2" < "f02"), then plain byte order.
bool natural_less(const std::string& a, const std::string& b) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0, j = 0;
  int tie = 0;  // -1: a first, +1: b first, from the first digit runs of unequal length
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      std::size_t is = i, js = j;  // skip leading zeros
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      const std::size_t la = ie - is, lb = je - js;
      if (la != lb) return la < lb;
      const int c = a.compare(is, la, b, js, lb);
      if (c != 0) return c < 0;
      if (tie == 0 && ie - i != je - j) tie = (ie - i) < (je - j) ? -1 : 1;
      i = ie;
      j = je;
    } else {
      const auto ca = static_cast<unsigned char>(a[i]);
      const auto cb = static_cast<unsigned char>(b[j]);
      if (ca != cb) return ca < cb;
      ++i;
      ++j;
    }
  }
  if (i < a.size() || j < b.size()) return j < b.size();  // a ran out first: a is a prefix
  if (tie != 0) return tie < 0;
  return a < b;
}

}  // namespace jetpipe
