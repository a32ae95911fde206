"""DeepSeek V3.1 on top of ``renderers``' DeepSeek V3 renderer (test-only reference).

``renderers==0.1.12`` has no V3.1 renderer; its ``deepseek_v3`` renders V3's format. V3.1 keeps
V3's special tokens, BOS, bare system prompt (leading system messages joined by a blank line),
``<｜User｜>`` turns, a later system message as a user turn, the end token and the rule that
nothing is written after tool outputs; this subclass inherits all of that, including
``renderers``' tokenization of every text span, and changes only what V3.1 changed:

- an assistant message after a user message opens ``<｜Assistant｜></think>`` (after a tool output:
  nothing), its reasoning never rendered;
- a call is ``<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGUMENTS<｜tool▁call▁end｜>`` (V3:
  ``function<｜tool▁sep｜>NAME\\n```json\\nARGUMENTS\\n`````);
- tool outputs are not wrapped in ``<｜tool▁outputs▁begin｜>…<｜tool▁outputs▁end｜>``;
- the generation prompt (only after a user message) is ``<｜Assistant｜></think>``, or
  ``<｜Assistant｜><think>`` in thinking mode.

Tools are not rendered here (V3.1's template lists none): callers put the tool description into
the system message.
"""

from renderers.configs import DeepSeekV3RendererConfig
from renderers.deepseek_v3 import DeepSeekV3Renderer


class DeepSeekV31Renderer(DeepSeekV3Renderer):
    def __init__(self, tokenizer, thinking=False):
        super().__init__(tokenizer, DeepSeekV3RendererConfig())
        self._thinking = bool(thinking)
        self._think = self._single("<think>")
        self._think_end = self._single("</think>")

    def _single(self, text):
        ids = self._tokenizer.encode(text, add_special_tokens=False)
        assert len(ids) == 1, f"{text!r} is not one token: {ids}"
        return ids[0]

    @staticmethod
    def _after_user(messages, index):
        """Whether messages[index] follows a user turn (a later system message is one)."""
        leading = 0
        while leading < len(messages) and messages[leading]["role"] == "system":
            leading += 1
        prev = index - 1
        return prev >= leading and messages[prev]["role"] in ("user", "system")

    def render_ids(self, messages, *, tools=None, add_generation_prompt=False):
        ids = list(super().render_ids(messages, tools=tools, add_generation_prompt=False))
        if add_generation_prompt and self._after_user(messages, len(messages)):
            ids += [self._assistant_token, self._think if self._thinking else self._think_end]
        return ids

    def _render_assistant(self, msg, msg_idx, messages, *, emit_special, emit_text, **_):
        if self._after_user(messages, msg_idx):
            emit_special(self._assistant_token, msg_idx, is_sampled=False, is_content=False)
            emit_special(self._think_end, msg_idx, is_sampled=False, is_content=False)
        emit_text(self._prepare_assistant_content(msg), msg_idx, is_sampled=True, is_content=True)
        calls = msg.get("tool_calls") or []
        if calls:
            emit_special(self._tool_calls_begin, msg_idx, is_sampled=True, is_content=True)
            for call in calls:
                fn = call.get("function") or call
                emit_special(self._tool_call_begin, msg_idx, is_sampled=True, is_content=True)
                emit_text(fn["name"], msg_idx, is_sampled=True, is_content=True)
                emit_special(self._tool_sep, msg_idx, is_sampled=True, is_content=True)
                emit_text(fn["arguments"], msg_idx, is_sampled=True, is_content=True)
                emit_special(self._tool_call_end, msg_idx, is_sampled=True, is_content=True)
            emit_special(self._tool_calls_end, msg_idx, is_sampled=True, is_content=True)
        emit_special(self._eos, msg_idx, is_sampled=True, is_content=True)

    def _render_tool(self, messages, msg_idx, *, emit_special, emit_text, **_):
        content = messages[msg_idx].get("content") or ""
        emit_special(self._tool_output_begin, msg_idx, is_sampled=False, is_content=False)
        emit_text(str(content), msg_idx, is_sampled=False, is_content=True)
        emit_special(self._tool_output_end, msg_idx, is_sampled=False, is_content=False)
