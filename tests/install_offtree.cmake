# SPDX-License-Identifier: MIT
# ctest install_offtree: install the build into a staging prefix, MOVE it, then from the moved tree
#  1. build tests/consumer against it (find_package(jetpipe), CMAKE_PREFIX_PATH) and run it,
#  2. run its bin/jetpipe (info, run --platform auto) and check that the profiles come from the
#     moved share/jetpipe/platforms, never from the source tree,
#  3. hide share/jetpipe/platforms and check that the copies built into the binary take over.
# cmake -DBUILD=... -DSRC=... -DWORK=... -DGENERATOR=... -DCXX=... [-DTOOLCHAIN=... -DEMULATOR=...]
#       -P install_offtree.cmake
# A cross build passes its toolchain file (the consumer is cross-built too) and its emulator (the
# moved binaries run under it).
foreach(v BUILD SRC WORK GENERATOR CXX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "install_offtree: -D${v}= is required")
  endif()
endforeach()

function(run_checked what)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=JETPIPE_PLATFORMS ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install_offtree: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(out "${out}${err}" PARENT_SCOPE)
endfunction()

function(expect text pattern what)
  string(FIND "${text}" "${pattern}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "install_offtree: ${what}: '${pattern}' not in:\n${text}")
  endif()
endfunction()

function(expect_not text pattern what)
  string(FIND "${text}" "${pattern}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "install_offtree: ${what}: '${pattern}' must not appear in:\n${text}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
set(stage ${WORK}/stage)
set(moved ${WORK}/moved/jetpipe)
file(MAKE_DIRECTORY ${WORK}/moved)
run_checked("cmake --install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${stage})
file(RENAME ${stage} ${moved})  # mv: nothing may remember the staging path
foreach(f bin/jetpipe include/jetpipe/pipeline/api.h lib/cmake/jetpipe/jetpipe-config.cmake
          share/jetpipe/platforms/cpu.yaml share/jetpipe/config/default.yaml)
  if(NOT EXISTS ${moved}/${f})
    message(FATAL_ERROR "install_offtree: ${f} not installed")
  endif()
endforeach()

set(frames frames://${SRC}/tests/regression/frames)
set(config ${moved}/share/jetpipe/config/default.yaml)

# 1. The consumer project.
set(cross "")
if(TOOLCHAIN)  # a cross build finds packages only under its find roots: the moved tree is one
  set(cross -DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN} -DCMAKE_FIND_ROOT_PATH=${moved})
endif()
run_checked("consumer configure" ${CMAKE_COMMAND} -S ${SRC}/tests/consumer -B ${WORK}/consumer
            -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${moved} ${cross})
run_checked("consumer build" ${CMAKE_COMMAND} --build ${WORK}/consumer)
run_checked("consumer run" ${EMULATOR} ${WORK}/consumer/consumer ${config} ${frames})
expect("${out}" "consumer: 4 frames" "consumer")
expect("${out}" "\"corners\"" "consumer")

# 2. The moved CLI finds the moved profiles.
run_checked("jetpipe info" ${EMULATOR} ${moved}/bin/jetpipe info)
expect("${out}" "${moved}/share/jetpipe/platforms (installed, next to the binary)" "info")
expect("${out}" "from ${moved}/share/jetpipe/platforms/" "info: auto's profile")
expect_not("${out}" "${SRC}/platforms" "info")
expect_not("${out}" "${stage}" "info")
run_checked("jetpipe run" ${EMULATOR} ${moved}/bin/jetpipe run --config ${config} --input ${frames}
            --platform auto --output-dir ${WORK}/run)
file(READ ${WORK}/run/summary.json summary)
expect("${summary}" "${moved}/share/jetpipe/platforms/" "summary.json platform")

# 3. Without share/jetpipe/platforms: the copies built into the binary.
file(RENAME ${moved}/share/jetpipe/platforms ${WORK}/platforms-hidden)
run_checked("jetpipe info (no installed profiles)" ${EMULATOR} ${moved}/bin/jetpipe info)
expect("${out}" "absent" "info without profiles")
expect("${out}" "from built-in:platforms/" "info without profiles")
message(STATUS "install_offtree: consumer, info, run and built-in fallback all off-tree in ${WORK}")
