# The harness's task rules (task.cpp) with the JSON reader and the bounded file reader they use, as
# small static libraries without CUDA or Qt ("one task validator", issue 24):
#   kev_taskrules       namespace kev, linked by kevolve-harness;
#   kev_taskrules_core  the same sources with their namespace renamed, linked by core, which has
#                       its own kev::Task and calls them only through task_check.h (kevrules::).
if(TARGET kev_taskrules)
    return()
endif()
set(_kev_rules "${CMAKE_CURRENT_LIST_DIR}/src")
foreach(_kev_lib kev_taskrules kev_taskrules_core)
    add_library(${_kev_lib} STATIC
        "${_kev_rules}/task.cpp" "${_kev_rules}/task_registry.cpp" "${_kev_rules}/task_check.cpp"
        "${_kev_rules}/json.cpp"
        "${_kev_rules}/json_parse.cpp" "${_kev_rules}/files.cpp")
    # Core is a shared library.
    set_target_properties(${_kev_lib} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    kev_warnings(${_kev_lib})
endforeach()
target_include_directories(kev_taskrules PUBLIC "${_kev_rules}")
target_include_directories(kev_taskrules_core PRIVATE "${_kev_rules}")
target_compile_definitions(kev_taskrules_core PRIVATE kev=kev_taskrules_for_core)
unset(_kev_lib)
unset(_kev_rules)
