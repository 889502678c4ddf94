"""Texts the engine shows to people, each under a stable id, so an interface can translate them.

A :class:`Message` *is* its English text (a ``str``), so a CLI, a log line or a test reads
it as before; it also carries ``key`` and ``params``, with which the app looks up the same
text in another language (``app/locales/<lang>/engine.toml``, key ``engine.<id>``) and
formats it with the same values. A parameter that is itself a Message is translated too.
English lives only here; ``tests/app/test_engine_messages.py`` keeps the app's English file
equal to it and every language's file complete.
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    # engine.text: free-text input
    "text.empty": "Type a sentence to begin.",
    "text.no_words": "That text has no words in it; type a sentence to begin.",
    "text.too_many_tokens": "That text has {n} tokens; the limit here is {limit}.",
    # engine.models.registry: what a model card accepts
    "limits.empty": "Type something first: the input is empty.",
    "limits.too_long": "That input has {n:,} characters; the limit is {limit:,}.",
    "limits.chars": "at most {chars:,} characters",
    "limits.tokens": "{tokens} {unit}",
    "limits.sentences": "the last {sentences} sentences are read",
    "limits.join": "{first}; {rest}",
    "unit.tokens": "tokens",
    "unit.characters": "characters",
    "unit.words_and_marks": "words and marks",
    "unit.subword_tokens": "subword tokens",
    "unit.token_ids": "tokens",
    # engine.checkpoints: the shipped weights
    "checkpoint.missing": (
        "Checkpoint {name!r} is not in {folder}; train it with `python -m engine.train …` "
        "(see README)."
    ),
    "checkpoint.no_memn2n": (
        "No MemN2N checkpoint found; train them with `python -m engine.train memn2n`."
    ),
    "checkpoint.no_memn2n_task": (
        "No MemN2N checkpoint answers bAbI task {task}; train one with "
        "`python -m engine.train memn2n`."
    ),
    "checkpoint.unreadable": "Checkpoint {name!r} is unreadable: {detail}",
    "checkpoint.no_meta": "Checkpoint {name!r} has no readable {file}: {detail}",
    "card.no_option": "{name} has no option {unknown}; its options: {known}.",
    "card.no_attention_inputs": (
        "{name} does not take attention variants, so it has no layer inputs to give them."
    ),
    "card.no_live_training": "{name} is not trained on a page: its kind has no train-it-now run.",
    "card.unknown_model": "Unknown model {name!r}; known: {known}.",
    "card.not_tokens": (
        "A forced alignment reads the {what} as a list of words (tokens), at least one."
    ),
    "card.forced_too_long": "The {what} has {n} tokens; {name} reads at most {limit}.",
    "card.forced.source": "source",
    "card.forced.target": "target",
    "card.unknown_cell": (
        "No trained cell of the variant grid named {name!r} in {folder} "
        "(a cell is <task>-<variant>-s<seed>; python -m engine.train variants trains them)."
    ),
    "card.variant_cell.title": (
        "Attention variants on long-range tasks · {variant} on {task}, seed {seed}"
    ),
    "card.variant_cell.empty": (
        "Type the number of a held-out probe example, 0 to {last} "
        "(0 is the one the cell's training timeline shows)."
    ),
    # engine.models.cards: titles, what to type, and when an answer is not one
    "card.nmt.title": "RNNsearch · {scoring} · {direction}",
    "card.nmt.empty": "Type a sentence (or a date) to translate.",
    "card.scoring.additive": "additive scoring (Bahdanau)",
    "card.scoring.dot": "dot scoring (Luong)",
    "card.scoring.general": "general scoring (Luong)",
    "card.scoring.concat": "concat scoring (Luong)",
    "card.scoring.none": "no attention (RNNencdec baseline)",
    "card.direction.dates": "dates → ISO 8601",
    "card.direction.en_fr": "English → French",
    "card.transformer.title": "Transformer · {pe} · {size} · {direction}",
    "card.transformer.size": "{layers} layers × {heads} heads",
    "card.pe.sinusoidal": "sinusoidal PE",
    "card.pe.learned": "learned PE",
    "card.pe.none": "no positional encoding",
    "card.pretrained.title": "{display} (pretrained, offline)",
    "card.memn2n.title": "MemN2N · {which} · {hops} hops, d = {d}",
    "card.memn2n.joint": "joint model, {n} tasks",
    "card.memn2n.task": "task {task}: {name}",
    "card.memn2n.empty": (
        "Write a story first: a few sentences such as 'Mary went to the kitchen.' "
        "and a question such as 'Where is Mary?'"
    ),
    "card.memn2n.not_a_story": "A memory network reads a story: text, or a bAbI sample.",
    "card.induction.title": (
        "Induction toy · {layers}-layer attention-only Transformer, {heads} heads"
    ),
    "card.induction.empty": (
        "Type tokens separated by spaces: ids from 1 to {top} (12 7 33 12 7), or any "
        "symbols (a b c a b c)."
    ),
    "warn.unknown_words": (
        "{n} of {total} words are not in this model's vocabulary ({words}). "
        "It only knows the words of the grammar it was trained on, so the output below "
        "is not a translation of your sentence. Try one of the examples."
    ),
    "warn.not_a_date": (
        "“{output}” is not a calendar date: the model could not "
        "read a date in this input. It reads dates such as “3 May 1979” or “03/05/79”."
    ),
    "warn.low_confidence": (
        "This input is not {what}: the model's confidence ({confidence:.2f} log-probability "
        "per token) is below the lowest 1% it shows on inputs like its training data "
        "({floor:.2f}). Read the output as a guess, not as an answer."
    ),
    "warn.what.date": "a date it can read",
    "warn.what.sentence": "a sentence of its grammar",
    "warn.memn2n_unknown": (
        "The model has never seen {words}: it reads those as nothing, so its answer "
        "is a guess, not a reading of your story. It knows the people, places and "
        "objects of the bAbI worlds; try the example story."
    ),
    # engine.variants.base: parameters and inputs of an attention variant
    "param.one_of": "one of {choices}",
    "param.not_a_choice": "{label} must be {limits}; got {value!r}.",
    "param.not_a_number": "{label} must be a number in {limits}.",
    "param.not_whole": "{label} must be a whole number in {limits}.",
    "param.out_of_range": "{label} must be in {limits}; got {value}.",
    "variant.no_parameter": "{title} has no parameter {unknown}.",
    "variant.not_a_table": "{title}'s parameters must be a table: name → value.",
    "variant.bidirectional": "{title} is bidirectional here; untick causal to run it.",
    "variant.qkv_shape": "q, k, v must share the shape [B, H, N, D]; got {q}, {k}, {v}.",
    "variant.self_only": (
        "{title} runs as self-attention here: queries and keys of one length (got {n} and {m})."
    ),
    "variant.padding_only": "{title} takes no attention mask other than right-padding.",
    # engine.data.babi: pasted bAbI text
    "babi.too_long": "That text is over {limit:,} characters; the limit.",
    "babi.no_number": "Line {n} does not start with a line number: {line!r}.",
    "babi.numbering": (
        "Line {n} is numbered {number}; expected {expected} "
        "(each story numbers its lines 1, 2, 3, …)."
    ),
    "babi.no_lines": "No numbered lines found; bAbI lines look like '1 Mary went home.'.",
    "babi.no_words": "Line {n} has no words.",
    "babi.not_question": (
        "Line {n} looks like a question but is not 'question?<TAB>answer<TAB>supporting ids'."
    ),
    "babi.support_not_numbers": "Line {n}: supporting ids must be line numbers, got {ids!r}.",
    "babi.support_later": "Line {n}: supporting ids must point to earlier lines of its story.",
    # engine.models.in_pretrained: Q/K/V of MiniLM
    "qkv.layer_range": "Layer must be 0–{last}; got {layer}.",
    "qkv.head_range": "Head must be 0–{last}; got {head}.",
    "swap.not_an_approximation": "a different model, not an approximation",
    # engine.variants.inputs: an uploaded NPZ
    "npz.limits": (
        "an .npz with float arrays q, k, v of one shape [H, N, D] or [B, H, N, D]; "
        "N ≤ {n}, D ≤ {d}, B·H ≤ {slices}, file ≤ {mb} MB"
    ),
    "npz.too_big": "That file is {size:.1f} MB; the limit is: {limits}.",
    "npz.unreadable": "That is not a readable .npz file ({reason}). Expected {limits}.",
    "npz.single_array": "That is a single .npy array, not an .npz. Expected {limits}.",
    "npz.missing": "The file has arrays {found}; missing {missing}. Expected {limits}.",
    "npz.object_arrays": "q, k, v must be plain float arrays ({reason}).",
    "npz.dtype": "{array} has dtype {dtype}; q, k, v must be float16/32/64.",
    "npz.rank": "{array} has shape {shape}; expected [H, N, D] or [B, H, N, D].",
    "npz.shapes_differ": "q, k, v must share one shape; got {shapes}.",
    "npz.outside_limits": "Shape {shape} is outside the limits: {limits}.",
    "npz.not_finite": "{array} contains NaN or infinite values.",
    # engine.text and the models: typed text
    "nmt.no_tokens": "That text has nothing to translate; type a sentence.",
    "nmt.too_many_tokens": "That input has {n} {unit}; the limit here is {limit}.",
    "transformer.too_many_tokens": "That input has {n} tokens; this model reads at most {limit}.",
    # engine.models.memn2n and engine.data.babi: a story and its question
    "memn2n.no_facts": "The story has no sentences; a memory network needs facts to read.",
    "memn2n.unknown_question": (
        "None of the question's words are in the vocabulary ({words}); try 'Where is Mary?'."
    ),
    "babi.unknown_task": "Task {task} is not generated here; choose one of {tasks}.",
    "babi.unknown_size": "Training size {size!r} is not one of {sizes}.",
    "babi.unknown_split": "Split {split!r} is not one of {splits}.",
    "babi.story_too_long": "The story is {n:,} characters; the limit is {limit:,}.",
    "babi.no_story": "Write a story first: a few sentences such as 'Mary went to the kitchen.'",
    "babi.no_question_line": "The story has no question line; add one or type a question.",
    "babi.long_sentence": ("Sentence {n} has over {limit} words; split it into shorter sentences."),
    "babi.no_question": "Type a question, such as 'Where is Mary?'.",
    "babi.story_not_english": (
        "A story here is read as bAbI's English: words of letters a–z and digits, and no "
        "sentence has one. Write a story such as 'Mary went to the kitchen.'"
    ),
    "babi.question_not_english": (
        "The question has no English word (letters a–z and digits), which is how a bAbI "
        "question is read. Ask such as 'Where is Mary?'."
    ),
    "babi.long_question": "The question has over {limit} words.",
    # engine.models.pretrained: a local HuggingFace model
    "pretrained.no_path": "Type the path of a local model directory.",
    "pretrained.outside_allowlist": (
        "{path} is outside the model allowlist. An operator can allow directories "
        "with {env}=dir1{sep}dir2 before starting the studio."
    ),
    "pretrained.not_a_directory": "{path} is not a directory.",
    "pretrained.no_model": (
        "{path} holds no HuggingFace model: it needs config.json and *.safetensors "
        "weights, as written by save_pretrained() (pickled *.bin files are not loaded)."
    ),
    "pretrained.unloadable": "{path} could not be loaded as a HuggingFace model: {reason}",
    "pretrained.too_many_tokens": (
        "That text is {n} tokens for {name}; the limit here is {limit} tokens."
    ),
    "pretrained.new_tokens": "New tokens must be 0–{limit}; got {n}.",
    "pretrained.not_swappable": "{name} does not route attention through AttentionInterface.",
    # engine.models.chat and engine.models.cache_policy: the chat model and its KV cache
    "chat.missing": (
        "The chat model is not converted yet ({path} is missing or incomplete); run {command} once."
    ),
    "chat.empty": "Type a prompt to begin, such as “What is the capital of France?”.",
    "chat.too_many_chars": "That prompt has {n:,} characters; the limit is {limit:,}.",
    "chat.control_chars": (
        "The prompt holds {n} control character(s), the first {first}; remove them and try again."
    ),
    "lens.prompt_length": (
        "The lens reads the tokens written after the prompt: the prompt's length must be a "
        "whole number from 1 to {high} (one token fewer than the ids given); got {value!r}."
    ),
    "chat.bad_token": (
        "Token ids must be whole numbers from 0 to {high:,} (the model's vocabulary); "
        "got {value!r}."
    ),
    "chat.only_special": (
        "The prompt is only special tokens (such as <|im_start|>); type some text too."
    ),
    "chat.too_many_tokens": (
        "That prompt is {n} tokens; the limit here is {limit} (the chat template adds about 35)."
    ),
    # engine.analysis.retrieval: a question over a passage store, answered by the chat model
    "retrieval.empty": "Type a question to retrieve passages for, such as “Where is Mary?”.",
    "retrieval.too_long": "That question has {n:,} characters; the limit is {limit:,}.",
    "retrieval.k": "k must be a whole number from 1 to {limit}; got {value!r}.",
    "retrieval.floor": "The similarity floor must be a number from -1 to 1; got {value!r}.",
    "retrieval.none_over_floor": (
        "No passage reaches the similarity floor {floor:.2f} (the closest scores {best:.2f}); "
        "lower the floor or ask another question."
    ),
    "retrieval.empty_store": "The store holds no passages to retrieve from.",
    "retrieval.k_clamped": (
        "The store holds only {n} passages, so all {n} are ranked (k = {k} was asked)."
    ),
    "retrieval.mode": "Unknown prompt mode {mode!r}; known: {known}.",
    "retrieval.no_passages": (
        "There are no passages to put in the prompt; retrieve some first, or ask without context."
    ),
    "retrieval.truncated": (
        "{n} passage(s) did not fit in the model's {limit} tokens and were left out: {ids}."
    ),
    # engine.analysis.induction: the induction toy's shipped training timeline
    "induction.no_timeline": (
        "The {layers}-layer induction timeline is not shipped; train it with "
        "`python -m engine.train induction --layers {layers}`."
    ),
    "induction.bad_timeline": (
        "The {layers}-layer induction timeline cannot be read ({reason}); train it again with "
        "`python -m engine.train induction --layers {layers}`."
    ),
    "induction.not_ids": (
        "Whole numbers are the toy's token ids, from 1 to {top}. Type ids in that range, or "
        "symbols (a b c a b c), which the toy reads as ids."
    ),
    # engine.timeline: a training run's saved snapshots, beside its checkpoint
    "timeline.missing": (
        "No training timeline is shipped for {name}; `{command}` trains the model again and "
        "saves one."
    ),
    "timeline.bad": (
        "The training timeline of {name} cannot be read ({reason}); `{command}` saves it again."
    ),
    "cache.unknown_policy": "Unknown cache policy {name!r}; known: {known}.",
    "cache.bad_options": "A cache policy is given by its options by name: {known}.",
    "cache.window": (
        "The window must be a whole number of tokens from {low} to {high}; got {value!r}."
    ),
    "cache.sinks": "Sink tokens must be a whole number from {low} to {high}; got {value!r}.",
    "cache.size": (
        "A cache size must be a whole number of tokens from {low} to {high}; got {value!r}."
    ),
    "cache.step": (
        "chunk and h2o_interval must be whole numbers from 1 to {high}; got {chunk!r}, "
        "{interval!r}."
    ),
    "sinks.first": (
        "The first tokens counted as sinks must be a whole number from 1 to {high}; got {value!r}."
    ),
    "cache.budget": (
        "The heavy-hitter budget must be a whole number of tokens from {low} to {high}; got "
        "{value!r}."
    ),
    "cache.larger_than_prompt": (
        "A cache of {size} tokens is larger than the prompt ({n} tokens), so it would evict "
        "nothing at first; choose at most {n}."
    ),
    # engine.analysis.presses, engine.data.ruler: presses judged on tasks that can fail
    "press.unknown": "Unknown press {name!r}; known: {known}.",
    "press.ratio": (
        "A compression ratio is a number from 0 up to, but not including, 1; got {value!r}."
    ),
    "press.budget": (
        "A cache of {budget!r} tokens does not fit a prompt of {n} tokens; choose 1 to {n}."
    ),
    "press.empty_question": (
        "Type a question: a question-aware press keeps what the question reads."
    ),
    "press.too_short": "This context has {n} tokens; the press needs at least {need}.",
    "press.no_retrieval_scores": (
        "The retrieval-head press needs the measured retrieval-head scores: run "
        "`python -m engine.evaluate retrieval_heads` first."
    ),
    "ruler.unknown_task": "Unknown task {name!r}; known: {known}.",
    "ruler.length": "A haystack is {low:,} to {high:,} tokens long; got {value!r}.",
    "ruler.too_long": (
        "A prompt of {n:,} tokens is over the chat model's window here: at most {limit:,} "
        "tokens, haystack and question together."
    ),
    # engine.models.in_pretrained: variants inside the chat model
    "llm_variant.not_causal": (
        "{title} is bidirectional: every query reads every key, so inside a decoder it would "
        "read the tokens it must predict."
    ),
    "llm_variant.needs_training": "{title} needs training: {why}",
    "llm_variant.why_gqa": (
        "the model already shares 3 key/value heads among 9 query heads; fewer groups means "
        "mean-pooling its K/V heads and then uptraining, as the GQA paper does."
    ),
    "llm_variant.why_mla": (
        "its latent down- and up-projections of keys and values are learned; this model has none."
    ),
    "llm_variant.why_differential": (
        "its second query/key pair and λ are learned with the model; halves of this model's "
        "heads are not such a pair."
    ),
    "llm_variant.why_recurrent": (
        "its decays, gates or delta-rule step sizes are learned, and the model's queries and "
        "keys were trained for a softmax, not for this recurrence."
    ),
    "llm_variant.why_based": (
        "its Taylor feature map matches exp(q·k) only near 0, and this model's scores are "
        "far larger; Based models are trained with it from the start."
    ),
    "llm_variant.layers": "Layers must be between 0 and {last}; got {layers}.",
    "llm_variant.text_tokens": "The text is {n} tokens; perplexity here takes {low} to {high}.",
    # engine.models.in_pretrained: variants swapped into a pretrained encoder
    "swap.not_swappable": "{name}: variants swap into encoders that use AttentionInterface.",
    "swap.failed": "{title}: {reason}",
    "qkv.no_layers": "{name} has no BERT-style self-attention layers to read Q/K/V from.",
    # engine.variants: the variants' own parameters and inputs
    "variant.unknown": "Unknown variant {name!r}; known: {known}.",
    "sparse.summary_over_block": "Sparse summary tokens c must be at most the block size l.",
    "linformer.k_over_n": "Linformer k must be at most n = {n}; got k = {k}.",
    "reformer.odd_buckets": "Reformer buckets must be even; got {buckets}.",
    "longformer.globals_over_n": "Longformer global tokens must be at most n = {n}.",
    "variant.over_n": "{label} must be at most n = {n}; got {value}.",
    "variant.over_blocks": (
        "{label} must be at most the number of blocks ⌈n / block⌉ = {blocks}; got {value}."
    ),
    "gqa.groups": "Key/value groups G = {groups} must divide the query heads H = {heads}.",
    "variant.even_head": "{title} works on pairs of channels: head size d must be even; got {d}.",
    "bigbird.globals_over_n": "BigBird global blocks × block size must be at most n = {n}.",
    "int8.head_dim": "INT8 emulation needs head size d ≤ {limit}; got {d}.",
    "int8.scheme": "INT8 scheme must be 'sage' or 'naive'; got {scheme!r}.",
    "kv_cache.heads": "d_model = {d_model} must be divisible by heads = {heads}.",
    "kv_cache.length": "KV-cache length must be between 1 and {limit}; got {n}.",
    "inputs.range": "{name} must be between {lo} and {hi}; got {value}.",
    "inputs.structure": "structure must be one of {structures}; got {structure!r}.",
    "inputs.long_structure": "long-sequence structure must be local or random; got {structure!r}.",
    "compare.too_long": (
        "Side-by-side maps are limited to n ≤ {limit}; got {n}. "
        "Use the cost profile or the long-sequence map for longer inputs."
    ),
    "compare.no_variants": "Pick at least one variant to compare.",
    "compare.needs_training": (
        "Not scored: {title} needs training ({why}) These inputs would fill those parts "
        "with seeded or pooled stand-ins, so its numbers would describe another model; its "
        "trained cells are under Quality."
    ),
    "compare.trivially_exact": (
        "Exact here, trivially: {title}'s budget covers every key of this input, so it is "
        "full attention; a longer input tests it."
    ),
    # An attention map's note (AttentionMap.note): the variant's own sentence
    # ("variants.<name>.map_note", registered by the variant) and these details of the run,
    # composed as one Message so that every part is translated where it is shown.
    "note.sentences": "{first} {rest}",
    "note.computed_by": "computed by {title}.",
    "note.cross_rows": "rows: the token each decoder position produced",
    "note.with_sink": "The map with the learned sink's column last: each row sums to 1.",
    "note.pattern": "1 where the variant lets the query see the key, 0 where it cannot.",
    # the maps of the other models (their notes, in exported traces and captions)
    "note.training_alignment": (
        "α_ij at training step {step}, the reference translation fed in "
        "(forced alignment); rows: target words i, columns: source words j"
    ),
    "note.beam_alignment": (
        "α_ij of the returned beam hypothesis (beam {beam}); rows: target "
        "words i, columns: source words j"
    ),
    "note.memory_hops": "p_i = softmax(u^kᵀ m_i) over the memory slots at each hop",
    "note.generation_step": "step t: the query is the last known token; cache policy {policy}",
    "note.passage_mass": (
        "mass on passage j = Σ α over its tokens; aggregate: mean over layers and heads"
    ),
    "note.scaled": "softmax(QKᵀ/√d_k)",
    "note.unscaled": "softmax(QKᵀ) without the 1/√d_k scaling",
    "note.causal": "softmax(QKᵀ/√d_k) with a causal mask",
    "note.every_head": "every head of the layer",
    "note.first_tokens": "first {m} of {n} tokens.",
    "note.kernel_path": "kernel path: {path}.",
    "note.mamba_causal": "Mamba is causal by construction.",
    "note.gqa_groups": "G = {groups} key/value groups for H = {heads} query heads.",
    "note.differential_lambda": "λ = {value} (λ_init = {init}).",
    "note.differential_normalised": "Output normalised per head after the map: it is not map · V.",
    "note.retnet_gammas": "γ per head: {gammas}.",
    # engine.rollout: how a page read many heads at once (the Transformer page's caption)
    "note.head_mean": "mean over heads",
    "note.rollout": "rollout (residual {residual}), cumulative over layers",
    "note.word_pieces": "word pieces merged (to: sum, from: mean)",
    "note.sinks_hidden": "sink tokens hidden; rows renormalised over the remaining keys",
    # engine.profile: the cost sweep
    "profile.over_budget": (
        "{title} at n = {n} is predicted to need {need:.2f} GiB, over the {budget:.2f} GiB budget."
    ),
    "profile.params": "The variants' parameters must be a table: variant name → its parameters.",
    "profile.no_variants": "Pick at least one variant to profile.",
    "profile.no_lengths": "Pick at least one sequence length.",
    # engine.projection: vectors projected to 2-D
    "projection.shape": "Expected a [points, dimensions] array; got shape {shape}.",
    "projection.empty": "There are no points to project.",
    "projection.too_many_points": "{n:,} points is too many to project; the limit is {limit:,}.",
    "projection.too_many_dims": (
        "{n:,} dimensions is too many to project; the limit is {limit:,}."
    ),
    "projection.not_finite": "The vectors hold NaN or infinite values; they cannot be projected.",
    # engine.walkthrough: the step-by-step layer
    "walkthrough.d_model": "d_model must be one of {choices}; got {d_model}",
    "walkthrough.heads": "heads must divide d_model={d_model} and be 1–{limit}; got {heads}",
    "walkthrough.head": "head must be 0–{last}; got {head}",
    # engine.positional: the sinusoidal table's shape
    "positional.d_model_range": "d_model must be between {lo} and {hi}; got {d_model}",
    "positional.d_model_odd": "d_model must be even (sin/cos pairs); got {d_model}",
    "positional.dim_range": "a dimension must be 0 … d_model − 1 = {last}",
    "positional.positions": "positions must be one row of finite numbers within ±{limit:,}",
    "positional.length_range": "length must be between {lo} and {hi} positions; got {n}",
    "positional.offset_range": "the offset k must be a whole number with |k| ≤ {limit:,}; got {k}",
    # engine.gate: files, stories, paths and attention inputs, before anything parses them
    "file.too_big": "That file is {size:.1f} MB; the limit is {limit:.0f} MB.",
    "file.not_utf8": "That file is not UTF-8 text ({reason}).",
    "file.too_deep": "That file nests {depth} levels deep; the limit is {limit}.",
    "file.long_number": "That file holds a number of more than {limit} digits.",
    "file.not_json": "That file is not JSON ({reason}).",
    "file.single_npy": "That is a single .npy array, not an .npz archive.",
    "file.unpacks_too_big": "That archive unpacks to more than {limit:.0f} MB.",
    "file.npz_damaged": "That .npz archive is damaged ({reason}).",
    "file.object_array": (
        "That archive holds object arrays, which need pickle; only number arrays are read."
    ),
    "story.not_text": "A story must be text.",
    "story.long_number": (
        "Line {n} starts with a {digits}-digit number; a line number has at most {limit} digits."
    ),
    "path.too_long": "That path has {n:,} characters; the limit is {limit:,}.",
    "path.control_char": "That path holds a control character ({code}); type it without one.",
    "scores.too_large": (
        "The scores q·k/√d of {name} can reach {bound:.3g}, over the limit of "
        "{limit:.0e}; scale the inputs down."
    ),
    "variant.input_not_finite": (
        "{name} holds NaN or infinite values; attention needs finite q, k and v."
    ),
    "variant.not_finite": (
        "{title} gives NaN or infinite values on this input: its numbers overflow at "
        "these magnitudes. Scale q and k down."
    ),
    # engine.rollout: hiding the [CLS]/[SEP] tokens
    "rollout.nothing_left": (
        "Nothing is left once the [CLS]/[SEP] tokens are hidden; type some words, or "
        "show those tokens."
    ),
    # engine.trace: a trace file read back
    "trace.not_json": "That is not a JSON trace file ({reason}).",
    "trace.not_npz": "That is not an NPZ trace file ({reason}).",
    "trace.not_ours": "That file is not an Attention Studio trace.",
    "trace.version": (
        "Trace format version {version} is not supported; this studio reads version {supported}."
    ),
    "trace.damaged": "The trace file is incomplete or damaged ({reason}).",
    # engine.models.chat: sampling
    "chat.temperature_floor": "Temperature must be 0 (greedy) or at least {floor}; got {value}.",
    # engine.analysis.causal, ablation, patching, logit_lens: does this attention matter?
    "causal.empty": "Type a prompt to measure: it is empty.",
    "causal.too_many_tokens": "That prompt is {n} tokens; a sweep here reads at most {limit}.",
    "causal.lengths_differ": (
        "The clean prompt is {clean} tokens and the corrupted one {corrupted}; patching "
        "swaps activations position by position, so both need the same number of tokens "
        "(swap words for words of one token each)."
    ),
    "causal.head_range": (
        "There is no head {head} in layer {layer}: layers are 0–{last_layer}, heads 0–{last_head}."
    ),
    "causal.no_heads": "Choose at least one head to ablate.",
    "causal.mode": "Ablation is {known}; got {mode!r}.",
    "causal.not_one_token": (
        "{text!r} is {n} tokens here; the answer to score must be exactly one token."
    ),
    "causal.same_answers": (
        "The answer and the wrong answer are the same token ({token!r}); their logit "
        "difference is always 0."
    ),
    "causal.position_range": "Positions must be 0–{last}.",
    # engine.models.cards: the names of the curated examples
    "example.figure_3a": "Figure 3(a)",
    "example.negation": "negation",
    "example.long_sentence": "long sentence",
    "example.where_is_mary": "Where is Mary?",
    "example.babi_story": "task {task}, test story {i}",
    "example.coreference": "coreference",
    "example.agreement": "agreement",
    "example.short": "short",
    "example.question": "a question",
    "example.story": "a story",
    "example.repetition": "repeated words",
    "example.repeated_block": "a block, then the block again",
    "example.training_probe": "the training probe",
    "example.timeline_probe": "the training timeline's example",
}


class Message(str):
    """The English text of message ``key`` formatted with ``params``; also a plain ``str``."""

    key: str
    params: dict

    def __new__(cls, key: str, **params) -> Message:
        # A message names what the visitor typed, whatever it was: an integer past Python's
        # 4,300-digit limit for str(), or a list holding one, must not break the message.
        params = {name: _printable(value) for name, value in params.items()}
        try:
            text = MESSAGES[key].format(**params)
        except ValueError:
            params = {k: v if isinstance(v, str) else _Shown(v) for k, v in params.items()}
            text = MESSAGES[key].format(**params)
        self = super().__new__(cls, text)
        self.key, self.params = key, params
        return self

    def __reduce__(self):
        # Traces holding a warning are copied through Streamlit's caches; keep the id.
        return (_restore, (self.key, self.params))


_STR_DIGITS = 4_300  # sys.get_int_max_str_digits(): str() of a longer int raises


class _Shown:
    """A value shown by its kind and size where Python refuses to print it."""

    def __init__(self, value):
        if isinstance(value, int):
            self.text = f"<a number of about {int(value.bit_length() * 0.30103):,} digits>"
        else:
            self.text = f"<{type(value).__name__}>"

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return self.text

    def __reduce__(self):
        return (_shown_text, (self.text,))


def _shown_text(text: str) -> _Shown:
    shown = _Shown(None)
    shown.text = text
    return shown


def _printable(value):
    if isinstance(value, int) and value.bit_length() > _STR_DIGITS * 3.32:
        return _Shown(value)
    return value


def _restore(key: str, params: dict) -> Message:
    return Message(key, **params)


def joined(parts: list[Message], key: str = "limits.join") -> Message:
    """Parts read as one phrase, ``a; b; c`` (each part stays translatable); with key
    "note.sentences", sentences one after another."""
    if len(parts) == 1:
        return parts[0]
    return Message(key, first=parts[0], rest=joined(parts[1:], key))
