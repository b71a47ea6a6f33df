"""A fast tokenizer is handed a batch with an entry that is not text: a None or NaN from a data set's missing value,
a number from a CSV column, or a list of three words without is_split_into_words=True. transformers (5.x:
TokenizersBackend._batch_encode_plus in src/transformers/tokenization_utils_tokenizers.py) passes the batch unchanged
to the Rust tokenizers library's Tokenizer.encode_batch, whose input conversion accepts only a str or a
(text, text_pair) pair and raises TypeError "TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence,
InputSequence]]". The message comes from the compiled extension, so the innermost Python frame, and the record's
raise site, is transformers' call to encode_batch. trigger(): a tiny WordLevel tokenizer built in memory with
tokenizers, wrapped in PreTrainedTokenizerFast, called on ["hello world", None]. Demonstrations: (1) missing values
replaced by "" (rows kept) or dropped, and a number that is real text converted with str(), then the batch encodes;
(2) lists of words passed with is_split_into_words=True. The record's exampleFix and validationCode run from its
text; VALID includes pairs of word lists with is_split_into_words=True, which the tokenizer accepts. The excerpt is
src/transformers/tokenization_utils_tokenizers.py at f2dd04952a1fe6a272f95f4de1ed4d7393fc3d81, a stored upstream
copy of a commit that is not a release (up to the encode_batch call it reads as 5.2.0's file with update_post_processor
as the copy has it, no ValueError for a missing bos token and no early return: the copy and that rebuilt text agree at
offsets 15990, 31990 and 40625 (convert_tokens_to_string, after the call), so the call is at line 858; after the call
it differs from 5.2.0 again (a shorter _decode clean-up); its date was not checked); its encode_batch call reads the
same as in 5.0.0, 5.12.1 and 5.25.0. NEEDS says transformers>=5.0:
4.x raises the same TypeError from another file (tokenization_utils_fast.py), not run here. Results: errkb reproduce
tokenizers-text-encode-input-type (the installed 5.25.0) --with transformers==5.0.0 --with transformers==5.12.1.
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "transformers": ">=5.0"}, "cuda_devices": 0, "timeout_s": 150}
SOLUTIONS = {1: "clean_missing_values", 2: "pretokenized_words"}
CODE = {"exampleFix": "example_fix", "validationCode": "guard"}
CODE_NAMES = {"exampleFix": ["tokenizer", "texts"], "validationCode": ["texts", "is_split_into_words"]}
KEEP = ["tokenizer"]
VALID = {"strings": "valid_strings", "single-string": "valid_single_string", "text-pairs": "valid_pairs",
         "split-into-words": "valid_split_words", "empty-strings": "valid_empty_strings",
         "split-into-words-pairs": "valid_split_word_pairs"}
WORDINGS = [
    {"text": "TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]",
     "source": "transformers==5.25.0", "match": "pattern"},
    {"text": "TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]",
     "source": "JINO-ROHIT/rag_with_kg#1", "match": "matcher"},
    {"text": "TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]",
     "source": "marcotcr/lime#721", "match": "matcher"},
    {"text": "text input must be of type `str` (single example), `List[str]` (batch or single pretokenized example) or "
             "`List[List[str]]` (batch of pretokenized examples).", "source": "ostris/ai-toolkit#190", "match": "none",
     "why": "transformers' own check of the batch's first entry, raised before the binding is called; the record says "
            "it does not match it"},
    {"text": "TextInputSequence must be str", "source": "huggingface/transformers#11568", "match": "none",
     "why": "a non-string text_pair (a pair whose second text is None): another wording of the same binding; the record "
            "says it does not match it"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "huggingface/transformers",
              "commit": "f2dd04952a1fe6a272f95f4de1ed4d7393fc3d81",
              "path": "src/transformers/tokenization_utils_tokenizers.py", "line": 858, "offset": 0}

import errkb_record as record


def _tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "[PAD]": 1, "hello": 2, "world": 3}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]")


def trigger():
    tokenizer = _tokenizer()
    texts = ["hello world", None]  # a missing value in the text column
    batch = tokenizer(texts, padding=True)


def clean_missing_values():
    """Solution 1: None / NaN replaced by "" (the rows stay aligned with their labels), or the rows dropped; a number
    that is real text converted with str()."""
    tokenizer = _tokenizer()
    texts = ["hello world", None, float("nan"), "world"]
    labels = [1, 0, 0, 1]
    filled = [t if isinstance(t, str) else "" for t in texts]
    batch = tokenizer(filled, padding=True)
    assert len(batch["input_ids"]) == len(labels)
    assert batch["input_ids"][0] == [2, 3] and batch["input_ids"][3][0] == 3
    kept = [(t, y) for t, y in zip(texts, labels) if isinstance(t, str)]
    batch = tokenizer([t for t, _ in kept], padding=True)
    assert batch["input_ids"] == [[2, 3], [3, 1]] and [y for _, y in kept] == [1, 1]
    numbers = ["hello", 2024]  # a CSV column read as numbers where the value is the text
    try:
        tokenizer(numbers)
    except TypeError as exc:
        assert "TextEncodeInput must be" in str(exc), exc
    else:
        raise AssertionError("an int entry was accepted")
    batch = tokenizer([str(t) for t in numbers])
    assert batch["input_ids"] == [[2], [0]]  # "2024" is text now (unknown to this tiny vocabulary)
    # a missing value in the first place is refused by transformers before the binding (ValueError), and the same
    # cleaning clears it
    first_missing = [None, "hello"]
    try:
        tokenizer(first_missing)
    except ValueError as exc:
        assert "text input must be of type" in str(exc), exc
    else:
        raise AssertionError("a batch starting with None was accepted")
    batch = tokenizer([t if isinstance(t, str) else "" for t in first_missing])
    assert batch["input_ids"] == [[], [2]]


def pretokenized_words():
    """Solution 2: a list of words per example is tokenized with is_split_into_words=True."""
    tokenizer = _tokenizer()
    words = [["hello", "world", "hello"]]
    try:
        tokenizer(words)
    except TypeError as exc:
        assert "TextEncodeInput must be" in str(exc), exc
    else:
        raise AssertionError("three words without is_split_into_words were accepted")
    batch = tokenizer(words, is_split_into_words=True)
    assert batch["input_ids"] == [[2, 3, 2]]
    assert batch.word_ids(0) == [0, 1, 2]


def example_fix():
    tokenizer = _tokenizer()
    names = record.run("exampleFix", {"tokenizer": tokenizer, "texts": ["hello world", None, "world"]},
                       section="after")
    assert names["batch"]["input_ids"] == [[2, 3], [1, 1], [3, 1]]
    assert names["tokenizer"] is tokenizer


def guard():
    assert not record.check("validationCode", {"texts": ["hello world", None], "is_split_into_words": False})
    assert not record.check("validationCode", {"texts": ["hello", float("nan")], "is_split_into_words": False})
    assert not record.check("validationCode", {"texts": [["hello", "world", "hello"]], "is_split_into_words": False})
    assert record.check("validationCode", {"texts": ["hello world", ""], "is_split_into_words": False})
    assert not record.check("validationCode", {"texts": ["hello", 2024], "is_split_into_words": False})
    assert not record.check("validationCode", {"texts": [None, "hello"], "is_split_into_words": False})
    # the same lists of words pass once is_split_into_words=True says what they are
    assert record.check("validationCode", {"texts": [["hello", "world", "hello"]], "is_split_into_words": True})


def _proved(texts, is_split_into_words=False):
    _tokenizer()(texts, is_split_into_words=is_split_into_words, padding=True)  # the tokenizer accepts it
    return {"texts": texts, "is_split_into_words": is_split_into_words}


def valid_strings():
    return _proved(["hello world", "world", "something unknown"])


def valid_single_string():
    return _proved("hello world")


def valid_pairs():
    return [_proved([("hello", "world"), ("world", "hello world")]), _proved([["hello", "world"]])]


def valid_split_words():
    return _proved([["hello", "world", "hello"], ["world"]], is_split_into_words=True)


def valid_empty_strings():
    return _proved(["", "hello"])


def valid_split_word_pairs():
    """Pairs of pre-tokenized texts: (words, words) tuples with is_split_into_words=True."""
    return _proved([(["hello", "world"], ["world"]), (["world"], ["hello", "hello"])], is_split_into_words=True)
