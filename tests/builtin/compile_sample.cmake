# Generates a fixed sample of parameter points with kev-builtin-gen and compiles each kernel the
# way the harness does for sm_90a; fails on a compile error, a compiler warning or any ptxas spill.
# Inputs: GEN (kev-builtin-gen), NVCC, INCLUDE (harness/include), OUT (scratch folder), TASKS
# (tests/builtin/tasks, the memory-bound test tasks; a task starting with @ is a file there),
# STRATEGIES (tests/builtin/strategies; a mode "strategy=FILE" generates that strategy file, into
# its own subfolder since the generator names files by task, family and point index).
file(REMOVE_RECURSE "${OUT}")
set(points
    "gemm_fp16_fp32_4096|mma_sync|sample|2"
    "gemm_bf16_bf16_8192|mma_sync_splitk|default|1"
    "gemm_fp16_fp16_4096|mma_sync|default|1"
    "gemm_fp32_fp32_4096|fma_regblock|sample|2"
    "gemm_fp16_fp32_nonsquare|fma_regblock|default|1"
    "gemm_fp16_fp32_4096|fma_tiled|sample|2"
    "gemm_fp16_fp32_4096|wmma|sample|2"
    "@softmax_f32_test|rowwise|sample|3"
    "@softmax_f16_test|rowwise|sample|2"
    "@layernorm_bf16_test|rowwise|sample|4"
    "@layernorm_bf16_test|rowwise|strategy=layernorm_async_vec4.json|1"
    "@layernorm_bf16_test|rowwise|strategy=layernorm_async_weights_registers.json|1"
    "@layernorm_bf16_test|rowwise|strategy=layernorm_prefetch_shifted.json|1"
    "@softmax_f16_test|rowwise|strategy=softmax_prefetch_two_pass.json|1"
    "@softmax_f16_test|rowwise|strategy=softmax_prefetch_one_pass.json|1"
    # Clusters of 3 and 5 blocks (session 25: any split from 1 to 8).
    "@layernorm_bf16_test|rowwise|strategy=layernorm_split3_streamed.json|1"
    "@softmax_f16_test|rowwise|strategy=softmax_bulk_split5.json|1"
    "@layernorm_f32_test|rowwise|default|1"
    "@rmsnorm_bf16_test|rowwise|sample|4"
    "@rmsnorm_f32_test|rowwise|default|1"
    "@reduce_max_f32_test|rowwise|sample|2"
    "@reduce_sum_f16_test|rowwise|default|1"
    "@gemv_f16_test|gemv|default|1"
    "@gemv_t_f16_test|gemv|sample|2"
    "@elementwise_gelu_f16_test|elementwise|default|1"
    "@elementwise_silu_f32_test|elementwise|default|1"
    # wgmma_tma (sm_90a): the 128x256 TMA-store default, a small-M default whose two splits are
    # summed in the cluster, split-K both ways and clusters along N on swapped tiles, and B in
    # two k-slabs of a 64-column tile in a 2-CTA cluster along M.
    "gemm_fp16_fp32_4096|wgmma_tma|default|1"
    "gemm_bf16_m64_n4096_k4096|wgmma_tma|default|1"
    "gemm_bf16_m64_n4096_k4096|wgmma_tma|strategy=wgmma_splitk8_cluster_swapped.json|1"
    "gemm_bf16_m256_n12288_k4096|wgmma_tma|strategy=wgmma_splitk3_kernel_swapped.json|1"
    "gemm_bf16_m128_n4096_k11008|wgmma_tma|strategy=wgmma_cluster_n4_swapped.json|1"
    "gemm_bf16_m64_n4096_k4096|wgmma_tma|strategy=wgmma_bslabs_cluster_swapped.json|1")
foreach(entry IN LISTS points)
    string(REPLACE "|" ";" point "${entry}")
    list(GET point 0 task)
    list(GET point 1 family)
    list(GET point 2 mode)
    list(GET point 3 count)
    if(task MATCHES "^@")
        string(SUBSTRING "${task}" 1 -1 task)
        set(task "${TASKS}/${task}.json")
    endif()
    set(out "${OUT}")
    set(pointArgs --points ${mode} --max-points ${count})
    if(mode MATCHES "^strategy=(.*)$")
        set(out "${OUT}/${CMAKE_MATCH_1}")
        set(pointArgs --strategy "${STRATEGIES}/${CMAKE_MATCH_1}")
    endif()
    execute_process(COMMAND "${GEN}" --out "${out}" --task ${task} --family ${family} ${pointArgs}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "kev-builtin-gen ${task} ${family} failed (${rc}): ${out}${err}")
    endif()
endforeach()
file(GLOB_RECURSE kernels "${OUT}/*.cu")
list(LENGTH kernels n)
if(n LESS 27)
    message(FATAL_ERROR "expected at least 27 generated kernels, got ${n}")
endif()
foreach(kernel IN LISTS kernels)
    file(STRINGS "${kernel}" head LIMIT_COUNT 2)
    if(NOT head MATCHES "// expect: ok;// task: .*\\.json")
        message(FATAL_ERROR "${kernel}: missing the '// expect: ok' and '// task:' header lines")
    endif()
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
    # A kernel a user exports compiles without warnings (nvcc's "warning #128-D: loop is not
    # reachable" in the FULL row-wise instantiations went unnoticed for a session).
    if(err MATCHES "warning #[0-9]+-D")
        message(FATAL_ERROR "${kernel} compiles with warnings:\n${err}")
    endif()
    message(STATUS "ok ${kernel}")
endforeach()
