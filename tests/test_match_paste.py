"""Cleaning a paste: each kind of noise on its own, on a small example."""

import time

from errkb.paste import MAX_PASTE_CHARS, clean_lines, clip, parse, spellings

KNOWN = {"cpu", "device", "devices", "same", "tensors", "two", "at", "least"}


def known(word: str) -> bool:
    return word in KNOWN


def only(text: str):
    found = parse(text, known)
    assert len(found.raised) == 1, found.raised
    return found.raised[0]


def test_traceback_exception_line():
    item = only('Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n    f()\nValueError: bad value\n')
    assert (item.cls, item.message, item.kind) == ("ValueError", "bad value", "error")


def test_dotted_class_and_bare_class():
    assert only("torch.cuda.OutOfMemoryError: CUDA out of memory.").cls == "torch.cuda.OutOfMemoryError"
    assert only("Traceback (most recent call last):\nKeyboardInterrupt\n").cls == "KeyboardInterrupt"


def test_log_prefixes_and_timestamps_are_removed():
    for prefix in [
        "2026-05-20 10:14:06,002 ERROR ",
        "[2026-05-20 10:14:06] ",
        "ERROR:__main__:",
        "E1129 09:12:51.337000 140230 torch/distributed/api.py:869] ",
        "2026-03-02 18:40:11.915 | ERROR    | trainer.launch:main:140 - ",
        "[INFO|trainer.py:2134] 2026-06-03 11:20:04,551 >> ",
        "11/29/2026 15:00:00 - ",
    ]:
        item = only(prefix + "ValueError: bad value")
        assert (item.cls, item.message) == ("ValueError", "bad value"), prefix


def test_a_new_log_record_ends_the_message():
    item = only("2026-01-01 10:00:00 ERROR ValueError: bad value\n2026-01-01 10:00:01 INFO saving checkpoint\n")
    assert item.message == "bad value"


def test_rank_prefixes_are_removed_and_ranks_kept_apart():
    text = "[rank1]: ValueError: one\n[rank0]: ValueError: zero\n[rank1]: more of one\n[rank0]: more of zero\n"
    found = parse(text, known)
    assert sorted(item.message for item in found.raised) == ["one more of one", "zero more of zero"]


def test_identical_errors_of_several_ranks_are_reported_once():
    text = "0: ValueError: same\n1: ValueError: same\n"
    assert len(parse(text).raised) == 1


def test_colour_codes_are_removed_even_without_their_escape_byte():
    assert only("\x1b[1;35mAttributeError\x1b[0m: \x1b[35mno attribute\x1b[0m").message == "no attribute"
    assert only("[1;31mRuntimeError[0m: boom[0m").message == "boom"


def test_wrapped_message_is_rejoined_mid_word_and_at_spaces():
    item = only("RuntimeError: Expected all tensors to be on the same device, but found at least tw\n"
                "o devices, cuda:0 and cp\nu!\n")
    assert "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!" in item.spellings


def test_a_space_lost_at_a_wrap_is_put_back_between_known_words():
    assert spellings(["on the same", "device"], known)[0] == "on the same device"
    assert spellings(["found at least two dev", "ices"], lambda w: w in {"devices", "two"})[0].endswith("two devices")


def test_multi_line_message_keeps_its_lines_and_tabs():
    text = ('RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "a". \n'
            '\tUnexpected key(s) in state_dict: "module.a". \n')
    item = only(text)
    assert 'Net:\n\tMissing key(s) in state_dict: "a".\n\tUnexpected' in "\n".join(item.spellings)


def test_tabs_turned_into_spaces_are_restored_in_one_spelling():
    item = only("RuntimeError: Error(s) in loading state_dict for Net:\n    Missing key(s) in state_dict: \"a\".\n")
    assert any("Net:\n\tMissing" in text for text in item.spellings)


def test_chained_exceptions_are_all_found_in_order():
    text = ("Traceback (most recent call last):\nKeyError: 'a'\n\nDuring handling of the above exception, "
            "another exception occurred:\n\nTraceback (most recent call last):\nValueError: b\n")
    assert [(i.cls, i.message) for i in parse(text).raised] == [("KeyError", "'a'"), ("ValueError", "b")]


def test_dataparallel_replica_original_traceback():
    text = ("RuntimeError: Caught RuntimeError in replica 0 on device 0.\nOriginal Traceback (most recent call last):\n"
            '  File "x.py", line 1, in _worker\nRuntimeError: the real message\n')
    assert [i.message for i in parse(text).raised] == ["Caught RuntimeError in replica 0 on device 0.", "the real message"]


def test_warning_line_and_its_source_line():
    item = only("/x/torch/nn/parallel/_functions.py:68: UserWarning: Was asked to gather.\n  warnings.warn('Was asked')\n")
    assert (item.cls, item.message, item.kind) == ("UserWarning", "Was asked to gather.", "warning")


def test_bare_message_without_class_is_a_candidate():
    found = parse("请帮忙看看这个报错\n\nmodule must have its parameters on device cuda:0\n\n谢谢！\n")
    assert [(i.cls, i.message, i.kind) for i in found.raised] == [(None, "module must have its parameters on device cuda:0", "bare")]


def test_text_in_other_languages_ends_a_message():
    item = only("ValueError: mask of the first timestep must all be on\n어디를 고쳐야 할까요?\n")
    assert item.message == "mask of the first timestep must all be on"


def test_markdown_fences_and_quotes_are_ignored():
    item = only("> ```\n> ValueError: quoted\n> ```\n")
    assert item.message == "quoted"


def test_carriage_returns_of_progress_bars():
    item = only("  0%|   | 0/9\r100%|###| 9/9\rValueError: after the bar\n")
    assert item.message == "after the bar"


def test_clean_lines_keeps_message_indentation():
    streams = clean_lines("[rank0]:\tMissing key(s)\n")
    assert streams["rank0"][0].text == "\tMissing key(s)"


TRAINING = "".join(f"2026-06-01 10:00:00,123 INFO step {i} loss 0.{i % 9973:04d} lr 1.0e-04\n" for i in range(150_000))


def test_a_short_paste_is_not_clipped():
    clipped = clip("ValueError: bad value\n")
    assert (clipped.text, clipped.cut, clipped.note()) == ("ValueError: bad value\n", False, None)


def test_a_long_paste_keeps_both_ends_and_exception_lines_between():
    text = ("Traceback (most recent call last):\nValueError: at the top\n" + TRAINING
            + "[rank1]: 2026-06-01 10:00:01 ERROR RuntimeError: in the middle\n[rank1]: its second line\n\n"
            + TRAINING + "KeyError: 'at the end'\n")
    assert len(text) > 5 * MAX_PASTE_CHARS
    start = time.perf_counter()
    clipped = clip(text)
    assert time.perf_counter() - start < 60  # a hang guard (quadratic work here would take hours), not a speed check
    assert len(clipped.text) <= MAX_PASTE_CHARS and clipped.cut and clipped.excerpts == 1
    assert clip(clipped.text).text == clipped.text  # clipping again changes nothing
    assert "[rank1]: 2026-06-01 10:00:01 ERROR RuntimeError: in the middle\n[rank1]: its second line\n" in clipped.text
    assert f"the input has {len(text):,} characters; only the first" in clipped.note()
    assert "1 excerpt around exception lines in between" in clipped.note()
    found = [(item.cls, item.message) for item in parse(text).raised]
    assert found == [("ValueError", "at the top"), ("KeyError", "'at the end'"),
                     ("RuntimeError", "in the middle its second line")]


def test_repeated_exception_lines_between_the_ends_are_kept_once():
    line = "WARNING x.py:1: UserWarning: the same warning every step\n"
    text = "ValueError: first\n" + TRAINING + line * 20_000 + "OSError: once, later\n" + TRAINING
    clipped = clip(text)
    assert clipped.text.count(line) == 1 and "OSError: once, later" in clipped.text
    assert clipped.excerpts == 2 and not clipped.incomplete


def test_the_scan_between_the_ends_is_bounded_and_says_so(monkeypatch):
    import errkb.paste

    monkeypatch.setattr(errkb.paste, "EXCERPT_SCAN", 10)
    text = TRAINING + "".join(f"UserWarning: step {i}\n" for i in range(50)) + TRAINING
    clipped = clip(text)
    assert clipped.incomplete and clipped.excerpts == 10
    assert "(further exception lines in between were not read)" in clipped.note()


def test_excerpts_between_the_ends_stay_within_the_limit():
    text = TRAINING + "".join(f"UserWarning: step {i}\n" for i in range(100_000)) + TRAINING
    start = time.perf_counter()
    clipped = clip(text)
    assert time.perf_counter() - start < 60  # a hang guard (quadratic work here would take hours), not a speed check
    assert len(clipped.text) <= MAX_PASTE_CHARS and clipped.incomplete
    assert clipped.text.count("UserWarning: step") == clipped.excerpts > 1000
