"""The knowledge tables of ``compare-runs``' fixes, in words (:mod:`hlodiff.render.across_runs` picks a row from a
verdict's typed facts).

``CACHE_FIXES`` holds the fixes for the verdicts outside the graph (one row per reason, each exercised by a real
pair under ``fixtures/*/cache_*`` or ``fixtures/scenarios/runs/`` where one exists); ``GRAPH_FIXES`` the fixes of
a graph difference between two runs that replace the graph diff's own. Each row is tested with a look-alike in
``tests/test_compare_runs*.py``.
"""

from __future__ import annotations

CACHE_FIXES: dict[str, str] = {
    "below_compile_time": "write fast compilations too: jax.config.update('jax_persistent_cache_min_compile_time_secs'"
                          ", 0) (or JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0) in every run that fills the cache: "
                          "JAX reads it after each compilation, when it decides whether to write the entry (it "
                          "gates writes only, not loads)",
    "below_entry_size": "write small entries too: jax.config.update('jax_persistent_cache_min_entry_size_bytes', -1) "
                        "in both runs",
    "exceeds_cache_size": "raise jax_compilation_cache_max_size above the entry's size ({measured} bytes; it is "
                          "{threshold} bytes for the whole cache), or set it to -1 (no limit), in both runs",
    "write_failed": "run A could not write the entry ({detail}): make the cache folder writable (permissions, free "
                    "space, not a read-only mount) for the run that fills it",
    "read_failed": "run B found the entry under the same key but could not read it ({detail}): the file is cut off "
                   "or corrupt (a copy or sync of the cache folder stopped half way, a full disk). JAX compiles "
                   "again but does not replace an entry that exists, so every later run misses it too: delete the "
                   "entries that fail to read (or the whole cache folder) and let one run write them again, and "
                   "check how the folder is copied between jobs",
    "renamed": "run B's {b} is the program run A cached as {a}, renamed: JAX names the cache entry after the jitted "
               "function and hashes the module with its name, so a renamed function (or a lambda, functools.partial "
               "or wrapper that carries another name) is a new key; expected once after a rename, or keep the "
               "function name the runs share (its __name__) to reuse the entry",
    "host_callbacks": "JAX never caches a program with host callbacks (jax.debug.print, breakpoint, io_callback): "
                      "leave them out of the jitted function in runs meant to reuse the cache",
    "cache_disabled": "the cache was disabled or failed to initialize when it compiled: check "
                      "jax_enable_compilation_cache and that the cache folder can be written",
    "cache_configured_late": "set jax_compilation_cache_dir before the first JAX operation (before the first array "
                             "or jit call), e.g. JAX_COMPILATION_CACHE_DIR in the environment",
    "no_cache": "configure the same persistent cache in run B as in run A (jax_compilation_cache_dir), and check "
                "that nothing switches it off there (jax_enable_compilation_cache / JAX_ENABLE_COMPILATION_CACHE=false"
                ": the same silence in the log)",
    "other_cache_folder": "run A used the cache folder {a}, run B {b}: give both runs the same folder, one fixed "
                          "absolute path shared by every run (a folder named after a job id, TMPDIR, a process id or "
                          "a date is another folder in every run); JAX also writes the folder into the compile "
                          "options it hashes, so another folder is another key as well",
    "entry_missing": "point both runs at the same cache folder and check nothing evicts or cleans it between runs",
    "entry_missing_elsewhere": "run B read another cache folder than the one run A wrote (or the entry was removed "
                               "between the runs): give both runs the same folder, one fixed path shared by the "
                               "jobs (xr.initialize_cache(path) or XLA_PERSISTENT_CACHE_PATH); a path built from "
                               "TMPDIR, a job id, a process id or the working directory is another folder in every "
                               "job",
    "entry_missing_relative": "run A wrote it under the key run B looked up, yet run B did not find it: the cache "
                              "folder is the relative path {a}, which each process resolves against its working "
                              "directory, so runs started in other folders (a launcher or Hydra's job.chdir, a "
                              "job's own folder) read and write other caches; give jax_compilation_cache_dir an "
                              "absolute path (os.path.abspath before the working directory changes)",
    "entry_missing_empty": "run A compiled it, yet the cache folder holds no entry at all after run A: nothing was "
                           "written there; check that run A could write to this folder and wrote to this one",
    "entry_missing_empty_torch_xla": "run A wrote nothing to the cache (no entry in the folder after run A, though "
                                     "it compiled): torch_xla writes only from a process that called "
                                     "xr.initialize_cache(path, readonly=False) (XLA_PERSISTENT_CACHE_READ_ONLY "
                                     "unset); give the run that should fill the cache readonly=False, and check the "
                                     "folder is writable",
    "same_folder_spelled_apart": "both runs use one cache folder, spelled two ways (run A: {a}, run B: {b}): JAX "
                                 "writes the folder's string into the compile options it hashes (XLA's autotune "
                                 "cache folder, xla_gpu_per_fusion_autotune_cache_dir), so each spelling is its own "
                                 "key; pass the same string in both runs (os.path.realpath of the folder), or set "
                                 "jax_persistent_cache_enable_xla_caches to 'none' to keep the folder out of the key",
    "jax_setting": "run {side} ran with {setting}: JAX writes it into the compile options it hashes ({name} is {b} in "
                   "run B, {a} in run A), so each value is its own cache entry; set it the same way in both runs "
                   "(look for it in the environment of run {side})",
    "no_cache_torch_xla": "run B had no persistent cache: its metrics count compilations and no persistent-cache "
                          "lookup at all (no PersistentCacheHit or PersistentCacheMiss, not even a failed load); "
                          "configure the same cache in run B as in run A: xr.initialize_cache(path) at its start, or "
                          "XLA_PERSISTENT_CACHE_PATH in its environment (a launcher that clears the environment "
                          "drops it)",
    "jit_disabled": "run B ran with jit disabled (JAX_DISABLE_JIT=1 in its environment, jax.config.update("
                    "'jax_disable_jit', True) or a `with jax.disable_jit():` block left from debugging): every jitted "
                    "function ran op by op, so run A's cached programs were never asked for and each operation "
                    "compiled on its own; unset it in runs meant to reuse the cache",
    "eager_mode": "run B ran in torch_xla's eager mode (XLA_USE_EAGER_DEBUG_MODE=1 in its environment, or "
                  "torch_xla.experimental.eager_mode(True) left from debugging): each op compiled and ran as it was "
                  "dispatched, so run A's step graph was never built and each op compiled on its own; unset it in "
                  "runs meant to reuse the cache (or compile the step as one graph with torch_xla.compile)",
    "not_loadable_inferred": "this backend cannot load cached executables: {detail}; so here the persistent cache "
                             "cannot save this compilation whatever the code does. Nothing captured shows that run B "
                             "looked the entry up, though (no warning that loading failed, no metrics report): where "
                             "entries do load, also check that run B configures the same cache as run A "
                             "(xr.initialize_cache(path) at its start, or XLA_PERSISTENT_CACHE_PATH in its "
                             "environment: a launcher that clears the environment drops it), and keep run B's "
                             "metrics report (PersistentCacheMiss, PersistentCacheDeserializeFailure) to tell",
    "not_loadable": "nothing to change in your code: this backend could not deserialize the cached executable, so "
                    "the persistent cache cannot save a compilation here (torch_xla's CPU client cannot; TPU and GPU "
                    "can)",
    "same_key_precision": "run B's program is not the one cached under its key: its matmuls run at another "
                          "precision (operand_precision {b} in run B, {a} in run A: "
                          "torch_xla.backends.set_mat_mul_precision), which torch_xla's graph hash, its cache key, "
                          "does not cover, so a device that loads entries would run run A's program at run A's "
                          "precision; set the same mat mul precision in both runs, or give each precision its own "
                          "cache folder",
    "same_key_program": "run B's program is not the one cached under its key (the graph hash is the same, the HLO "
                        "differs: {a} in run A, {b} in run B), so a device that loads entries would run run A's "
                        "program; find the setting that changed the program outside the graph hash and keep it the "
                        "same in both runs, or give each setting its own cache folder",
    "xla_flag": "run both with the same XLA_FLAGS: --{name} is {b} in run B and {a} in run A",
    "xla_debug_option": "set {name} the same way in both runs ({b} in run B, {a} in run A): it comes from XLA_FLAGS "
                        "(--{name}) or from jax.jit(..., compiler_options={{'{name}': ...}})",
    "xla_compiler_options": "set {name} the same way in both runs ({b} in run B, {a} in run A): run B's other "
                            "programs ({others}) do not hold it, so it is no process-wide flag but this function's "
                            "own option, jax.jit(..., compiler_options={{'{name}': ...}}) (or .lower(...).compile("
                            "compiler_options=...)) for {program}: pass it the same compiler_options in both runs, "
                            "or expect one cache entry per option set",
    "device_count": "run A's program was built for {a} devices ({name}), run B's for {b}: each device count is its "
                    "own program and cache entry; expected when the runs had different machines, else run both on "
                    "the same number of devices (the mesh over jax.devices())",
    "device_topology": "set XLA_FLAGS' --{name} the same way in both runs ({b} in run B, {a} in run A): JAX leaves "
                       "this flag out of the key but hashes the devices' topology, so each device configuration is "
                       "its own cache entry",
    # round 13: the same computation whose module header counts other devices (replica_count / num_partitions)
    "device_count_header": "run B's program was built for {b} devices ({name}), run A's for {a}, and it is the same "
                           "computation otherwise: the process saw another number of devices (JAX: XLA_FLAGS' "
                           "--xla_force_host_platform_device_count, CUDA_VISIBLE_DEVICES, another number of "
                           "processes) and the count is part of the key: run both with the same devices visible, or "
                           "expect one cache entry per device count",
    "device_count_header_torch_xla": "run B's graph was built for {b} devices ({name}), run A's for {a}, and it is "
                                     "the same computation otherwise: torch_xla's PJRT client saw another number of "
                                     "devices in run B (CPU_NUM_DEVICES on the CPU; on a TPU the visible chips, "
                                     "TPU_VISIBLE_CHIPS / TPU_PROCESS_BOUNDS, or a launch with another number of "
                                     "processes) and hashes the count into every graph: run both with the same "
                                     "devices visible (look for such a variable in each run's environment), or "
                                     "expect one cache entry per device count",
    "xla_debug_option_torch_xla": "run both with the same XLA_FLAGS: {name} is {b} in run B and {a} in run A "
                                  "(--{name}); torch_xla's graph hash, its cache key, changes with it",
    "jax_compile_setting": "compile with the same options in both runs: {name} is {b} in run B and {a} in run A, "
                           "and it comes from a JAX setting, {setting}, not an XLA flag: set it the same way in both runs "
                           "(look for it in each run's environment or jax.config calls)",
    "compile_option": "compile with the same options in both runs: {name} is {b} in run B and {a} in run A",
    "device_assignment": "run B compiled it for device {b}, run A for device {a} (the device assignment in the "
                         "compile options, {name}: jax.default_device, a device_put to another device, a worker's "
                         "LOCAL_RANK): JAX keeps the device assignment in the cache key (it strips it on GPU only), "
                         "so each device has its own entry: expected once per device, or run the programs on the "
                         "same device id in both runs to share one entry",
    "version": "a new {name} is a cold cache (its version is in the key): fill the cache once after upgrading, or "
               "pin {name} to one version for the runs that share it",
    "elided_constants": "dump with --xla_dump_hlo_as_proto to see the constants, and pass arrays as arguments "
                        "instead of closing over them",
    "metadata_in_key": "the two programs differ only in their source lines ({a} in run A, {b} in run B) and nothing "
                       "else the key hashes was seen to differ: JAX strips source lines before hashing unless "
                       "jax_compilation_cache_include_metadata_in_key is on, and with it on every edit that moves "
                       "code is a new key; leave it off (its default) in both runs to reuse entries across such "
                       "edits, or, if it is off, compare the other inputs of the key (JAX and jaxlib versions, "
                       "devices)",
    "unknown_key": "compare what else the key hashes (JAX and jaxlib versions, platform, devices); `hlodiff record` "
                   "notes the versions of each run",
    # review 21 (F1): both runs recorded, their options, XLA_FLAGS and versions the same: not asked for again
    "unknown_key_recorded": "the dumped options, XLA_FLAGS and versions are the same in both runs ({compared}); "
                            "compare what else the key hashes: the devices (jax.devices(): their kind and count, "
                            "JAX_PLATFORMS) and any jax.config setting the program makes itself (a compile option it "
                            "writes, such as the matmul precision)",
    "unknown_key_no_dump": "the key covers the program (its HLO), the XLA flags, the compile options (a jax.jit's "
                           "compiler_options, JAX settings such as the matmul precision), the devices and the "
                           "versions, and neither run was dumped: capture both runs again with "
                           "XLA_FLAGS='--xla_dump_to=DIR --xla_dump_hlo_as_text' (and JAX_LOG_COMPILES=1) to tell "
                           "which differs",
    "unknown_key_torch_xla": "the same HLO under another graph hash, and the dumped options are the same: compare "
                             "what else the runs' environments set (torch_xla version, XLA_FLAGS, PJRT_DEVICE)",
    "debug_metadata": "the program did not change: the two graphs are the same computation, and only run {side}'s "
                      "carries debug metadata (op names and Python frames, in {n} instructions), which torch_xla "
                      "writes when XLA_HLO_DEBUG=1 or XLA_IR_DEBUG=1 is in the environment and hashes with the graph; "
                      "set XLA_HLO_DEBUG and XLA_IR_DEBUG the same way in both runs (leave them unset in runs meant "
                      "to reuse the cache)",
    "unknown": "nothing captured says why; capture both runs with JAX_EXPLAIN_CACHE_MISSES=1 and keep the cache "
               "folder's listing",
    "check_contents": "run B verified the cache: with jax_compilation_cache_check_contents on "
                      "(JAX_COMPILATION_CACHE_CHECK_CONTENTS=1 in its environment, or jax.config.update) JAX "
                      "recompiles every key the first time a process meets it, even with its entry on disk, and "
                      "compares the two executables (here they differed: CacheVerificationError); it is a setting "
                      "for testing the cache: turn it off in runs meant to load from it",
    # the twelfth stop's last read: the listing is taken after run A, so it cannot show the entry was still there
    # when run B looked (a cleanup or an eviction between the runs has the same evidence)
    "unknown_entry_there": "run A wrote the entry under this key, the cache's listing (taken after run A) holds it, "
                           "and run B missed it without a read error: JAX recompiles an entry it has when "
                           "jax_compilation_cache_check_contents is on (JAX_COMPILATION_CACHE_CHECK_CONTENTS=1 in "
                           "run B's environment, a setting for testing the cache), or run B looked in another folder "
                           "(compare jax_compilation_cache_dir / JAX_COMPILATION_CACHE_DIR of both runs), or the "
                           "entry was removed between the runs (a cleanup of the folder, a temporary-files cleaner, "
                           "an eviction that keeps the cache under a size limit): list the folder just before run B "
                           "to tell",
    "unknown_torch_xla": "nothing captured says why; keep run B's stderr (torch_xla warns 'Failed to deserialize "
                         "executable') and its metrics_report() (PersistentCacheHit, PersistentCacheMiss, "
                         "PersistentCacheDeserializeFailure) beside its capture, and give the cache folder with "
                         "--cache",
}


GRAPH_FIXES: dict[str, str] = {
    "state_shape": "the step's state has other shapes ({name}: {a} in run A, {b} in run B: parameters the step "
                   "updates and returns, a model's weights or optimizer state): another model is another program "
                   "and cache entry, so this is expected after changing the model; build it with the same sizes in "
                   "both runs to reuse the cache",
    "input_shape": "an input's shape differs between the runs ({name}: {a} in run A, {b} in run B): each input shape "
                   "is its own program and cache entry, so this is expected when the runs feed other shapes; feed "
                   "the same shapes (batch size, sequence length) in both runs to reuse the cache",
    "input_length": "the inputs' length differs between the runs ({name}: {a} in run A, {b} in run B): dimension "
                    "{dim} is {la} in run A and {lb} in run B, dimension 0 the same in both and shared by inputs "
                    "that kept their shape (the batch): a "
                    "length taken from the data (padding to the longest sequence of a batch, or of a sample drawn "
                    "without a fixed seed) is another program and cache entry for every value; pad to a fixed "
                    "length (or a few bucket lengths, such as multiples of 64) so that every run feeds the same "
                    "shapes; if the length is a setting, give it the same value in both runs",
    # last read of the twelfth stop: a time-major [T, B] input (s32[35,8] -> s32[35,16], the batch size from argv)
    # changes a non-leading dimension too; with no input that kept dimension 0 to show the batch, both readings
    "input_dimension": "an input's shape differs between the runs ({name}: {a} in run A, {b} in run B): only "
                       "dimension {dim} changed, {la} in run A and {lb} in run B; each shape is its own program and "
                       "cache entry. If that dimension is the batch (a time-major [T, B] input, the batch size set "
                       "per run), use the same batch size in both runs (drop_last for a short last batch); if it is "
                       "a length (padding to the longest sequence drawn), pad to a fixed length or a few bucket "
                       "lengths so that every run feeds the same shapes",
    "seed_offset": "every random seed run B's program splits into a key has {b} added to it, run A's {a}: JAX adds "
                   "jax_random_seed_offset (JAX_RANDOM_SEED_OFFSET, which launchers set per worker) to each seed "
                   "while tracing, so each offset is its own program and cache entry; set it the same way in both "
                   "runs, or keep it 0 and fold the worker's index into the key as data "
                   "(jax.random.fold_in(key, index)) for one program on every worker (if the code adds a constant "
                   "to the seed instead, that constant changed)",
    "lowering": "run A's program was lowered with {name} {a}, run B's with it {b}: the same call (jax.random's "
                "draws here) becomes another program, so each value is its own cache entry; set {name} the same "
                "way in both runs (its default changed in JAX 0.5.0: an upgrade, or a setting pinned on one host, "
                "does this)",
    "prng_impl": "run A's random keys are {a} keys, run B's {b} keys (jax_default_prng_impl, "
                 "JAX_DEFAULT_PRNG_IMPL): a key's shape and the program that draws from it follow the setting, so "
                 "every program that takes or draws from a key is another program and cache entry; set "
                 "jax_default_prng_impl the same way in both runs (or make the keys with an explicit "
                 "jax.random.key(seed, impl=...))",
    "aliasing": "buffer donation differs between the runs ({summary}): donation is part of the compiled program, so "
                "each choice is its own cache entry; jit with the same donate_argnums in both runs (expected once "
                "after switching donation on or off)",
    "pytree_leaves": "run {side}'s {program} takes arguments run {other}'s does not ({paths}): the arguments' "
                     "pytree differs between the runs (a value that is None or missing in one run's config or "
                     "defaults and a number in the other's, a dict key one run adds), and the ops that read them "
                     "come with them: give the arguments one structure in both runs (a neutral value such as 0.0 "
                     "rather than None), or expect one program per structure",
    "argument_order": "run B's {program} takes the same arguments in another order ({b} in run B; {a} in run A: "
                      "leaf and parameter number): JAX passes a pytree's leaves as the program's parameters in its "
                      "flattening order; a plain dict sorts its keys, but an OrderedDict (a config read with "
                      "json.load(object_pairs_hook=OrderedDict), a config library that keeps the file's order) or a "
                      "custom pytree node keeps its insertion order, so the same keys in another order are another "
                      "program and cache entry: pass a plain dict (or build it with sorted keys) so that every run "
                      "flattens it alike",
    "argument_dtype": "run {side}'s {program} takes {these} where run {other}'s takes {those}: the arrays passed "
                      "in have another dtype in one run (a checkpoint restored with the dtype it was saved in, a "
                      "NumPy array built or loaded in another dtype, a loader's cast), and each dtype is its own "
                      "program and cache entry: cast them to one dtype where they are made or restored "
                      "(.astype(jnp.float32) for float32 training), or save them in the dtype the step trains in",
    "precision_jax": "only run {side}'s program computes in {types}, the other's in f32{same}: a dtype chosen "
                     "in the code or its config differs between the runs (a model's dtype=jnp.bfloat16, an .astype to {types} inside the jitted function): each precision is its "
                     "own program and cache entry; give both runs the same dtype setting",
    "repeated_work": "run {more}'s step graph repeats run {fewer}'s work (run A: {a}; run B: {b}): more inputs of "
                     "the shapes the other already takes, and more instructions: a Python loop traced into the one "
                     "graph ran more times in run {more} (micro-batches of gradient accumulation per optimizer step, "
                     "an unrolled inner loop, a number of augmented views), and each count is its own graph and "
                     "cache entry: expected once per count if it was changed on purpose; else give the count (the "
                     "accumulation steps, the loop's length) the same value in both runs",
    "repeated_weights": "run {more}'s step graph takes more inputs of the shapes run {fewer}'s already takes, and "
                        "more instructions (run A: {a}; run B: {b}), but the inputs that repeat are ones the step "
                        "writes back (weights), or the programs mark none written back, so nothing shows the data "
                        "repeating: more layers of the same shapes (a depth or layer count read from the "
                        "environment or a config) would look like this, and so would a loop traced into the graph; "
                        "compare the two runs' model settings (depth, number of blocks) and loop counts, and give "
                        "them the same value in both runs, or expect one compilation per model size",
    "mesh_axis_names": "only the mesh's axis names differ between the runs (run A: {a}; run B: {b}); the devices, "
                       "the mesh's shape and the partitioning are the same: the partitioner (Shardy) keeps the named "
                       "mesh and each sharding's axis names in the program JAX hashes, so renamed axes are another "
                       "program and cache entry: spell the axis names the same way in every run (one constant or "
                       "config for the mesh), or expect one compilation after a rename",
    "exponent_type": "{program} raises to a power whose exponent has another Python type in each run (run A: {a}; "
                     "run B: {b}): JAX traces x ** n with an int n as integer_pow (multiplies) and with a float "
                     "(2.0) as pow, so the same number written 2 in one run and 2.0 in the other (a config file, a "
                     "command-line option parsed as float, a static argument) is another program and cache entry: "
                     "give the exponent one type wherever it is read (int(...) for a whole power), or expect one "
                     "compilation after the change",
    "library_setting_across_runs": "the ops that differ were traced inside library code ({library_call}) and carry "
                                   "no line of yours ({summary}): between two runs that is a library call given "
                                   "another argument, option or mode in one run (a loss's options, approximate= on "
                                   "GELU, a dropout probability, train() vs eval()), set in the code, its config or "
                                   "the command line: expected once if it was changed on purpose (the new program "
                                   "then loads from the cache); if not, find the call that reaches it and give it "
                                   "the same settings in both runs",
    # round 13 (runs13_torch_cli_layers): a warm-up row's words ("creates its state on its first step") fit two
    # steps of one run; two runs of one script warm up alike, so inputs one run's graph has and the other's lacks
    # are tensors the model or optimizer holds in one run only
    "state_inputs_across_runs": "run B's graph and run A's take other inputs ({summary}): tensors a model or its "
                                "optimizer holds (parameters, buffers, optimizer state) in one run only, not a "
                                "first-step warm-up (both runs warm up alike): another model (more layers, another "
                                "size or option from the command line or a config) is another program and cache "
                                "entry, so this is expected after changing the model; build it the same way in both "
                                "runs to reuse the cache",
    # round 13: the same, once the user's call into that library function was found on disk (the function or an
    # instance of its module, hlodiff.explain.library_module_calls): the call is named, no "no line of yours"
    "library_setting_across_runs_call": "the ops that differ were traced inside library code ({library_call}), "
                                        "reached from your call at {line} ({summary}): between two runs that is "
                                        "that call given another argument, option or mode in one run (a loss's "
                                        "options such as label_smoothing, approximate= on GELU, a dropout "
                                        "probability, train() vs eval()), set where it is built or called, in a "
                                        "config or on the command line: expected once if it was changed on purpose "
                                        "(the new program then loads from the cache); if not, give it the same "
                                        "settings in both runs",
    "path_across_runs": "the traced Python took another path in the two runs ({summary}): between two runs that is a "
                        "change of the code, or of a value that steers the trace (a flag, a config or command line "
                        "value, a static argument), not a branch the program takes from step to step: the changed "
                        "program compiles once, then loads from the cache (expected if the change was deliberate: "
                        "nothing to fix); if it was not, give both runs the same code and values, and for a value "
                        "meant to differ from run to run pass it traced (lax.fori_loop for a loop count) for one "
                        "program whatever the value",
    # round 14 (runs14_jx_optimizer_adamw): the within-run row "returns other values on some calls (a metric, a
    # log): return the same outputs every call" fits two calls of one process; between two runs of one script the
    # outputs come from another program: AdamW's moments carried in and out where SGD carried none
    "outputs_across_runs": "run B's program and run A's return other values ({summary}): between two runs that is "
                           "not a function returning other values from call to call but another program: the code "
                           "took another path, chosen by the code, a flag, a config or a command line value (another "
                           "optimizer whose state the step carries in and out, such as AdamW's moments where SGD "
                           "keeps none; a metric or an output added): expected once if the change was deliberate "
                           "(the new program then loads from the cache); if not, give both runs the same code and "
                           "values",
    "special_scalar_across_runs": "one run's program bakes a Python number of 0 or 1 in as a constant where the "
                                  "other's takes it as an input ({summary}): torch_xla bakes the scalars 0 and 1 "
                                  "and passes other values as device data, so either the value differs between the "
                                  "runs (exactly 0 or 1 in one, another in the other: a changed setting, one "
                                  "program per value) or one run's environment has XLA_NO_SPECIAL_SCALARS=1, which "
                                  "passes 0 and 1 as data too: if the value is the same in both runs, set "
                                  "XLA_NO_SPECIAL_SCALARS the same way in both",
    "setting_across_runs": "the programs differ where the `if` at {if_line} tests {name}, which the program reads "
                           "from {origin} ({made}): a setting that differs between the runs, not a branch the "
                           "program takes from step to step. A changed program compiles once, then loads from the "
                           "cache: expected if {what} was changed on purpose, nothing to fix; if it was not, run "
                           "both with the same {what}",
    "sharding_across_runs": "the shardings differ between the runs ({summary}): the mesh (its shape, axis names or "
                            "device order) or the partition specs differ from one run to the other (a mesh shape "
                            "read from a setting or the command line): build the same mesh and specs in both runs, "
                            "or expect one program per mesh",
    "aliasing_torch_xla": "input/output aliasing differs between the runs ({summary}): torch_xla lets a tensor the "
                          "step updates in place reuse its input buffer (a buffer donor), and the donors are part of "
                          "the graph hash, its cache key; update the same tensors in place in both runs",
    "param_aliasing_off": "only run {side}'s program donates buffers ({summary}): the other's is the same "
                          "computation without its donors, which torch_xla leaves out when "
                          "XLA_ENABLE_PARAM_ALIASING=false is in the environment, most likely run {other}'s; the "
                          "donors are part of the graph hash, its cache key: set XLA_ENABLE_PARAM_ALIASING the same "
                          "way in both runs (unset is true)",
    "bf16_storage": "only run {side}'s program has float32 ({types}); every float32 of the other is bf16, parameters "
                    "and inputs included: torch_xla stores float32 tensors as bf16 when XLA_USE_BF16=1 (or "
                    "XLA_DOWNCAST_BF16=1) is in the environment, most likely run {other}'s: set it the same way in "
                    "both runs (if the code changed instead, a model and its inputs cast to torch.bfloat16 in one run "
                    "only, give them one dtype in both)",
    "float64": "only run {side}'s program computes in float64 ({types}); every floating tensor of the other is f32, "
               "parameters and inputs included: run {side} made its model and batches float64 (a default dtype "
               "set to torch.float64 with torch.set_default_dtype, a config's dtype, or .double()), so each dtype is "
               "its own program and cache entry: give both runs the same dtype, or expect one program per dtype",
    "precision": "only run {side}'s program computes in {types} (mixed precision: torch.autocast, a model cast to "
                 "{types}, or a dtype setting), the other's in f32: each precision is its own program and cache "
                 "entry; run both with the same precision setting (autocast on in both runs, or off in both) to "
                 "reuse the cache",
    "long32": "only run {side}'s program uses 64-bit integers ({types}); the other lowers them as 32-bit: torch_xla "
              "does that to every int64 tensor when XLA_USE_32BIT_LONG=1 is in the environment, most likely run "
              "{other}'s: set it the same way in both runs (if the code changed instead, give these tensors one "
              "dtype in both)",
    # round 13 (runs13_import_x64): the setting is as often turned on in code as in the environment, by the
    # script or by a module it imports (at import time), where a user who compares the environments finds nothing
    "x64": "only run {side}'s program uses 64-bit types ({types}); jax_enable_x64 was most likely on in run {side} "
           "and off in the other: it is set by JAX_ENABLE_X64 in the environment or in code by "
           "jax.config.update(\"jax_enable_x64\", True), in the script or in a module it imports (at import "
           "time: a library or helper imported in run {side} only): set it the same way in both runs, or give these "
           "values an explicit dtype (.astype(jnp.int32)) so both runs trace one program",
}
"""Fixes of a graph difference between two runs that replace the graph diff's own (written for two steps of one
run: "pad to a few sizes", "one graph per bucket"), keyed by what differs: shapes of state, shapes of inputs,
64-bit types in one run only (JAX's x64, torch_xla's 32-bit longs), float32 in one run only (torch_xla's bf16
storage), buffer donors (JAX's donate_argnums, torch_xla's in-place updates and XLA_ENABLE_PARAM_ALIASING)."""


ACROSS_RUNS_RULES: dict[str, str] = {
    "ops_branch_jax": "path_across_runs",
    "ops_library_setting": "library_setting_across_runs",
    "outputs_jax": "outputs_across_runs",
    "constant_float_special": "special_scalar_across_runs",
    "constant_lr_special": "special_scalar_across_runs",
    "constant_int_special": "special_scalar_across_runs",
    "sharding": "sharding_across_runs",
    "sharding_torch": "sharding_across_runs",
    "inputs_user_warmup": "state_inputs_across_runs",
    "inputs_module_warmup": "state_inputs_across_runs",
    "inputs_optimizer_warmup": "state_inputs_across_runs",
    "inputs_first_step_warmup": "state_inputs_across_runs",
    "inputs_library_warmup": "state_inputs_across_runs",
    "inputs_library_state_dumped": "state_inputs_across_runs",
    "inputs_state_dumped": "state_inputs_across_runs",
    "inputs_library_state": "state_inputs_across_runs",
    "inputs_library_state_kept": "state_inputs_across_runs",
}
"""Rows of the graph diff's fix table (:data:`hlodiff.diff.fix_rules.RULES`) written for two steps of one run ("a
Python `if` per step", "sharded differently between steps") -> the row of :data:`GRAPH_FIXES` that says the same
difference between two runs, where what differs is the run's setting rather than its step."""


def setting_fix(setting) -> str:
    """``setting_across_runs`` for a :class:`hlodiff.dumps.run_setting_source.RunSetting`: the environment variable
    or command-line option the ``if`` tests, named as the user sets it."""
    from hlodiff.dumps.run_setting_source import ENVIRONMENT

    if setting.origin == ENVIRONMENT:
        where = f"the environment variable {setting.variable}" if setting.variable else "the environment"
        what = setting.variable or "the environment"
    else:
        where = f"the command-line option {setting.variable}" if setting.variable else "the command line (sys.argv)"
        what = setting.variable or "the command line"
    made = f"line {setting.line}" if setting.line != setting.if_line else "in the test itself"
    return GRAPH_FIXES["setting_across_runs"].format(if_line=f"line {setting.if_line}", name=setting.name,
                                                     origin=where, made=made, what=what)
