"""Masking personal data and secrets in text that is read back out.

Secrets win over emails, emails over IP addresses, IP addresses over phone numbers, when
their spans overlap: `https://me:pw@example.com` masks the password, not an "email"."""

from __future__ import annotations

import ipaddress
import re

from core.privacy.rules import find_secrets

Span = tuple[int, int]

EMAIL = re.compile(
    r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9][A-Za-z0-9._%+\-]*@[A-Za-z0-9][A-Za-z0-9\-]*"
    r"(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9\-])"
)
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
IPV4 = re.compile(rf"(?<![0-9.]){_OCTET}(?:\.{_OCTET}){{3}}(?![0-9]|\.\d)")
_IPV6_CANDIDATE = re.compile(
    r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{0,4})"
    r"(?:%[0-9A-Za-z]+)?(?![0-9A-Za-z:])"
)
# International numbers start with +; without it only the North American layout
# (555) 123-4567 / 555-123-4567 is specific enough to tell from other numbers.
_PHONE = re.compile(
    r"(?<![\w+])\+\d{1,3}(?:[ .\-]?\(?\d{1,4}\)?){2,5}(?!\w)"
    r"|(?<![\w(])(?:\(\d{3}\)[ .\-]?|\d{3}[ .\-])\d{3}[ .\-]\d{4}(?![\w])"
)


def _ipv6_spans(text: str) -> list[Span]:
    spans = []
    for m in _IPV6_CANDIDATE.finditer(text):
        address = m.group().split("%", 1)[0]
        if not re.search(r"[0-9A-Fa-f]", address):
            continue
        try:
            ipaddress.IPv6Address(address)
        except ValueError:  # times like 12:30:45, Rust paths, emoticons
            continue
        spans.append(m.span())
    return spans


def _phone_spans(text: str) -> list[Span]:
    return [m.span() for m in _PHONE.finditer(text) if 7 <= sum(c.isdigit() for c in m.group()) <= 15]


def _masks(text: str) -> list[tuple[Span, str]]:
    """Each masked span and its replacement, in priority order."""
    masks: list[tuple[Span, str]] = [((s.start, s.end), f"[secret:{s.rule}]") for s in find_secrets(text)]
    masks += [(m.span(), "[email]") for m in EMAIL.finditer(text)]
    masks += [(m.span(), "[ip]") for m in IPV4.finditer(text)]
    masks += [(span, "[ip]") for span in _ipv6_spans(text)]
    masks += [(span, "[phone]") for span in _phone_spans(text)]
    return masks


def redact(text: str) -> str:
    chosen: list[tuple[Span, str]] = []
    for span, replacement in _masks(text):
        if not any(span[0] < end and start < span[1] for (start, end), _ in chosen):
            chosen.append((span, replacement))
    out = []
    position = 0
    for (start, end), replacement in sorted(chosen):
        out.append(text[position:start])
        out.append(replacement)
        position = end
    out.append(text[position:])
    return "".join(out)
