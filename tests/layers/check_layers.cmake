# check_layers.cmake: the layering of docs/architecture.md, checked on the built objects
# (cmake -P, from ctest; tests/CMakeLists.txt passes NM and the three libraries).
#
#   src/ui     draws only: its objects call nothing of the core's compute objects (the
#              forward, the kernels, the models, training, ablation, the detector, the
#              views' runs); what it may call of the core is the small list ALLOWED below
#              (names, text, checks, file formats), and the state layer.
#   src/state  never draws: its objects call nothing of ImGui, GLFW, GL or the render layer.
#
# A symbol counts when an object of one library leaves it undefined (nm's U) and an object
# of the other defines it outright (T, D, B, R: not the weak copies of inline functions and
# templates every object has). A failure names the object, the symbol and the rule.
cmake_minimum_required(VERSION 3.20)
foreach(v NM CORE UI STATE RENDER)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_layers.cmake needs -D${v}=...")
  endif()
endforeach()

# The core's objects the panels may call: names and parsing of the config, text helpers,
# the tensor table's names, file formats the side panel reads or writes through the state.
set(ALLOWED config text_util tensor_table json_writer atomic_file session unicode_classes bpe_tokenizer bpe_pretokenize)
# And, from the other objects, a task's recipe (its default settings), the names of things (a task, a GELU form, a token, a head's
# role, a model's layout) and two lookups of a flag (a cell under the mask, a head in an
# ablation), as mangled names.
set(ALLOWED_SYMBOLS "^_ZN7attnviz9to_stringE" "^_ZN7attnviz10token_name" "^_ZN7attnviz15vocabulary_text"
    "^_ZN7attnviz22default_train_settings" "^_ZN7attnviz12model_layout" "^_ZN7attnviz8role_tag" "^_ZNK7attnviz5Trace7visibleE" "^_ZNK7attnviz8Ablation3hasE")

# Lines "object|symbol" of `kind` ("defined" or "undefined") in library `lib`.
function(symbols lib kind out)
  if(kind STREQUAL "defined")
    set(opt --defined-only)
  else()
    set(opt --undefined-only)
  endif()
  execute_process(COMMAND ${NM} -A ${opt} ${lib} OUTPUT_VARIABLE text RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm could not read ${lib}")
  endif()
  string(REPLACE "\n" ";" lines "${text}")
  set(result "")
  foreach(line IN LISTS lines)
    # libattnviz_ui.a:controls.cpp.o:                 U _ZN7attnviz...
    # libattnviz_core.a:attention.cpp.o:0000000000000a10 T _ZN7attnviz...
    if(line MATCHES "^[^:]*:([^:]+)\\.cpp\\.o: *([0-9a-f]*) ([A-Za-z]) (.+)$")
      set(obj ${CMAKE_MATCH_1})
      set(type ${CMAKE_MATCH_3})
      set(sym ${CMAKE_MATCH_4})
      if(kind STREQUAL "defined" AND NOT type MATCHES "^[TDBR]$")
        continue()
      endif()
      list(APPEND result "${obj}|${sym}")
    endif()
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

symbols(${CORE} defined core_defined)
symbols(${RENDER} defined render_defined)
symbols(${UI} undefined ui_undefined)
symbols(${STATE} undefined state_undefined)

# compute_<symbol>: the core object that defines it, for the compute objects only (a
# variable per symbol, so that each lookup is one test, not a scan of a list).
foreach(entry IN LISTS core_defined)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 obj)
  list(GET parts 1 sym)
  if(NOT obj IN_LIST ALLOWED)
    set(named FALSE)
    foreach(pattern IN LISTS ALLOWED_SYMBOLS)
      if(sym MATCHES "${pattern}")
        set(named TRUE)
      endif()
    endforeach()
    if(NOT named)
      set(compute_${sym} ${obj})
    endif()
  endif()
endforeach()
foreach(entry IN LISTS render_defined)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 1 sym)
  set(render_${sym} 1)
endforeach()

set(failures "")
set(ui_checked 0)
foreach(entry IN LISTS ui_undefined)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 obj)
  list(GET parts 1 sym)
  math(EXPR ui_checked "${ui_checked} + 1")
  if(DEFINED compute_${sym})
    list(APPEND failures "src/ui/${obj}.cpp calls ${sym} of the core's ${compute_${sym}}.cpp: panels draw, the state layer computes")
  endif()
endforeach()
set(state_checked 0)
foreach(entry IN LISTS state_undefined)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 obj)
  list(GET parts 1 sym)
  math(EXPR state_checked "${state_checked} + 1")
  if(sym MATCHES "ImGui|^gl[A-Z]|^glfw" OR DEFINED render_${sym})
    list(APPEND failures "src/state/${obj}.cpp calls ${sym}: the state layer never draws")
  endif()
endforeach()
if(ui_checked EQUAL 0 OR state_checked EQUAL 0)
  message(FATAL_ERROR "no undefined symbols read (ui ${ui_checked}, state ${state_checked}): is NM right?")
endif()
if(failures)
  list(JOIN failures "\n" text)
  message(FATAL_ERROR "the layers are crossed:\n${text}")
endif()
message(STATUS "layers kept: ${ui_checked} calls out of src/ui and ${state_checked} out of src/state checked")
