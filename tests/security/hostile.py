"""Hostile values shared by the security tests: each is something an attacker could put in
a recipe, overlay, registry or ``--data`` layer where a name is expected."""

from __future__ import annotations

# Shell metacharacters and command substitution: would run code if a script used them raw.
SHELL = [
    "a'; touch PWNED; echo '",
    'a"; touch PWNED; echo "',
    "$(touch PWNED)",
    "`touch PWNED`",
    "a;touch PWNED",
    "a&&touch PWNED",
    "a|touch PWNED",
    "a${IFS}b",
    "a>PWNED",
    "a b",
]
# Would be taken as an option by helm/kubectl (Helm's post-renderer runs a program).
OPTIONS = [
    "--post-renderer=./x.sh",
    "--post-renderer",
    "-n",
    "-",
    "--kubeconfig=/tmp/evil",
    "-f/etc/passwd",
]
# Would become a path outside the output directory, or a hidden/special file.
PATHS = [
    "../escaped",
    "../victim",
    "..",
    ".",
    "/etc/profile.d/evil.sh",
    "a/../../b",
    ".hidden",
    "~/x",
]
# Control characters and sizes that used to end as [INTERNAL].
CONTROL = [
    "a\nb",
    "a\rb",
    "a\x00b",
    "a\tb",
    "a\x1b[31mred",
    "a\u202eb",
    "a\u0085b",
    "x" * 300,
    "",
]
# Not DNS-1123 even though harmless-looking (the grammar, not a blacklist, decides).
GRAMMAR = ["A", "a_b", "a-", "-a", "é", "a.b.", "1.2.3.4.5", "a/b"]

ALL = SHELL + OPTIONS + PATHS + CONTROL + GRAMMAR
FAMILIES = {
    "shell": SHELL,
    "options": OPTIONS,
    "paths": PATHS,
    "control": CONTROL,
    "grammar": GRAMMAR,
}
