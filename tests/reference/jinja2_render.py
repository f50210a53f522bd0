#!/usr/bin/python3
# Chat templates rendered by Python's Jinja2 set up as transformers sets it up for
# apply_chat_template (what vLLM and transformers render prompts with, so what a model was tuned
# on): an ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, loop controls,
# {% generation %} blocks rendered as their body, tojson as json.dumps (ensure_ascii False),
# raise_exception and strftime_now. Reads the same JSON as jinja_render.mjs
#   {"cases": [{"template": "...", "messages": [...], "bos_token": "...", "eos_token": "..."}]}
# and prints {"rendered": [{"text": "..."} or {"error": "..."}, ...]}, each case rendered with
# add_generation_prompt true, tools and documents None. Debian's python3-jinja2.
import json
import sys
from datetime import datetime

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment


class Generation(Extension):
    """{% generation %}...{% endgeneration %}: the body, as transformers' AssistantTracker
    renders it when no assistant mask is asked for."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render", []), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def strftime_now(fmt):
    return datetime.now().strftime(fmt)


def render(case):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    template = env.from_string(case["template"])
    return template.render(messages=case["messages"], tools=None, documents=None,
                           add_generation_prompt=True, bos_token=case.get("bos_token", ""),
                           eos_token=case.get("eos_token", ""))


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        request = json.load(f)
    out = []
    for case in request["cases"]:
        try:
            out.append({"text": render(case)})
        except Exception as e:  # the template's own error or one Jinja2 raises
            out.append({"error": type(e).__name__ + ": " + str(e)})
    json.dump({"rendered": out}, sys.stdout, ensure_ascii=True)


if __name__ == "__main__":
    main()
