"""The forbidden terminal pattern (Explicit Terminal Stop contract): optional follow-up softeners.

A handoff states the outcome and the exact next owner; it never ends with "If you want, I can ..."
or "Would you like me to continue?". Sentences made of such offers are removed from any prose that
reaches a handoff; ordinary sentences that merely contain "if you" or "would" are kept.
"""

from __future__ import annotations

import re

_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u201c": '"', "\u201d": '"'})

# Each pattern matches an offer or permission request addressed to the reader, anchored at the
# start of a sentence (after optional filler such as "Also," or "Just").
_LEAD = r"^(?:(?:also|and|just|so|finally|alternatively|otherwise|or)[,]?\s+)*"
_PATTERNS = [
    # If you want / If you'd like / If you would like / If you prefer / If it helps ..., I can ...
    r"if (?:you(?:'d| would)? (?:want|wish|like|prefer)|it(?:'s| is| would be)? helpful|"
    r"that helps|needed|desired|useful)\b.*\b(?:i|we) (?:can|could|will|would|'ll)\b",
    # If you'd like me to ... / If you want me to ...
    r"if you(?:'d| would)? (?:want|wish|like|prefer) (?:me|us) to\b",
    # Would you like me to ...? / Would you like to ...? / Do you want me to ...?
    r"(?:would|do|should) you (?:like|want|prefer)(?: me| us)? to\b",
    # Shall I / Should I / Want me to continue?
    r"(?:shall|should) (?:i|we) (?:continue|proceed|go ahead|keep going|do that|also)\b",
    r"(?:want|need) me to\b",
    # Let me know if / whether ...
    r"let (?:me|us) know (?:if|whether|when|how)\b",
    # Feel free to ask ... / I'm happy to ... if ...
    r"feel free to (?:ask|reach out|let me know|tell me)\b",
    r"(?:i'm|i am|i'd be|i would be) (?:happy|glad) to\b.*\bif\b",
    r"i can also\b.*\bif you\b",
]
_SOFTENER = re.compile(_LEAD + "(?:" + "|".join(_PATTERNS) + ")", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?]+|\n|$)")


def _is_softener(sentence: str) -> bool:
    text = sentence.translate(_QUOTES).strip().lstrip("-*>•# ").strip()
    return bool(text) and _SOFTENER.search(text) is not None


def find_softener(text: str) -> str | None:
    """The first softener sentence in `text`, or None."""
    for match in _SENTENCE.finditer(text):
        if _is_softener(match.group(0)):
            return match.group(0).strip()
    return None


def strip_softeners(text: str) -> str:
    """`text` without its softener sentences; everything else is kept exactly."""
    kept = [m.group(0) for m in _SENTENCE.finditer(text) if not _is_softener(m.group(0))]
    result = "".join(kept)
    # Removing a sentence can leave a dangling space before the next line.
    return re.sub(r"[ \t]+\n", "\n", result).strip() if result != text else text
