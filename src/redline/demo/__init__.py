"""`redline demo`: a project seeded so that every console page shows something real on first start.

The parts, in the order they are made, each in a transaction of its own (DESIGN §4; the reward model in
three: the ratings with the model, its training job, the scores; the experiments in one each), each
through the domain services as a person or the operator would make it:

1. `runs`: the support agent's runs (`traces.demo`), spread over the two weeks before today;
2. `people`: the people who correct and review, in two corrector groups (“support lead” ×3, “reviewer”
   ×1);
3. `expert`: a queue rule filling the expert queue, and the people's corrections of its runs, enough for
   its trend to show each agent version with a range and compare them;
4. `review`: review keys of each type and an annotation queue, most of its items reviewed;
5. `dataset`: a dataset of the runs that refunded what they shouldn't have;
6. `reward_model`: ratings and comments on runs and steps, a reward model trained on them in-process,
   the runs scored by it, and the model made the project's active one;
7. `experiments`: two finished experiments of the dataset, the support agent at v1 and at v2, each result
   with its run inline (tool calls, a model span with its usage and cost) and two evaluators' results
   (`follows_refund_policy`, `tone`); v2 does better on most datapoints but not all, and v1 errs once.
   The reviewers review most of v1's results with the review keys of part 4, and the leads record a few
   preferences between the two.

Everything is deterministic: the runs come from one seeded generator, and each part draws from its own
seeded `random.Random`, so the same store gets the same data. Running it again makes nothing twice: runs
already there are left as they are, and a part whose named thing (the rule, the queue, the dataset, the
model, each experiment) exists is skipped whole, which is safe because that thing and what it holds are
made in one transaction. People and reward models belong to the workspace, so a second project reuses them.
"""

from __future__ import annotations

from redline.demo.runs import DEFAULT_COUNT
from redline.demo.seed import PARTS, DemoSummary, Report, seed

__all__ = ["DEFAULT_COUNT", "PARTS", "DemoSummary", "Report", "seed"]
