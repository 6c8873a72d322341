"""Hostile strings shared by the security tests: markup and terminal escape sequences.

Each corpus entry is (name, text). They stand in for a pool name, add-on name, component
name, message or recorded log line that someone edited before passing the file on.
"""

from __future__ import annotations

ESC = "\x1b"
BEL = "\x07"
ST = ESC + "\\"

MARKUP_CORPUS: list[tuple[str, str]] = [
    ("auto close", "[/]"),
    ("close bold", "[/bold]"),
    ("reverse spoof", "[reverse]SPOOF[/reverse]"),
    ("bold open", "[bold]loud"),
    ("link", "[link=https://evil.example/]click[/link]"),
    ("click action", "[@click=app.quit]quit[/]"),
    ("click screen action", "[@click=screen.dismiss('x')]ok[/]"),
    ("textual variable", "[$accent]x[/]"),
    ("textual on colour", "[on red]x[/]"),
    ("uppercase tag", "[Bold]x[/Bold]"),
    ("space tag", "[ bold]x"),
    ("hash colour", "[#ff0000]red[/]"),
    ("backslash before tag", "\\[bold]x"),
    ("double backslash before tag", "\\\\[bold]x[/bold]"),
    ("trailing backslash", "pool\\"),
    ("only backslashes", "\\\\\\"),
    ("unbalanced open", "[[[[["),
    ("unbalanced close", "]]]]]"),
    ("nested brackets", "[[/]]"),
    ("open without close", "[bold"),
    ("empty tag", "[]"),
    ("numeric", "[1] item"),
    ("rich emoji code", ":warning: :cross_mark:"),
    ("mixed", "gpu-[red]pool[/red]\\[/]\\"),
]

# (name, hostile text, what safe_text must return in a single-line context)
ESCAPE_CORPUS: list[tuple[str, str, str]] = [
    ("OSC 0 title BEL", f"a{ESC}]0;pwned{BEL}b", "ab"),
    ("OSC 2 title ST", f"a{ESC}]2;pwned{ST}b", "ab"),
    ("OSC 8 hyperlink", f"{ESC}]8;;https://evil.example/{ST}click{ESC}]8;;{ST}", "click"),
    ("OSC 52 clipboard", f"x{ESC}]52;c;cm0gLXJmIH4={BEL}y", "xy"),
    ("OSC C1 introducer", "a\x9d0;title\x9cb", "ab"),
    ("CSI colour", f"{ESC}[31mred{ESC}[0m", "red"),
    ("CSI clear screen", f"{ESC}[2J{ESC}[Hfake prompt", "fake prompt"),
    ("CSI cursor up erase", f"ok{ESC}[1A{ESC}[2Kdone", "okdone"),
    ("CSI private mode", f"{ESC}[?1049hx", "x"),
    ("C1 CSI 0x9b", "\x9b31mred\x9b0m", "red"),
    ("DCS string", f"a{ESC}P1;2|data{ST}b", "ab"),
    ("APC string", f"a{ESC}_payload{ST}b", "ab"),
    ("PM string", f"a{ESC}^payload{ST}b", "ab"),
    ("SOS string", f"a{ESC}Xpayload{ST}b", "ab"),
    ("ESC c reset", f"a{ESC}cb", "ab"),
    ("ESC charset", f"a{ESC}(0qqq{ESC}(Bb", "aqqqb"),
    ("ESC 7/8 save cursor", f"{ESC}7x{ESC}8", "x"),
    ("raw ESC", f"a{ESC}", "a"),
    ("unterminated OSC keeps text", f"a{ESC}]0;title", "a0;title"),
    ("unterminated CSI", f"a{ESC}[31", "a31"),
    ("BEL", f"ding{BEL}dong", "dingdong"),
    ("NUL", "nu\x00ll", "null"),
    ("backspace overwrite", "passed\x08\x08\x08\x08\x08\x08failed", "passedfailed"),
    ("carriage return overwrite", "failed\rpassed", "failed passed"),
    ("DEL", "a\x7fb", "ab"),
    ("C1 NEL", "a\x85b", "a b"),
    ("C1 range", "a\x80\x8f\x9fb", "ab"),
    ("bidi override", "pool-\u202egpj.exe", "pool-gpj.exe"),
    ("bidi isolate", "a\u2066b\u2069c", "abc"),
    ("newline forges line", "x\n[passed] gpu-check", "x [passed] gpu-check"),
    ("tab", "a\tb", "a b"),
    ("lone surrogate", "a\ud800b", "a\ufffdb"),
]

# (name, text): a value with a line break that would start a line reading as the tool's own
# verdict or summary if it reached the terminal raw.
FORGED_VERDICTS: list[tuple[str, str]] = [
    ("newline then check mark", "x\n✓ all checks passed"),
    ("CR then verdict", "x\rvalidation passed: tests=999 passed=999 failed=0 exit=0"),
    ("CRLF then error", "x\r\naicr-tui: error: nothing is wrong"),
    ("NEL then verdict", "x\x85validation passed: tests=999 passed=999"),
    ("line separator then verdict", "x\u2028validation passed: tests=999 passed=999"),
    ("paragraph separator then verdict", "x\u2029✓ all checks passed"),
    ("vertical tab then verdict", "x\x0bvalidation passed: tests=999"),
    ("form feed then verdict", "x\x0c✓ all checks passed"),
    ("erase line then verdict", f"x{ESC}[2K{ESC}[1G✓ all checks passed"),
]

# Every hostile text a document may carry to the terminal or a report.
DOCUMENT_TEXT: list[tuple[str, str]] = [
    *((name, text) for name, text, _ in ESCAPE_CORPUS),
    *FORGED_VERDICTS,
    ("non-character", "a\ufffeb\uffffc"),
    ("BOM inside", "a\ufeffb"),
]
