# SPDX-License-Identifier: MIT
# Cross build of jetpipe's CPU part for aarch64 Linux (a Jetson's CPU, any arm64 Debian/Ubuntu)
# with Debian's cross compiler (g++-aarch64-linux-gnu) against arm64 packages unpacked into a
# folder, not installed; what is built runs here under qemu-user. tools/ci/arm64-check.sh fetches
# the packages into .deps/arm64 and drives the whole thing. By hand:
#   cmake -S . -B build-arm64 -G Ninja --toolchain cmake/toolchains/aarch64-linux-gnu.cmake \
#     -DJETPIPE_CUDA=OFF -DJETPIPE_WITH_OPENCV=OFF -DJETPIPE_WITH_GSTREAMER=OFF \
#     -DJETPIPE_GTEST_SOURCE=$PWD/.deps/arm64/sysroot/usr/src/googletest
# JETPIPE_ARM64_SYSROOT  the unpacked arm64 packages (dpkg -x): headers, libraries, CMake packages;
#                        also qemu's -L root (default: <source>/.deps/arm64/sysroot)
# JETPIPE_ARM64_PACKAGES the runtime packages each unpacked with its DEBIAN/ (dpkg-deb -R), so
#                        that dpkg-shlibdeps names them in the .deb's Depends (default: ../pkgs)
# The CUDA cross build (NVIDIA's cross packages, sbsa/aarch64 targets) is in deploy/README.md.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)  # <prefix>/lib/aarch64-linux-gnu/cmake/...
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)        # GoogleTest's project enables C too
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# GCC for aarch64 notes where C++17 code passes a pair differently from GCC < 10.1 (-Wpsabi);
# everything here is built by one GCC 12, so the note says nothing about this build.
set(CMAKE_CXX_FLAGS_INIT "-Wno-psabi")

if(NOT JETPIPE_ARM64_SYSROOT)
  get_filename_component(JETPIPE_ARM64_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../../.deps/arm64/sysroot"
                         ABSOLUTE)
endif()
if(NOT JETPIPE_ARM64_PACKAGES)
  get_filename_component(JETPIPE_ARM64_PACKAGES "${JETPIPE_ARM64_SYSROOT}/../pkgs" ABSOLUTE)
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES JETPIPE_ARM64_SYSROOT JETPIPE_ARM64_PACKAGES)

# Libraries, headers and CMake packages from the arm64 folder only; programs from this machine.
list(APPEND CMAKE_FIND_ROOT_PATH "${JETPIPE_ARM64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest runs the test binaries, `jetpipe regress` and the examples through this; the tests that
# exec the CLI themselves take it too (tests/CMakeLists.txt). -L: the arm64 dynamic loader and
# libraries come from the sysroot. No binfmt_misc registration is needed or used.
find_program(JETPIPE_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static NO_CMAKE_FIND_ROOT_PATH)
if(JETPIPE_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${JETPIPE_QEMU_AARCH64};-L;${JETPIPE_ARM64_SYSROOT}")
endif()

# For cpack: dpkg-shlibdeps finds the arm64 libraries here and takes each package's name and
# versions from its DEBIAN/symbols or shlibs (cmake/install.cmake).
file(GLOB JETPIPE_SHLIBDEPS_DIRS LIST_DIRECTORIES true
     "${JETPIPE_ARM64_PACKAGES}/*/lib/aarch64-linux-gnu"
     "${JETPIPE_ARM64_PACKAGES}/*/usr/lib/aarch64-linux-gnu")
