# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# Sourced, not run: points this shell at the GStreamer bundled in .deps/gst by
# tools/gpu/gst-bundle.sh, for the build (pkg-config finds the bundle's .pc files, which point at
# its headers and libraries) and for the tests (the loader finds its libraries, GStreamer its
# plugins and plugin scanner, a fresh registry). tools/gpu/device-test.sh sources it when .deps/gst
# exists. Test tooling only: jetpipe itself reads none of these variables.
#   . tools/gpu/gst-env.sh          the bundle first, the machine's .pc files after it
#   . tools/gpu/gst-env.sh --only   the bundle's .pc files alone (proving the bundle complete on a
#                                   machine that has GStreamer installed)
# Plugins come from the bundle alone either way (GST_PLUGIN_SYSTEM_PATH_1_0 replaces the system's
# and the user's plugin folders; GST_PLUGIN_PATH* are unset). The registry is a fresh file per
# sourcing, so nvcodec registers what this machine's GPU and driver offer.
_jp_gst=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.deps/gst
if [ ! -f "$_jp_gst/MANIFEST" ]; then
  echo "gst-env: no GStreamer bundle at $_jp_gst (make it with tools/gpu/gst-bundle.sh)" >&2
  unset _jp_gst
  return 1
fi
_jp_lib=$_jp_gst/usr/lib/x86_64-linux-gnu
export PATH="$_jp_gst/usr/bin:$PATH"
export LD_LIBRARY_PATH="$_jp_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PKG_CONFIG="$_jp_gst/usr/bin/pkgconf"  # CMake's FindPkgConfig takes it from here
if [ "${1:-}" = "--only" ]; then
  export PKG_CONFIG_LIBDIR="$_jp_lib/pkgconfig"
  unset PKG_CONFIG_PATH
else
  export PKG_CONFIG_PATH="$_jp_lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
fi
export GST_PLUGIN_SYSTEM_PATH_1_0="$_jp_lib/gstreamer-1.0"
export GST_PLUGIN_SCANNER_1_0="$_jp_lib/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner"
unset GST_PLUGIN_PATH GST_PLUGIN_PATH_1_0 GST_PLUGIN_SYSTEM_PATH GST_PLUGIN_SCANNER
GST_REGISTRY_1_0="$(mktemp -d "${TMPDIR:-/tmp}/jetpipe-gst.XXXXXX")/registry.bin"
export GST_REGISTRY_1_0
# GIO's modules (proxy, TLS, settings backends) from an empty folder: the machine's may be built
# against a newer GLib than the bundle's.
export GIO_MODULE_DIR="$_jp_lib/gio/modules"
echo "gst-env: GStreamer from $_jp_gst ($(sed -n 's/^gstreamer1.0-plugins-bad //p' \
  "$_jp_gst/MANIFEST" | head -1)), registry $GST_REGISTRY_1_0"
unset _jp_gst _jp_lib
