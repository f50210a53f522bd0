#!/usr/bin/python3
# Random small chat templates for the differential test of evald's template engine against
# @huggingface/jinja and Python's Jinja2 (tests/chat_template_test.cc): expressions over the
# chat's messages with the operators, filters, tests, methods and slices chat templates use,
# statements (if/elif/else, for with filters, else, break and continue, set, set and filter
# blocks, namespaces, macros, comments, whitespace control) nested a few deep. Most are wrong in
# some engine; the test asks only that evald never renders what either reference renders
# differently. Deterministic for a seed. Prints
#   {"cases": [{"template": ..., "messages": [...], "bos_token": "<s>", "eos_token": "</s>"}]}
#   usage: jinja_random_templates.py expressions|statements SEED COUNT
import json
import random
import sys

MODE, SEED, COUNT = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
R = random.Random(SEED)


def pick(*options):
    return R.choice(options)


# Expressions of any type, few checks on what fits (the expressions mode).
LITERAL_STRINGS = ["'abc'", "'a,b,c'", "'Hello World'", "'  pad  '", "''", "'x'", '"it\'s"',
                   "'\\n'", "'é'", "'A-b_C'", "'123'", "' a b '", "'<tag>'", "'%s'", "'True'"]
NUMBERS = ["0", "1", "2", "3", "-1", "7", "10", "1.5", "0.1", "2.0", "-2.5", "1e3", "3.0"]
VARIABLES = ["messages", "messages[0]", "messages[0].content", "messages[-1]['role']",
             "messages[1].role", "bos_token", "add_generation_prompt", "nothing_here",
             "messages|length", "messages[0]['content']"]
FILTERS = ["length", "upper", "lower", "trim", "first", "last", "list", "string", "int", "float",
           "abs", "capitalize", "title", "sort", "unique", "reverse", "tojson", "count", "sum",
           "min", "max", "join", "items", "dictsort", "wordcount", "safe", "e", "escape", "round",
           "center", "striptags", "indent", "d", "default", "selectattr", "map", "bool", "batch",
           "slice", "attr", "truncate", "replace", "format", "groupby", "wordwrap"]
FILTER_ARGUMENTS = {
    "join": ["", "(',')", "('-')"], "default": ["('dflt')", "('x', true)"], "d": ["('q')"],
    "selectattr": ["('role', 'equalto', 'user')", "('content')"],
    "map": ["(attribute='role')", "('upper')", "('string')"], "round": ["", "(1)", "(0, 'floor')"],
    "center": ["(9)"], "indent": ["", "(2)", "(2, true)", "(first=true)"],
    "sort": ["", "(reverse=true)", "(attribute='role')"], "tojson": ["", "(indent=2)"],
    "batch": ["(2)"], "slice": ["(2)"], "truncate": ["(5)"], "replace": ["('a', 'b')"],
    "format": ["(1)"], "attr": ["('role')"], "int": ["", "(5)"], "float": ["", "(1.5)"],
    "unique": ["", "(attribute='role')"], "groupby": ["('role')"], "sum": ["", "(start=1)"],
    "wordwrap": ["(5)"]}
TESTS = ["defined", "undefined", "none", "string", "number", "integer", "float", "mapping",
         "sequence", "iterable", "boolean", "true", "false", "odd", "even", "lower", "upper",
         "callable", "divisibleby(2)", "equalto(1)", "eq 1", "in [1, 2]", "sameas none"]
METHODS = ["split()", "split(',')", "split(' ', 1)", "strip()", "strip('a')", "lstrip()",
           "rstrip()", "upper()", "lower()", "title()", "capitalize()", "startswith('a')",
           "endswith('c')", "replace('a', 'X')", "replace('a', 'X', 1)", "find('b')",
           "count('a')", "isdigit()", "format(1)", "zfill(5)", "splitlines()", "items()",
           "keys()", "values()", "get('a')", "get('z', 5)", "append(1)", "pop()", "__class__"]
OPERATORS = ["+", "-", "*", "/", "//", "%", "~", "==", "!=", "<", ">", "<=", ">=", "and", "or",
             "in", "not in", "**"]


def literal(depth):
    c = R.random()
    if c < 0.3:
        return R.choice(LITERAL_STRINGS)
    if c < 0.55:
        return R.choice(NUMBERS)
    if c < 0.65:
        return pick("true", "false", "none", "True", "None")
    if c < 0.8 and depth > 0:
        return "[" + ", ".join(loose(depth - 1) for _ in range(R.randint(0, 3))) + "]"
    if c < 0.9 and depth > 0:
        return "{" + ", ".join("%s: %s" % (pick("'a'", "'b'", "'z'", "1"), loose(depth - 1))
                               for _ in range(R.randint(0, 2))) + "}"
    if depth > 0:
        return "(" + ", ".join(loose(depth - 1) for _ in range(R.randint(1, 2))) + ",)"
    return R.choice(LITERAL_STRINGS)


def loose(depth=3):
    c = R.random()
    if depth <= 0 or c < 0.2:
        return literal(0) if R.random() < 0.6 else R.choice(VARIABLES)
    if c < 0.3:
        return R.choice(VARIABLES)
    if c < 0.45:
        return "(" + loose(depth - 1) + " " + R.choice(OPERATORS) + " " + loose(depth - 1) + ")"
    if c < 0.6:
        f = R.choice(FILTERS)
        return loose(depth - 1) + "|" + f + R.choice(FILTER_ARGUMENTS.get(f, [""]))
    if c < 0.68:
        return "(" + loose(depth - 1) + " is " + pick("", "not ") + R.choice(TESTS) + ")"
    if c < 0.78:
        return "(" + loose(depth - 1) + ")." + R.choice(METHODS)
    if c < 0.85:
        return "(" + loose(depth - 1) + ")" + pick("[0]", "[1]", "[-1]", "[1:]", "[:2]", "[::-1]",
                                                   "[::2]", "['a']", "[1:-1]", "[0:0]")
    if c < 0.9:
        return "(" + loose(depth - 1) + " if " + loose(depth - 1) + " else " + loose(depth - 1) + ")"
    if c < 0.94:
        return pick("not ", "-", "+") + "(" + loose(depth - 1) + ")"
    if c < 0.97:
        return "range(" + pick("3", "0", "1, 4", "5, 0, -2", "-2") + ")"
    return literal(depth)


def loose_statement(depth=2):
    c = R.random()
    if c < 0.5 or depth == 0:
        return "{{ " + loose() + " }}"
    if c < 0.65:
        return "{% if " + loose(2) + " %}T" + loose_statement(depth - 1) + "{% else %}F{% endif %}"
    if c < 0.8:
        return "{% for x in " + loose(2) + " %}[{{ x }}{{ loop.index }}{{ loop.last }}]{% endfor %}"
    if c < 0.9:
        return "{% set v = " + loose(2) + " %}<{{ v }}>"
    return "{%- if " + loose(1) + " -%}\n  a {{ " + loose(1) + " }}  \n{%- endif %}\n"


# Typed expressions inside statements (the statements mode): strings, numbers, conditions and
# sequences, so that more of them render.
STRINGS = LITERAL_STRINGS + ["'user'", "'system'", "'<|im_start|>'", "'[INST]'", "' '",
                             "'{\"k\": 1}'", "'ünï'", "'\\t x'", "'x y z'", "'a\\nb\\n'"]


def text(d):
    c = R.random()
    if d <= 0 or c < 0.25:
        return R.choice(STRINGS)
    if c < 0.45:
        return pick("m.content", "m.role", "messages[0].content", "messages[-1].role", "bos_token",
                    "eos_token", "messages[0]['role']", "(m.content or '')")
    if c < 0.6:
        return "(" + text(d - 1) + pick(" ~ ", " + ") + text(d - 1) + ")"
    if c < 0.75:
        return text(d - 1) + "|" + pick(
            "trim", "upper", "lower", "title", "capitalize", "string", "indent(2)",
            "indent(2, true)", "indent(4, first=true, blank=true)", "replace('a', 'b')",
            "replace('\\n', ' ')", "default('d')", "tojson", "safe", "e", "truncate(3)",
            "wordcount", "center(8)", "format('z')", "join('-')", "reverse", "length", "first",
            "last", "list|join(',')", "int", "float")
    if c < 0.9:
        return "(" + text(d - 1) + ")." + pick(
            "strip()", "strip('a')", "lstrip()", "rstrip('\\n')", "upper()", "lower()", "title()",
            "capitalize()", "split(',')[0]", "split()|join('_')", "replace('b', 'B')",
            "startswith('a')|string", "endswith('c')|string", "split('\\n')|length|string",
            "format(1)", "count('a')|string", "find('b')|string", "zfill(4)",
            "splitlines()|join('|')", "rsplit(',', 1)|first")
    return "(" + text(d - 1) + " if " + condition(d - 1) + " else " + text(d - 1) + ")"


def number(d):
    c = R.random()
    if d <= 0 or c < 0.3:
        return pick("0", "1", "2", "3", "-1", "7", "10", "1.5", "0.5", "2.0", "-2.5", "100")
    if c < 0.5:
        return pick("messages|length", "loop.index", "loop.index0", "loop.length", "loop.revindex",
                    "ns.n", "(m.content|length)",
                    "messages|selectattr('role','equalto','user')|list|length")
    if c < 0.75:
        return "(" + number(d - 1) + pick(" + ", " - ", " * ", " // ", " % ", " / ") + number(d - 1) + ")"
    if c < 0.85:
        return number(d - 1) + "|" + pick("abs", "int", "float", "round", "round(1)",
                                          "string|length", "default(0)")
    return "(" + text(d - 1) + "|length)"


def condition(d):
    c = R.random()
    if d <= 0 or c < 0.15:
        return pick("true", "false", "none", "add_generation_prompt", "loop.first", "loop.last",
                    "ns.flag", "x", "m")
    if c < 0.35:
        return "(" + number(d - 1) + pick(" == ", " != ", " < ", " > ", " <= ", " >= ") + number(d - 1) + ")"
    if c < 0.5:
        return "(" + text(d - 1) + pick(" == ", " != ", " in ", " not in ") + text(d - 1) + ")"
    if c < 0.65:
        return "(" + pick("m", "messages[0]", "m.content", "messages", "nothing", "m.tool_calls",
                          "ns", "x", "loop", "range(2)", "messages|map(attribute='role')",
                          "{'a': 1}", "[1, 2]", "[]", "''", "0", "none", "true", "m.items()") + \
            " is " + pick("", "not ") + pick(
                "defined", "undefined", "none", "string", "number", "mapping", "sequence",
                "iterable", "boolean", "true", "false", "integer", "float", "callable", "odd",
                "even", "lower", "upper", "divisibleby(3)", "equalto('user')", "eq 2",
                "in ['a', 'user']", "ne 1", "gt 1", "sameas none", "escaped") + ")"
    if c < 0.75:
        return "(" + condition(d - 1) + pick(" and ", " or ") + condition(d - 1) + ")"
    if c < 0.82:
        return "not " + condition(d - 1)
    if c < 0.9:
        return "(" + sequence(d - 1) + ")"
    return "(" + pick("'role'", "'content'", "'x'", "m.role") + " in " + pick(
        "m", "messages[0]", "{'role': 1}", "['role']", "m.keys()", "m.values()") + ")"


def sequence(d):
    c = R.random()
    if d <= 0 or c < 0.3:
        return pick("messages", "[1, 2, 3]", "['a', 'b']", "[]", "messages[1:]", "messages[:-1]",
                    "messages[::-1]", "range(3)", "range(1, 4)", "'a,b'.split(',')", "m.items()",
                    "{'a': 1, 'b': 2}.items()", "{'x': 1}.keys()", "(1, 2)")
    if c < 0.7:
        return sequence(d - 1) + "|" + pick(
            "selectattr('role', 'equalto', 'user')", "rejectattr('role', 'equalto', 'system')",
            "selectattr('content')", "map(attribute='role')", "map(attribute='content', default='-')",
            "list", "reverse", "sort", "sort(attribute='role')", "unique", "batch(2)", "slice(2)",
            "dictsort", "items", "select('odd')", "reject('none')", "map('upper')", "sum", "min",
            "max", "groupby('role')", "first", "last")
    return "(" + sequence(d - 1) + " + " + sequence(d - 1) + ")"


def statement(d):
    c = R.random()

    def ws():
        return pick("", "-")

    if d <= 0 or c < 0.35:
        shown = pick(text, number, lambda d: "('T' if " + condition(d) + " else 'F')",
                     lambda d: R.choice([text, number, condition, sequence])(d))
        return "{{" + ws() + " " + shown(3) + " " + ws() + "}}"
    if c < 0.5:
        return ("{%" + ws() + " if " + condition(2) + " " + ws() + "%}" + block(d - 1) +
                pick("", "{% elif " + condition(2) + " %}" + block(d - 1)) +
                pick("", "{%" + ws() + " else " + ws() + "%}" + block(d - 1)) +
                "{%" + ws() + " endif " + ws() + "%}")
    if c < 0.7:
        target = pick("m", "x", "item") if R.random() < 0.8 else "k, v"
        return ("{%" + ws() + " for " + target + " in " + sequence(2) +
                pick("", " if " + condition(1)) + " " + ws() + "%}" + pick("\n", "", "  ") +
                block(d - 1, loop=True) + pick("", "{% else %}E") + "{%" + ws() + " endfor " +
                ws() + "%}")
    if c < 0.8:
        return ("{% set " + pick("x", "m", "ns.n", "ns.flag", "ns.s", "y") + " = " +
                R.choice([text, number, condition, sequence])(2) + " %}" +
                pick("", "{{ " + pick("x", "y", "ns.n", "ns.s") + " }}"))
    if c < 0.85:
        return ("{% macro mm(a, b='B', c=none) %}[{{ a }}|{{ b }}{{ c is none }}]{% endmacro %}"
                "{{ mm(" + text(1) + pick("", ", " + text(1), ", c=1", ", b=" + text(1)) + ") }}")
    if c < 0.9:
        return ("{% set blk %}" + block(d - 1) + "{% endset %}<{{ blk" +
                pick("", "|trim", "|length", "|upper") + " }}>")
    if c < 0.95:
        return ("{% filter " + pick("upper", "trim", "lower", "indent(2)") + " %}" + block(d - 1) +
                "{% endfilter %}")
    return "{#" + pick("", "-") + " c " + pick("", "-") + "#}" + pick("\n  ", " ", "")


def block(d, loop=False):
    parts = []
    for _ in range(R.randint(1, 3)):
        if loop and R.random() < 0.15:
            parts.append(pick("{% break %}", "{% continue %}",
                              "{% if loop.index > 1 %}{% break %}{% endif %}",
                              "{% if loop.first %}{% continue %}{% endif %}"))
        elif loop and R.random() < 0.3:
            parts.append("{{ " + pick("loop.index", "loop.index0", "loop.revindex", "loop.length",
                                      "(loop.first|string)", "(loop.last|string)", "loop.previtem",
                                      "loop.nextitem", "loop.cycle('a', 'b')", "loop.depth", "x",
                                      "m", "m.role", "k") + " }}")
        else:
            parts.append(statement(d))
        parts.append(pick("", " ", "\n", "\n  ", "|"))
    return "".join(parts)


CHATS = [
    [{"role": "system", "content": "S y"}, {"role": "user", "content": "U1,a"},
     {"role": "assistant", "content": " A "}, {"role": "user", "content": "U2"}],
    [{"role": "user", "content": "hi"}],
    [{"role": "user", "content": "line1\nline2\n"},
     {"role": "assistant", "content": "<think>\nr\n</think>\n\nok"},
     {"role": "user", "content": "é ü {x} '\" \\ end"}],
    [{"role": "system", "content": ""}, {"role": "user", "content": "  "}],
]

cases = []
for _ in range(COUNT):
    if MODE == "expressions":
        template = "|".join(loose_statement() for _ in range(R.randint(1, 3)))
        chat = CHATS[0]
    else:
        template = ("{% set ns = namespace(n=0, flag=false, s='') %}" +
                    pick("", "{% set m = messages[-1] %}{% set x = 'x' %}",
                         "{% set m = messages[0] %}") + block(3))
        chat = R.choice(CHATS)
    cases.append({"template": template, "messages": chat, "bos_token": "<s>", "eos_token": "</s>"})
json.dump({"cases": cases}, sys.stdout)
