"""Cache economics: what chronological system state costs against the alternatives.

The design record's acceptance test: "compare cold and subsequent uncached tokens and
cumulative input cost across both short and longer synthetic conversations; no universal
savings or hit-rate guarantee is made." This benchmark runs two synthetic conversations
(short: 6 requests; long: about 80 requests with one manual compaction) through the real
session runtime (journal, prompt sections, tool gate, projections, HTTP dispatch) against
the loopback emulator, on six route classes, and then re-projects the very same journaled
transcripts with the alternative strategies and sends those bodies to a cold emulator cache
of their own:

* ``chronological`` — this design: what the runtime sent (system updates in place where the
  route is verified for them; Pi's folding where it is not).
* ``folded`` — Pi's fallback: the same transcript projected with the model's transport flags
  removed, so every system update folds into the leading system prompt and the current tool
  list is sent at request level.
* ``snapshot`` — the rejected alternative: the current effective system state (prompt
  sections *and* tool list) rebuilt as the one leading system message, later system messages
  dropped, projected with the route's own flags. The report says per route whether its bytes
  differ from ``folded``.

The two declaration policies on the verified deepseek-flash binding (fixed complete catalog
vs on-demand schemas, the ``tools.declarations`` setting) are two route classes run on the
same conversations.

Token figures are the emulator's (4 characters per token, each provider's documented prefix
rules); costs are ``calculate_cost`` at the published model's catalog prices, input side only
(fresh input, cache reads and cache writes; output is the same across strategies). The
theoretical minimum counts each distinct prompt token once: the same transcripts are projected
append-only (every transport flag of the API on, so updates and tool changes are appended in
place), and every request counts only the tokens past the longest prefix it shares with any
earlier request — what a perfect cache would still have to process.

    pi-desktop bench cache [--out DIR] [--quick]          # installed or from a checkout
    python benchmarks/cache_economics.py [--quick]       # a checkout: writes docs/

Modules: ``scenario`` (the step language and the conversations), ``workspace`` (files, skills
and the extension with deferred tools), ``strategies`` (route classes, strategy projections),
``sending`` (HTTP to the emulator), ``cache_model`` (the prompt as the cache sees it: the one
import of the cache rules), ``accounting`` (figures, summaries, the theoretical minimum),
``runner`` (the real runtime, the measurements) and ``report`` (Markdown; the chart is drawn by
``chart``, offscreen with QtGui).
"""
