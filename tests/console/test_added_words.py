"""The sentences that say what adding traces did (`console.added_words`), for every count that reads
differently: none, one, many, already there, and more unknown ids than a sentence names."""

from __future__ import annotations

from redline.console.added_words import added_sentence, missed_sentence, unknown_sentence


def test_what_was_added_and_what_was_there() -> None:
    assert added_sentence(29, 2, "queue") == "Added 29 traces; 2 were already in the queue."
    assert added_sentence(1, 1, "queue") == "Added 1 trace; 1 was already in the queue."
    assert (
        added_sentence(1_204, 0, "dataset", "Regressions")
        == "Added 1,204 traces to the dataset “Regressions”."
    )
    assert added_sentence(0, 1, "queue") == "Nothing was added: the trace was already in the queue."
    assert (
        added_sentence(0, 3, "dataset", "R")
        == "Nothing was added to the dataset “R”: all 3 traces were already in the dataset."
    )
    assert added_sentence(0, 0, "queue") == "Nothing was added."


def test_unknown_ids_are_named_as_typed_up_to_ten() -> None:
    refs = [f"ticket-{n}" for n in range(13)]
    assert unknown_sentence(refs) == (
        "Not added: no trace of this queue's project has any of the ids "
        + ", ".join(f"“ticket-{n}”" for n in range(10))
        + " and 3 more. Check them against the traces list"
        + " (a trace's id, or the external id its tracer gave)."
    )
    assert unknown_sentence(["a", "b", "c"]).startswith(
        "Not added: no trace of this queue's project has any of the ids “a”, “b” or “c”."
    )


def test_selected_traces_a_queue_or_dataset_could_not_take() -> None:
    assert (
        missed_sentence(1, "queue")
        == "1 trace of the selection was not added: it is not in the queue's project, or gone."
    )
    assert missed_sentence(4, "dataset") == (
        "4 traces of the selection were not added: they are gone, or in a project you can't read."
    )
