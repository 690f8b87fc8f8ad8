${# memory/launch_checks.cu: kevolve_launch's checks of a memory-bound op (memorycodegen.h).}
${# Values: OP (KEVOLVE_OP_...), INPUTS, IN0..IN2 and OUT0 (KEVOLVE_F16 ...). Conditions: HAS_IN1, HAS_IN2.}
    // This file was generated for one task; refuse any other so a mismatch is an error.
    if (args->abi_version != KEVOLVE_ABI_VERSION || args->op != ${OP} ||
        args->num_inputs != ${INPUTS} || args->num_outputs != 1)
        return 1;
    if (args->inputs[0].dtype != ${IN0} ||
${if HAS_IN1}
        args->inputs[1].dtype != ${IN1} ||
${endif}
${if HAS_IN2}
        args->inputs[2].dtype != ${IN2} ||
${endif}
        args->outputs[0].dtype != ${OUT0})
        return 2;
    if (args->inputs[0].stride[args->inputs[0].rank - 1] != 1 ||
${if HAS_IN1}
        args->inputs[1].stride[args->inputs[1].rank - 1] != 1 ||
${endif}
${if HAS_IN2}
        args->inputs[2].stride[args->inputs[2].rank - 1] != 1 ||
${endif}
        args->outputs[0].stride[args->outputs[0].rank - 1] != 1)
        return 3;
