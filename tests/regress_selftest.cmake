# Proves `jetpipe regress` fails on a regression: copies the suite, changes the first bin count of
# every histogram in one golden, and expects exit code 1 with that config (only) named.
# Run by ctest: cmake -DJETPIPE=... -DSRC=... -DWORK=... -P regress_selftest.cmake
file(REMOVE_RECURSE ${WORK})
file(COPY ${SRC}/ DESTINATION ${WORK}/suite)
file(READ ${WORK}/suite/golden/filters.jsonl golden)
string(REGEX REPLACE "\"bins\":\\[([0-9]+)," "\"bins\":[1\\1," golden "${golden}")
file(WRITE ${WORK}/suite/golden/filters.jsonl "${golden}")
execute_process(COMMAND ${JETPIPE} regress --dir ${WORK}/suite --work-dir ${WORK}/runs
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "regress should exit 1 on a changed golden, got ${rc}: ${err}")
endif()
if(NOT out MATCHES "filters +FAIL" OR NOT out MATCHES "pipeline +ok")
  message(FATAL_ERROR "regress did not name the regressed config")
endif()
