${# wgmma/wgmma_tile.cu: wgmmaTile for the tile width of gemm.cu. Values: MMA_N (the wgmma N, a}
${# multiple of 16 from 64 to 256), ACC (MMA_N / 2 accumulators per thread), ACC_OPERANDS (%0 ..}
${# %ACC-1), ACC_BINDINGS ("+f"(d[0]) .. "+f"(d[ACC-1])), DESC_A, DESC_B, SCALE_D (the operand}
${# numbers after the accumulators), MMA_TYPE, TRANS_A and TRANS_B (imm-trans-a/b: 0 K-major, 1}
${# MN-major), OPERAND_LAYOUT (the comment's words for them).}
// D (64 x ${MMA_N}, fp32) = A (64 x 16) * B (16 x ${MMA_N}) + (scaleD ? D : 0), ${OPERAND_LAYOUT}.
__device__ inline void wgmmaTile(float (&d)[${ACC}], uint64_t descA, uint64_t descB, int scaleD) {
    asm volatile("{\n\t.reg .pred p;\n\t"
                 "setp.ne.b32 p, %${SCALE_D}, 0;\n\t"
                 "wgmma.mma_async.sync.aligned.m64n${MMA_N}k16.f32.${MMA_TYPE}.${MMA_TYPE} {"
${ACC_OPERANDS}
                 "}, %${DESC_A}, %${DESC_B}, p, 1, 1, ${TRANS_A}, ${TRANS_B};\n\t}"
                 :
${ACC_BINDINGS}
                 : "l"(descA), "l"(descB), "r"(scaleD));
}
