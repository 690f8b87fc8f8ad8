${# gemm/launch_checks.cu: kevolve_launch's checks of a GEMM (gemmcodegen.h). Values: A, B, C.}
    // This file was generated for one task; refuse any other so a mismatch is an error.
    if (args->abi_version != KEVOLVE_ABI_VERSION || args->op != KEVOLVE_OP_GEMM ||
        args->num_inputs != 2 || args->num_outputs != 1)
        return 1;
    if (args->inputs[0].dtype != ${A} || args->inputs[1].dtype != ${B} ||
        args->outputs[0].dtype != ${C})
        return 2;
    if (args->inputs[0].stride[1] != 1 || args->inputs[1].stride[1] != 1 ||
        args->outputs[0].stride[1] != 1)
        return 3;
