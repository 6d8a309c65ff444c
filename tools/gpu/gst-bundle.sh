#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bundles Debian 12's GStreamer 1.22 into .deps/gst (git-ignored) for the GPU machine, which has no
# GStreamer, no apt and no network: the libraries, the headers and .pc files CMake asks pkg-config
# for (gstreamer-1.0, -app, -video and the CUDA library gstreamer-cuda-1.0), the plugins the tests
# use (nvh264dec among them, and openh264enc: H100/H200 have NVDEC but no NVENC), the plugin
# scanner, gst-inspect-1.0 / gst-launch-1.0 and pkgconf. tools/gpu/gst-env.sh points a shell at it;
# tools/gpu/device-test.sh sources that when .deps/gst exists. Decision 035 has the why and sizes.
#
# How: `apt-get download` of the packages below (the machine's apt sources; `apt-get update` once
# if a download fails), `dpkg -x` into a temporary folder, and only what is needed copied out:
#  - the plugins listed below and the tools; then every library their ELF files need (objdump -p
#    NEEDED, closed over), except glibc's own and libstdc++ / libgcc_s (the GPU machine's are
#    newer); a library none of the packages holds is looked up with `dpkg -S` on this machine and
#    its package fetched (a note says so: add it to the list);
#  - the .pc files of the four modules and of what they require (Requires:, closed over), with
#    prefix= made relative to the file (${pcfiledir}), so the bundle works wherever the tree lands,
#    and Requires.private dropped (static linking only; it would pull a dozen -dev packages);
#  - the headers of glib, GStreamer core and base, GStreamer's CUDA library (gst/cuda) and OpenGL
#    (GL, KHR, GLES2: gst/cuda includes CUDA's cudaGL.h, which includes GL/gl.h);
#  - for each -lNAME of those .pc files, the linker name libNAME.so beside the library.
# Then the check below runs, and a summary prints the packages and sizes (MANIFEST in the bundle).
#
# Usage: tools/gpu/gst-bundle.sh           build .deps/gst, then check it (Debian 12 amd64)
#        tools/gpu/gst-bundle.sh --check   check an existing bundle only (any x86-64 Linux: runs
#                                          on the GPU machine too, from device-test.sh)
# The check: every bundled ELF file's libraries resolve (ldd, LD_LIBRARY_PATH at the bundle) inside
# the bundle or to glibc / libstdc++ / libgcc_s; pkgconf finds the four modules in the bundle alone
# with every -I and -L inside it; each bundled plugin loads and the elements the tests need exist;
# whether nvh264dec is registered, and if not whether libcuda.so.1 and libnvcuvid.so.1 are there.
# Exit status 1 on any failure, with the reason.
set -Eeuo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dest=$root/.deps/gst
ma=x86_64-linux-gnu
lib=usr/lib/$ma

# Plugins kept (libgst<name>.so), each for the elements the sources, video outputs and tests use.
plugins=(
  coreelements       # filesrc, filesink, identity, queue, multiqueue, capsfilter, typefind
  app                # appsrc, appsink
  videotestsrc       # test://videotestsrc, test://smpte, ...
  videoconvertscale  # videoconvert, videoscale
  typefindfunctions  # decodebin's typefinding
  playback           # decodebin
  isomp4             # qtdemux, mp4mux
  matroska           # matroskademux, matroskamux
  videoparsersbad    # h264parse, h265parse
  nvcodec            # nvh264dec: registered where libcuda and libnvcuvid load and the GPU has NVDEC
  openh264           # openh264enc (no NVENC on H100/H200), openh264dec (exact on its own streams)
  udp rtp rtpmanager # udpsrc/udpsink, rtph264pay/depay, rtpjitterbuffer: RTP out and in
  rtsp video4linux2  # rtspsrc, v4l2src: the sources' open errors
)
# Elements the check requires (nvh264dec is reported apart: it needs the GPU and its driver).
elements=(filesrc filesink identity queue appsrc appsink videotestsrc videoconvert videoscale
          decodebin typefind qtdemux mp4mux matroskademux matroskamux h264parse openh264enc
          openh264dec udpsrc udpsink rtph264pay rtph264depay rtpjitterbuffer rtspsrc v4l2src)
# The modules CMakeLists.txt asks pkg-config for.
modules=(gstreamer-1.0 gstreamer-app-1.0 gstreamer-video-1.0 gstreamer-cuda-1.0)
# Libraries never bundled: glibc's own, and the C++ runtime (the GPU machine's gcc 13 is newer).
system_libs='^(linux-vdso\.so\.1|ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|libresolv\.so\.2|libutil\.so\.1|libanl\.so\.1|libstdc\+\+\.so\.6|libgcc_s\.so\.1)$'

is_elf() { [ -f "$1" ] && [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }
# The bundle's ELF files: libraries, plugins, the scanner, the tools (headers and .pc files skipped).
elf_files() {
  local f
  find "$dest/usr/bin" "$dest/$lib" -type f \( -name '*.so*' -o -perm -u+x \) | sort |
    while IFS= read -r f; do is_elf "$f" && echo "$f"; done
}
human() { du -sh "$@" 2> /dev/null | awk '{print $1}'; }

# ---- The check ------------------------------------------------------------------------------------
check() {
  local fail=0
  [ -f "$dest/MANIFEST" ] || { echo "gst-check: FAILED: no bundle at $dest (tools/gpu/gst-bundle.sh)"; return 1; }
  # 1. Libraries: each ELF file's dependencies resolve inside the bundle or to the system's glibc
  # and C++ runtime; nothing missing. One awk per file: "in", "sys PATH" or "FAILED: ..." lines.
  local verdicts
  verdicts=$(elf_files | while IFS= read -r f; do
    echo "file"
    LD_LIBRARY_PATH=$dest/$lib ldd "$f" 2>&1 |
      sys=$system_libs awk -v f="${f#"$dest"/}" -v dest="$dest/" '
        / => / || /^[ \t]*\// {
          name = $1; sub(/.*\//, "", name)
          path = ($2 == "=>") ? $3 : $1
          if (/not found/) { print "FAILED: " f " needs " $1 ": not found"; next }
          if (index(path, dest) == 1) print "in"
          else if (name ~ ENVIRON["sys"]) print "sys " path
          else print "FAILED: " f " needs " $1 ": resolves outside the bundle (" path ")"
        }'
  done)
  grep '^FAILED' <<< "$verdicts" | sed 's/^/gst-check: /' && fail=1
  echo "gst-check: $(grep -c '^file$' <<< "$verdicts") ELF files," \
       "$(grep -c '^in$' <<< "$verdicts") dependencies resolved in the bundle; from the system only:" \
       "$(sed -n 's/^sys //p' <<< "$verdicts" | sort -u | tr '\n' ' ')"

  # 2. pkg-config with the bundle's .pc files alone.
  local flags
  if flags=$(PKG_CONFIG_LIBDIR=$dest/$lib/pkgconfig PKG_CONFIG_PATH='' "$dest/usr/bin/pkgconf" \
             --cflags --libs "${modules[@]}" 2>&1); then
    local d bad=0
    for d in $(tr ' ' '\n' <<< "$flags" | sed -n 's/^-[IL]//p'); do
      if [[ "$(realpath -m "$d")" != "$dest/"* ]] || [ ! -d "$d" ]; then
        echo "gst-check: FAILED: pkgconf gives $d (outside the bundle or absent)"
        bad=1
      fi
    done
    [ $bad = 0 ] && echo "gst-check: pkgconf finds ${modules[*]} $("$dest/usr/bin/pkgconf" \
      --with-path="$dest/$lib/pkgconfig" --modversion gstreamer-cuda-1.0) in the bundle alone"
    fail=$((fail | bad))
  else
    echo "gst-check: FAILED: pkgconf ${modules[*]}: $flags"
    fail=1
  fi

  # 3. Plugins load and the elements exist, through the bundle's environment only.
  (
    # shellcheck source=tools/gpu/gst-env.sh
    . "$root/tools/gpu/gst-env.sh" --only > /dev/null || exit 1
    rc=0
    # A plugin that fails to load is blacklisted in the (fresh) registry; gst-inspect says why.
    n=0
    for p in $(gst-inspect-1.0 -b 2>&1 | grep -o 'libgst[a-z0-9_]*\.so' | sort -u); do
      echo "gst-check: FAILED: plugin $p does not load: $(gst-inspect-1.0 "$dest/$lib/gstreamer-1.0/$p" 2>&1 | tail -2)"
      rc=1
      n=$((n + 1))
    done
    have=$(gst-inspect-1.0 2>&1 | awk -F': +' 'NF >= 3 {print $2}' | sort -u)
    missing=()
    for e in "${elements[@]}"; do grep -qx "$e" <<< "$have" || missing+=("$e"); done
    if [ ${#missing[@]} -gt 0 ]; then
      echo "gst-check: FAILED: elements missing: ${missing[*]}"
      rc=1
    else
      echo "gst-check: $(($(ls "$dest/$lib"/gstreamer-1.0/*.so | wc -l) - n)) plugins load;" \
           "the ${#elements[@]} elements the tests need exist"
    fi
    # nvh264dec: only where libcuda and libnvcuvid load and the GPU has NVDEC. Not a failure here
    # (the GPU tests say why they skip), but said plainly.
    driver_libs=""
    for l in libcuda.so.1 libnvcuvid.so.1; do
      if "$(command -v ldconfig || echo /sbin/ldconfig)" -p 2> /dev/null | grep -q "$l "; then
        driver_libs+="$l found; "
      else
        driver_libs+="$l NOT FOUND (ldconfig -p); "
      fi
    done
    if gst-inspect-1.0 --exists nvh264dec; then
      echo "gst-check: nvh264dec present (${driver_libs%; })"
    else
      echo "gst-check: nvh264dec ABSENT: the CUDA decode tests (GpuGstCuda.*) will skip (${driver_libs%; })"
      # What the plugin said while registering, in this process (no fork) and a fresh registry.
      reg=$(mktemp -d)
      GST_REGISTRY_1_0=$reg/r.bin GST_REGISTRY_FORK=no GST_DEBUG='nvcodec:5,cudaloader:5,nvdec:3' \
        GST_DEBUG_NO_COLOR=1 gst-inspect-1.0 nvcodec 2>&1 |
        grep -iE 'load|fail|could not|no device|nvdec|cuvid' | head -8 | sed 's/^/gst-check:   /'
      rm -rf "$reg"
    fi
    rm -rf "$(dirname "$GST_REGISTRY_1_0")"
    exit $rc
  ) || fail=1
  if [ $fail = 0 ]; then
    echo "gst-check: OK ($(human "$dest") in $dest)"
  else
    echo "gst-check: FAILED (above)"
  fi
  return $fail
}

if [ "${1:-}" = "--check" ]; then
  check
  exit $?
elif [ $# -gt 0 ]; then
  sed -n '2,31p' "$0"
  [ "$1" = -h ] || [ "$1" = --help ]
  exit $?  # 0 for help, 1 for an unknown argument
fi

# ---- Download and unpack --------------------------------------------------------------------------
start=$SECONDS
trap 'echo "gst-bundle: FAILED at line $LINENO: $BASH_COMMAND" >&2' ERR
packages=(
  # GStreamer's libraries and plugins (only the plugins above are kept), the tools
  libgstreamer1.0-0 libgstreamer-plugins-base1.0-0 libgstreamer-gl1.0-0
  libgstreamer-plugins-bad1.0-0 gstreamer1.0-plugins-base gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad gstreamer1.0-tools
  # headers, .pc files and linker names
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libgstreamer-plugins-bad1.0-dev
  libglib2.0-dev libgl-dev libgles-dev
  # pkg-config (the GPU machine may have none)
  pkgconf-bin libpkgconf3
  # the libraries those need (the NEEDED closure)
  libglib2.0-0 liborc-0.4-0 libopenh264-7 libunwind8 libdw1 libelf1 liblzma5 libbz2-1.0 zlib1g
  libzstd1 libffi8 libpcre2-8-0 libmount1 libblkid1 libselinux1 libgudev-1.0-0 libudev1
  libgl1 libglx0 libgles2 libegl1 libopengl0 libglvnd0 libgbm1 libdrm2 libexpat1 libwayland-client0
  libwayland-cursor0 libwayland-egl1 libwayland-server0 libx11-6 libx11-xcb1 libxcb1 libxau6
  libxdmcp6 libbsd0 libmd0 libv4l-0 libv4lconvert0 libjpeg62-turbo
)
work=$(mktemp -d "${TMPDIR:-/tmp}/jetpipe-gst-bundle.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debs" "$work/root" "$work/dev"
apt_opts=(-qq)
[ "$(id -u)" -eq 0 ] && apt_opts+=(-o APT::Sandbox::User=root)  # root: no _apt sandbox in $work
fetch() {  # packages...: apt-get download into $work/debs, unpacked into $work/root
  if ! (cd "$work/debs" && apt-get "${apt_opts[@]}" download "$@"); then
    echo "gst-bundle: apt-get download failed; apt-get update, then once more"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get -qq update
    (cd "$work/debs" && apt-get "${apt_opts[@]}" download "$@") ||
      { echo "gst-bundle: FAILED: apt-get download $*" >&2; exit 1; }
  fi
  local p deb
  for p in "$@"; do
    deb=$(ls "$work/debs/${p}"_*.deb)
    dpkg -x "$deb" "$work/root"
    case "$p" in *-dev) dpkg -x "$deb" "$work/dev/$p" ;; esac
  done
}
echo "gst-bundle: downloading ${#packages[@]} packages"
fetch "${packages[@]}"

rm -rf "$dest"
mkdir -p "$dest/$lib/gstreamer-1.0" "$dest/$lib/pkgconfig" "$dest/$lib/gio/modules" \
  "$dest/usr/bin" "$dest/usr/include" "$dest/$lib/gstreamer1.0/gstreamer-1.0"

# ---- Plugins, tools --------------------------------------------------------------------------------
for p in "${plugins[@]}"; do
  cp "$work/root/$lib/gstreamer-1.0/libgst$p.so" "$dest/$lib/gstreamer-1.0/"
done
cp "$work/root/$lib/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner" \
  "$dest/$lib/gstreamer1.0/gstreamer-1.0/"
cp "$work/root/usr/bin/gst-inspect-1.0" "$work/root/usr/bin/gst-launch-1.0" \
  "$work/root/usr/bin/pkgconf" "$dest/usr/bin/"
ln -s pkgconf "$dest/usr/bin/pkg-config"

# ---- .pc files: the modules and their Requires, closed over -----------------------------------------
# The first DIR/NAME that exists (printed), of `first_in NAME DIR...`; none: an empty answer.
first_in() {
  local name=$1 d
  shift
  for d in "$@"; do
    [ -e "$d/$name" ] && { echo "$d/$name"; return; }
  done
  return 0
}
find_pc() { first_in "$1.pc" "$work/root/$lib/pkgconfig" "$work/root/usr/share/pkgconfig"; }
queue=("${modules[@]}")
declare -A seen_pc=()
dropped=""
while [ ${#queue[@]} -gt 0 ]; do
  m=${queue[0]}
  queue=("${queue[@]:1}")
  [ -n "${seen_pc[$m]:-}" ] && continue
  seen_pc[$m]=1
  pc=$(find_pc "$m")
  [ -n "$pc" ] || { echo "gst-bundle: FAILED: no $m.pc in the packages (add its -dev package)" >&2; exit 1; }
  # Requires: "a >= 1, b, c" -> a b c
  for r in $(sed -n 's/^Requires:\(.*\)/\1/p' "$pc" | tr ',' ' ' |
             awk '{for (i = 1; i <= NF; i++) if ($i !~ /^[<>=!]/ && $i !~ /^[0-9]/) print $i}'); do
    queue+=("$r")
  done
  priv=$(sed -n 's/^Requires.private: *//p' "$pc")
  [ -n "$priv" ] && dropped+="  $m: $priv"$'\n'
  # prefix relative to the .pc file: usr/lib/<multiarch>/pkgconfig or usr/share/pkgconfig
  up='${pcfiledir}/../../..'
  [[ "$pc" == */usr/share/pkgconfig/* ]] && up='${pcfiledir}/../..'
  sed -e "s|^prefix=/usr\$|prefix=$up|" -e '/^Requires.private:/d' "$pc" > "$dest/$lib/pkgconfig/$m.pc"
  if grep -v '^#' "$dest/$lib/pkgconfig/$m.pc" | grep -q '/usr'; then
    echo "gst-bundle: FAILED: $m.pc has a path outside \${prefix}:" >&2
    grep -n '/usr' "$dest/$lib/pkgconfig/$m.pc" >&2
    exit 1
  fi
done

# ---- Headers ---------------------------------------------------------------------------------------
copy_dir() {  # package, path under its root
  mkdir -p "$dest/$(dirname "$2")"
  cp -a "$work/dev/$1/$2" "$dest/$(dirname "$2")/"
}
copy_dir libglib2.0-dev usr/include/glib-2.0
copy_dir libglib2.0-dev "$lib/glib-2.0"   # glibconfig.h
copy_dir libgstreamer1.0-dev usr/include/gstreamer-1.0
cp -a "$work/dev/libgstreamer-plugins-base1.0-dev/usr/include/gstreamer-1.0/." \
  "$dest/usr/include/gstreamer-1.0/"
copy_dir libgstreamer-plugins-base1.0-dev "$lib/gstreamer-1.0/include"   # gstglconfig.h
copy_dir libgstreamer-plugins-bad1.0-dev usr/include/gstreamer-1.0/gst/cuda
copy_dir libgl-dev usr/include/GL
copy_dir libgl-dev usr/include/KHR
copy_dir libgles-dev usr/include/GLES2
find "$dest/$lib/glib-2.0" -type f ! -name '*.h' -delete   # glib's gdb scripts and such

# ---- Linker names: libNAME.so for each -lNAME, pointing at the soname -----------------------------
soname() { objdump -p "$1" | awk '$1 == "SONAME" {print $2}'; }
for n in $(cat "$dest/$lib/pkgconfig/"*.pc | sed -n 's/^Libs:\(.*\)/\1/p' | tr ' ' '\n' |
           sed -n 's/^-l//p' | sort -u); do
  so=$work/root/$lib/lib$n.so
  [ -e "$so" ] || { echo "gst-bundle: FAILED: no lib$n.so (-l$n) in the packages" >&2; exit 1; }
  s=$(soname "$(readlink -f "$so")")
  cp -L "$work/root/$lib/$s" "$dest/$lib/$s"
  ln -s "$s" "$dest/$lib/lib$n.so"
done

# ---- Libraries: the NEEDED closure of every ELF file in the bundle ---------------------------------
find_lib() { first_in "$1" "$work/root/$lib" "$work/root/lib/$ma"; }
extra=()
declare -A scanned=()  # files whose libraries are all in the bundle
while :; do
  missing=()
  added=0
  while IFS= read -r f; do
    [ -n "${scanned[$f]:-}" ] && continue
    complete=1
    for s in $(objdump -p "$f" | awk '$1 == "NEEDED" {print $2}'); do
      [[ "$s" =~ $system_libs ]] && continue
      [ -e "$dest/$lib/$s" ] && continue
      src=$(find_lib "$s")
      if [ -n "$src" ]; then
        cp -L "$src" "$dest/$lib/$s"
        added=1
      else
        missing+=("$s")
        complete=0
      fi
    done
    [ $complete = 1 ] && scanned[$f]=1
  done < <(elf_files)
  [ $added = 1 ] && continue  # the files just copied have their own NEEDED
  [ ${#missing[@]} -eq 0 ] && break
  more=()
  for s in $(printf '%s\n' "${missing[@]}" | sort -u); do
    pkg=$(dpkg -S "$ma/$s" 2> /dev/null | awk -v s="/$s" 'index($0, s) == length($0) - length(s) + 1
          {sub(/:.*/, "", $1); print $1; exit}')
    if [ -z "$pkg" ]; then
      echo "gst-bundle: FAILED: no package here holds $s (needed by the bundle); add the Debian" \
           "package that has it to the list in $0" >&2
      exit 1
    fi
    echo "gst-bundle: note: $s is in $pkg (dpkg -S), which is not in the list: fetched; add it"
    more+=("$pkg")
  done
  mapfile -t more < <(printf '%s\n' "${more[@]}" | sort -u)
  extra+=("${more[@]}")
  fetch "${more[@]}"
done

# ---- Manifest and summary --------------------------------------------------------------------------
{
  echo "# .deps/gst: made by tools/gpu/gst-bundle.sh on $(date -u +%Y-%m-%dT%H:%MZ) from Debian $(cat /etc/debian_version)"
  echo "# packages (name version):"
  for deb in "$work"/debs/*.deb; do dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb"; done
  echo "# plugins: ${plugins[*]}"
  echo "# Requires.private dropped from the .pc files:"
  printf '%s' "$dropped"
} > "$dest/MANIFEST"
n_libs=$(find "$dest/$lib" -maxdepth 1 -type f -name '*.so*' | wc -l)
echo "gst-bundle: $(ls "$work"/debs/*.deb | wc -l) packages ($(human "$work/debs") downloaded):"
for deb in "$work"/debs/*.deb; do dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb"; done |
  paste -sd, | sed 's/,/, /g' | fold -s -w 98 | sed 's/^/  /'
[ ${#extra[@]} -gt 0 ] && echo "gst-bundle: fetched by dpkg -S, add to the list: ${extra[*]}"
echo "gst-bundle: $dest: $(human "$dest") in all:" \
     "$n_libs libraries $(du -ch "$dest/$lib"/*.so* | tail -1 | cut -f1)," \
     "${#plugins[@]} plugins $(human "$dest/$lib/gstreamer-1.0")," \
     "headers $(du -ch "$dest/usr/include" "$dest/$lib/glib-2.0" "$dest/$lib/gstreamer-1.0/include" | tail -1 | cut -f1)," \
     "tools $(du -ch "$dest/usr/bin" "$dest/$lib/gstreamer1.0" | tail -1 | cut -f1)," \
     "$(ls "$dest/$lib/pkgconfig" | wc -l) .pc files"
echo "gst-bundle: .deps in all: $(human "$root/.deps") (the GPU machine's carry limit is 64 MiB)"
echo "gst-bundle: made in $((SECONDS - start)) s; checking"
trap - ERR  # the check reports its own failures
check
