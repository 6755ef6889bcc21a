# check_no_probes.cmake: the shipped attnviz holds none of the test probes' code (the key
# script and the layout dump, tests/harness/screenshot_probes.h), and attnviz_harness holds
# it, so that the names searched for are known to be the right ones (cmake -P, from ctest;
# tests/CMakeLists.txt passes NM, ATTNVIZ and HARNESS). Without nm it says SKIP, which ctest
# counts as skipped (SKIP_REGULAR_EXPRESSION).
cmake_minimum_required(VERSION 3.20)
foreach(v ATTNVIZ HARNESS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_no_probes.cmake needs -D${v}=...")
  endif()
endforeach()
if(NOT NM OR NOT EXISTS "${NM}")
  message(STATUS "SKIP: nm is missing")
  return()
endif()

# The probes' functions and types, as nm -C prints them.
set(PROBE_NAMES "attnviz::parse_key_script" "attnviz::press_key" "attnviz::KeyPress" "attnviz::write_layout_json"
    "attnviz::KeyScriptProbe" "attnviz::LayoutProbe")

# The symbols of `bin`, demangled, one a line.
function(symbols bin out)
  execute_process(COMMAND ${NM} -C ${bin} OUTPUT_VARIABLE text RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm could not read ${bin}: ${err}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

symbols(${ATTNVIZ} product)
symbols(${HARNESS} harness)
# Both hold the window (attnviz_app): a stripped binary would pass the check without meaning.
foreach(bin product harness)
  string(FIND "${${bin}}" "attnviz::run_screenshot" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "no attnviz::run_screenshot among the ${bin}'s symbols: is it stripped, or NM wrong?")
  endif()
endforeach()
set(failures "")
foreach(name IN LISTS PROBE_NAMES)
  string(FIND "${product}" "${name}" at)
  if(NOT at EQUAL -1)
    list(APPEND failures "attnviz holds ${name}: the probes belong to attnviz_harness (tests/harness)")
  endif()
  string(FIND "${harness}" "${name}" at)
  if(at EQUAL -1)
    list(APPEND failures "attnviz_harness lacks ${name}: the name searched for in attnviz is out of date")
  endif()
endforeach()
if(failures)
  list(JOIN failures "\n" text)
  message(FATAL_ERROR "${text}")
endif()
list(LENGTH PROBE_NAMES n)
message(STATUS "no probes in attnviz: ${n} names absent, all present in attnviz_harness")
