# SPDX-License-Identifier: MIT
# Install layout (DESIGN.md, Deployment) and the exported CMake package:
#   bin/jetpipe                        lib/libjetpipe_{core,kernels,stages,pipeline}.a
#   include/jetpipe/{core,kernels,stages,pipeline,pipeline/io}/*.h
#   share/jetpipe/{platforms,config}   share/jetpipe/deploy (systemd unit, /etc/jetpipe example)
#   lib/cmake/jetpipe/                 find_package(jetpipe) → jetpipe::pipeline (and ::core, ...)
#   lib/systemd/system/jetpipe@.service, lib/sysusers.d/jetpipe.conf
include(CMakePackageConfigHelpers)

set(JETPIPE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/jetpipe)
set(JETPIPE_DATA_DIR ${CMAKE_INSTALL_DATADIR}/jetpipe)

foreach(t core kernels stages pipeline)
  set_target_properties(jetpipe_${t} PROPERTIES EXPORT_NAME ${t})
endforeach()
install(TARGETS jetpipe_core jetpipe_kernels jetpipe_stages jetpipe_pipeline jetpipe
        EXPORT jetpipe-targets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT jetpipe-targets NAMESPACE jetpipe:: DESTINATION ${JETPIPE_CMAKE_DIR})

# Public headers, as the sources include them ("pipeline/api.h"). kernels/: the host headers only
# (twins' declarations, launch context); device code (.cuh) and the role folders stay private.
foreach(dir core kernels stages pipeline pipeline/io)
  file(GLOB headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${dir}/*.h)
  install(FILES ${headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/jetpipe/${dir})
endforeach()

install(DIRECTORY platforms/ DESTINATION ${JETPIPE_DATA_DIR}/platforms FILES_MATCHING PATTERN "*.yaml")
install(DIRECTORY config/ DESTINATION ${JETPIPE_DATA_DIR}/config FILES_MATCHING PATTERN "*.yaml")
install(FILES deploy/jetpipe@.service DESTINATION lib/systemd/system)
install(FILES deploy/sysusers.d/jetpipe.conf DESTINATION lib/sysusers.d)
install(FILES deploy/etc/jetpipe/camera.yaml deploy/README.md
        DESTINATION ${JETPIPE_DATA_DIR}/deploy)

configure_package_config_file(cmake/jetpipe-config.cmake.in
                              ${PROJECT_BINARY_DIR}/jetpipe-config.cmake
                              INSTALL_DESTINATION ${JETPIPE_CMAKE_DIR})
# 0.x: a minor release may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/jetpipe-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/jetpipe-config.cmake
              ${PROJECT_BINARY_DIR}/jetpipe-config-version.cmake
        DESTINATION ${JETPIPE_CMAKE_DIR})

# ---- CPack: one .deb, `cpack -G DEB` in the build folder ------------------------------------------
set(CPACK_PACKAGE_NAME jetpipe)
set(CPACK_PACKAGE_VENDOR "jetpipe")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Streaming pipeline of GPU image stages for Jetson boards, NVIDIA GPUs and the CPU")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "jetpipe maintainers <jetpipe@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION graphics)
# The target's architecture, not the packaging host's (a cross build for a Jetson is arm64).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
endif()
# Depends from the binary's own links (yaml-cpp, OpenCV, GStreamer, libstdc++) where
# dpkg-shlibdeps exists; the CUDA runtime belongs to no Debian package here (NVIDIA's toolkit in
# /usr/local/cuda) and is provided on a Jetson by JetPack, so it is searched (to resolve the link)
# but not declared: dpkg-shlibdeps runs with --ignore-missing-info (CPackDeb's default).
# A cross build's libraries are no installed package: the toolchain file
# (cmake/toolchains/aarch64-linux-gnu.cmake) lists them unpacked beside their DEBIAN/ folders, from
# which dpkg-shlibdeps takes the package names and versions.
find_program(JETPIPE_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(JETPIPE_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${JETPIPE_SHLIBDEPS_DIRS})
  if(JETPIPE_HAVE_CUDA)
    list(APPEND CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CUDAToolkit_LIBRARY_DIR})
  endif()
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libyaml-cpp0.7 | libyaml-cpp0.8, libstdc++6, libc6")
endif()
# Development use (find_package(jetpipe)) also needs the -dev packages of the same libraries.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libyaml-cpp-dev, nlohmann-json3-dev")
# The service's user (lib/sysusers.d/jetpipe.conf) is created at install time.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/deploy/debian/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
