/**
 * The canonical conversation: OpenAI-chat-shaped messages that every wire protocol converts into
 * and that the chat template renders. Protocol-opaque echoes (signatures, encrypted reasoning,
 * item ids) are not part of it: matching and rendering only look at what the model sees.
 *
 * @module
 */

/** A tool call as the model produced it (or as the client echoes it). */
export interface ToolCall {
  /** Verbatim id (`toolu_…`, `call_…`); never rendered, used to link results. */
  id: string;
  name: string;
  /** The arguments JSON exactly as a string (model's own spacing kept when it is ours). */
  arguments: string;
  /** `custom` for free-form (non-JSON) tools such as Codex's grammar tools. */
  kind?: "function" | "custom";
}

export interface SystemMessage {
  role: "system";
  content: string;
}

/**
 * An image the policy sees, by content: the bytes live in the gateway's image store under
 * `hash`, never in a message (the tree and the journal keep only this).
 */
export interface ImageRef {
  /** sha256 of the image's bytes, lowercase hex. */
  hash: string;
  mime: ImageMime;
  /** Pixels, as the image's header says (no EXIF rotation applied). */
  width: number;
  height: number;
}

export type ImageMime = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/**
 * An image in user or tool content: it stands before the character `at` of the content (the
 * content's text parts are as the protocol joined them; an image part adds no text).
 */
export interface ContentImage {
  at: number;
  image: ImageRef;
}

export interface UserMessage {
  role: "user";
  content: string;
  /** Images in the content, in order (absent: none). */
  images?: ContentImage[];
}

export interface AssistantMessage {
  role: "assistant";
  content: string;
  reasoning_content?: string;
  tool_calls?: ToolCall[];
}

export interface ToolMessage {
  role: "tool";
  content: string;
  tool_call_id: string;
  name?: string;
  /** Images in the tool's output, in order (absent: none). */
  images?: ContentImage[];
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** A tool the client offers, reduced to what a template can render; `raw` keeps the original. */
export interface ToolSpec {
  name: string;
  description?: string;
  /** JSON schema of the arguments (for `custom` tools: a single string `input`). */
  parameters?: unknown;
  kind: "function" | "custom";
  raw?: unknown;
}
