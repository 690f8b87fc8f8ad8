# The built-in families' generated CUDA against the committed golden files, byte for byte: every
# default plan of every family for every task it supports (the task library and the test tasks in
# tests/builtin/tasks), the fixed strategy files in tests/builtin/strategies, and the sample
# points (default plus first moves) as a hash manifest. A refactor of the generators must keep
# these identical; a kernel that changes on purpose is re-measured on the H200 and the golden
# files are regenerated with -DUPDATE=ON (see tests/builtin/README.md).
# Inputs: GEN (kev-builtin-gen), TASKS (tests/builtin/tasks), STRATEGIES (tests/builtin/strategies),
# GOLDEN (tests/builtin/golden), OUT (scratch folder), UPDATE (ON: write the golden files instead).
cmake_minimum_required(VERSION 3.21)
file(REMOVE_RECURSE "${OUT}")
file(GLOB testTasks "${TASKS}/*.json")
list(SORT testTasks)
set(taskArgs)
foreach(task IN LISTS testTasks)
    list(APPEND taskArgs --task "${task}")
endforeach()

function(generate out)
    execute_process(COMMAND "${GEN}" --out "${out}" ${ARGN}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "kev-builtin-gen ${ARGN} failed (${rc}): ${stdout}${stderr}")
    endif()
endfunction()

# Default plans: the task library (no --task), then the test tasks.
generate("${OUT}/default" --points default)
generate("${OUT}/default" --points default ${taskArgs})
file(REMOVE "${OUT}/default/index.tsv")

# Fixed strategies: each file names its family; its task is the test task of its op and dtype.
set(strategyTasks
    "layernorm_async_vec4|layernorm_bf16_test"
    "layernorm_async_weights_registers|layernorm_bf16_test"
    "layernorm_prefetch_shifted|layernorm_bf16_test"
    "softmax_prefetch_one_pass|softmax_f16_test"
    "softmax_prefetch_two_pass|softmax_f16_test"
    "layernorm_split3_streamed|layernorm_bf16_test"
    "softmax_bulk_split5|softmax_f16_test")
foreach(entry IN LISTS strategyTasks)
    string(REPLACE "|" ";" pair "${entry}")
    list(GET pair 0 name)
    list(GET pair 1 task)
    generate("${OUT}/strategies/${name}" --task "${TASKS}/${task}.json"
             --strategy "${STRATEGIES}/${name}.json")
    file(REMOVE "${OUT}/strategies/${name}/index.tsv")
endforeach()

# Sample points (default plus up to 7 first moves per family and task): too many to keep as
# sources, so a manifest of SHA-256 hashes; a mismatch names the file to regenerate and diff.
generate("${OUT}/sample" --points sample --max-points 8)
generate("${OUT}/sample" --points sample --max-points 8 ${taskArgs})
file(GLOB sampleKernels RELATIVE "${OUT}/sample" "${OUT}/sample/*.cu")
list(SORT sampleKernels)
set(manifest "")
foreach(kernel IN LISTS sampleKernels)
    file(SHA256 "${OUT}/sample/${kernel}" hash)
    string(APPEND manifest "${hash}  ${kernel}\n")
endforeach()
file(READ "${OUT}/sample/index.tsv" sampleIndex)
file(WRITE "${OUT}/sample.sha256" "${manifest}")
file(WRITE "${OUT}/sample.tsv" "${sampleIndex}")

if(UPDATE)
    file(REMOVE_RECURSE "${GOLDEN}/default" "${GOLDEN}/strategies")
    file(COPY "${OUT}/default" "${OUT}/strategies" DESTINATION "${GOLDEN}")
    file(COPY "${OUT}/sample.sha256" "${OUT}/sample.tsv" DESTINATION "${GOLDEN}")
    message(STATUS "golden files written to ${GOLDEN}")
    return()
endif()

file(GLOB_RECURSE expected RELATIVE "${GOLDEN}" "${GOLDEN}/*.cu" "${GOLDEN}/*.sha256"
     "${GOLDEN}/*.tsv")
file(GLOB_RECURSE actual RELATIVE "${OUT}" "${OUT}/default/*.cu" "${OUT}/strategies/*.cu")
list(APPEND actual sample.sha256 sample.tsv)
list(SORT expected)
list(SORT actual)
set(problems "")
foreach(file IN LISTS expected)
    if(NOT file IN_LIST actual)
        string(APPEND problems "  missing: ${file} (no longer generated)\n")
    endif()
endforeach()
foreach(file IN LISTS actual)
    if(NOT file IN_LIST expected)
        string(APPEND problems "  new: ${file} (not in the golden files)\n")
        continue()
    endif()
    execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${GOLDEN}/${file}" "${OUT}/${file}"
                    RESULT_VARIABLE differs)
    if(differs AND file STREQUAL "sample.sha256")
        # Name the sample kernels whose hashes changed (their sources are in ${OUT}/sample).
        file(STRINGS "${GOLDEN}/${file}" goldenLines)
        file(STRINGS "${OUT}/${file}" actualLines)
        foreach(line IN LISTS actualLines)
            if(NOT line IN_LIST goldenLines)
                string(REGEX REPLACE "^[0-9a-f]+  " "" kernel "${line}")
                string(APPEND problems "  differs: sample kernel ${OUT}/sample/${kernel}\n")
            endif()
        endforeach()
    elseif(differs)
        string(APPEND problems "  differs: ${file}: diff -u ${GOLDEN}/${file} ${OUT}/${file}\n")
    endif()
endforeach()
if(problems)
    message(FATAL_ERROR "generated kernels differ from the golden files:\n${problems}"
                        "A kernel changed on purpose is re-measured on the H200; then rerun with "
                        "-DUPDATE=ON (tests/builtin/README.md).")
endif()
list(LENGTH actual n)
message(STATUS "${n} golden files identical")
