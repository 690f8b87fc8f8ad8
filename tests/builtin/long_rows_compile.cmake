# The defaults of the long-row tasks (issue 18: vocabulary-sized softmax rows split over a cluster
# or streamed, odd unaligned rows, long layernorm and reduce rows) generated with kev-builtin-gen
# and compiled the way the harness does for sm_90a; fails on a compile error, a compiler warning or any ptxas spill.
# Inputs: GEN (kev-builtin-gen), NVCC, INCLUDE (harness/include), OUT (scratch folder), TASKS
# (resources/tasks).
file(REMOVE_RECURSE "${OUT}")
set(tasks
    softmax_f16_1x128256
    softmax_bf16_32x128256
    softmax_f16_256x32000
    softmax_bf16_64x151936
    softmax_f16_8x50257
    layernorm_bf16_4x65536
    rmsnorm_bf16_4x65536
    reduce_max_f16_64x128256
    reduce_sum_f32_1x262144)
foreach(task IN LISTS tasks)
    execute_process(COMMAND "${GEN}" --out "${OUT}" --task "${TASKS}/${task}.json" --family rowwise
                            --points default
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT EXISTS "${OUT}/${task}__rowwise__0.cu")
        message(FATAL_ERROR "kev-builtin-gen ${task} failed (${rc}): ${out}${err}")
    endif()
endforeach()
file(GLOB kernels "${OUT}/*.cu")
foreach(kernel IN LISTS kernels)
    execute_process(COMMAND "${NVCC}" -shared -cudart shared -Xcompiler -fPIC -O3 -std=c++17
                            -Xptxas -v -gencode=arch=compute_90a,code=sm_90a -I "${INCLUDE}"
                            -o "${kernel}.so" "${kernel}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "${kernel} does not compile:\n${out}${err}")
    endif()
    if(err MATCHES "[1-9][0-9]* bytes spill")
        message(FATAL_ERROR "${kernel} spills registers:\n${err}")
    endif()
    # Nor any nvcc warning (the split and bulk kernels left the row kernels unreferenced).
    if(err MATCHES "warning #[0-9]+-D")
        message(FATAL_ERROR "${kernel} compiles with warnings:\n${err}")
    endif()
    message(STATUS "ok ${kernel}")
endforeach()
