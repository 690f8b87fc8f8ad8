// kevolve-cli --help: the commands, their options and the exit codes.
#include "commands.h"

namespace kev::cli {

const char* const kUsage = R"(Usage: kevolve-cli COMMAND [OPTIONS]

Commands:
  tasks [--json]                      list the task library (built-in tasks and --tasks-dir)
  families [--task T] [--device D] [--json]
                                      the builtin backend's kernel families; with --task, those
                                      that support T on the device (default h200, or a device
                                      .json file as the harness probe describes one), each with
                                      its parameters, its default plan and whether that plan
                                      fits, and its prior
  run --task T [OPTIONS]              start a new session on task T (a library name or a .json file)
  resume SESSION [OPTIONS]            continue a session folder
  show SESSION [--json]               a table of the session's iterations
       [--timeline]                   each step's plan, code, evaluation and review on the
                                      wall clock, and candidates evaluated per minute
  export SESSION --out DIR [--version N]
                                      the best (or version N) kernel with its task, reports
                                      (Markdown, HTML with the chart), raw samples, environment
                                      and a one-line re-verify command
  knowledge stats | export FILE | import FILE [--knowledge PATH] [--json]
                                      the per-user knowledge store (every measured configuration
                                      and the decisions on it; docs/knowledge.md): a summary, an
                                      export as JSON lines ("-" = stdout), or a merge of another
                                      store's export (no duplicates; a bad line is refused with
                                      its line number and field, and nothing is imported)

Options of run and resume:
  --backend B                 agent backend for all roles: builtin (default), llm, scripted
  --planner B, --coder B, --reviewer B
                              the backend of one role (roles can mix)
  --agent-options FILE        JSON options for the agents: one object for every role, or
                              {"planner": {...}, "coder": {...}, "reviewer": {...}}
                              (e.g. llm: base_url, model, preset; never put keys here: keys come
                              from KEVOLVE_API_KEY or <PRESET>_API_KEY)
  --provider P                llm: a preset that fills in defaults: openai, vllm, ollama,
                              llamacpp, openrouter, deepseek, custom (the default)
  --base-url URL              llm: the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1
  --model M                   llm: the model's name on that server
  --iterations N              iterations to run (default 10)
  --target R                  stop when a correct, non-suspicious kernel reaches R x the
                              reference's speed (default 1.0; 0 = never)
  --target-floor P            memory-bound tasks: the target also needs P% of the DRAM roofline
                              floor (default 90; 0 = the speedup alone decides)
  --beam N                    candidates per iteration, evaluated in parallel (default 1)
  --session DIR               the session folder (run; default kevolve-sessions/TASK-TIME)
  --step                      step mode: approve, edit or reject every iteration here
  --harness CMD               the worker launcher, e.g. "kevolve-harness serve --device 1",
                              "ssh gpu1 kevolve-harness serve", "srun --gres=gpu:1 kevolve-harness
                              serve"; repeat (or separate with ';') for one worker per GPU
                              (docs/cluster.md; default: $KEVOLVE_HARNESS, else kevolve-harness
                              next to kevolve-cli, else on PATH)
  --time-budget S             stop after S seconds
  --timing-budget S           seconds of interleaved timing per candidate (default: the task's,
                              3 s; with --beam, 1.5 s, so that the GPU times more candidates a
                              minute; the report's rounds and CI say how precise each figure is)
  --plateau N                 stop when N iterations bring no gain of 1% (default 4; 0 = never)
  --knowledge PATH            the knowledge store that the session reads (the nearest solved
                              tasks' best configurations, people's rejections and edits) and
                              writes (every step); "off" for none (default: $KEVOLVE_KNOWLEDGE,
                              else ~/.local/share/kevolve/knowledge.sqlite)
  --json                      machine-readable output: one JSON object per line

Common options:
  --tasks-dir DIR             also read task files from DIR
  -h, --help                  this text

Exit codes:
  0    finished (target, iteration limit, budget, plateau or stop)
  1    other failure (session folder unreadable or unwritable, harness protocol error)
  2    usage error or bad task (the message names the field)
  3    no harness worker could be started or reached (see --harness): a missing program, a
       refused ssh host, a Slurm job cancelled before it started; the message quotes the launcher
  4    no CUDA device: the harness found no GPU (the session folder is valid and can be resumed
       on a GPU host)
  5    agent failure (an unavailable backend, a backend that cannot serve the task, e.g.
       builtin for a custom op, or an agent that could not answer)
  130  interrupted (Ctrl-C): completed steps are saved; resume continues the session
)";

// The llm backend's flags; --help follows it with LlmSettings::optionHelp().
const char* const kLlmUsage =
    R"(Options of run and resume for the llm backend (every role it plays):
  --token-budget N            stop the session once N tokens are spent (every call of every run
                              of the session, failed ones too; checked before each request)
  --cost-budget USD           the same in US dollars (built-in prices of the OpenAI and DeepSeek
                              models; "prices" in --agent-options overrides them)
  --connect-timeout S         default 10
  --first-token-timeout S     from sending a request to its first token (default 60)
  --stall-timeout S           longest silence once tokens flow (default 120)
  --total-timeout S           one attempt in all (default 1800)
  --max-retries N             default 3; a server that sends no token is retried once, so a
                              dead server fails in about 2 minutes
  --max-tokens N, --context-tokens N, --temperature T
  --fallback-model M          asked when the model is missing or keeps failing
  --num-ctx N, --keep-alive D Ollama: the context it loads the model with (default: the
                              context tokens), how long it keeps it loaded ("30m", "-1")
  --check                     ask each endpoint for its models (GET /v1/models): is the server
                              up, does the key work, is the model served; then exit (0 or 5)
  --quiet                     no progress lines
Keys come from $<PRESET>_API_KEY (e.g. OPENAI_API_KEY), else $KEVOLVE_API_KEY for presets that
need a key and for custom; local presets (ollama, vllm, llamacpp) get only their own variable.
The options of an --agent-options file (one object, or one per role):
)";

} // namespace kev::cli
