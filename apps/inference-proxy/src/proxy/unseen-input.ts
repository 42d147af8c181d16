import { COLON, OPEN_OBJECT, QUOTE } from "./json-bytes.ts";

type Json = Record<string, unknown>;

/**
 * Input a model call reads that its body does not hold, so a quarter of the body's bytes does not
 * bound it (docs/decisions/0053-input-the-body-does-not-show.md).
 */
export interface UnseenInput {
  /** The members that reference it, as a caller would look for them: `file_id`, `tools[0].type "web_search_20250305"`. */
  members: string[];
  /**
   * Samplings the provider may run within the call, each reading up to the model's context window:
   * 1, or `SERVER_TOOL_SAMPLINGS` when a tool runs at the provider (it loops, re-reading what grew).
   */
  samplings: number;
}

/** What a call whose input the body does not show reserves on top of its estimate, where a limit applies. */
export interface UnseenInputHold {
  microUsd: number;
  /** The members referencing that input, named in a refusal. */
  members: string[];
}

/**
 * The samplings assumed of a call with a server-side tool: Anthropic's server-side loop pauses the
 * turn (`stop_reason: "pause_turn"`) after 10 iterations; the same bound is taken for the other
 * providers' hosted tools (OpenAI's web search, Bedrock's system tools, remote MCP servers).
 */
export const SERVER_TOOL_SAMPLINGS = 10;

/**
 * Typed tools the caller runs itself (their results come back in a later body, and are estimated
 * there): Anthropic's custom, bash, text editor, computer and memory tools; OpenAI's function,
 * custom, computer use, local shell, shell and apply_patch tools. Any other typed tool runs at the
 * provider.
 */
const CLIENT_TOOL =
  /^(?:custom|function|(?:bash|text_editor|computer|memory)_\d+|computer_use_preview|local_shell|shell|apply_patch)$/;

/** Top-level members naming state the provider stored earlier: a response, a conversation, a prompt, a container. */
const STORED = ["previous_response_id", "conversation", "promptVariables", "container"] as const;

/** The top-level members `findUnseenInput` reads (request.ts reads them with the others). */
export const UNSEEN_INPUT_MEMBERS = [
  ...STORED,
  "tools",
  "toolConfig",
  "mcp_servers",
  "web_search_options",
  "prompt",
] as const;

const DATA_URL = Buffer.from('"data:');

/**
 * What of the call's input the body does not show, or undefined when it shows all of it. `json` is
 * the body's top-level members as request.ts read them (`UNSEEN_INPUT_MEMBERS` among them); the
 * members that may sit anywhere in the conversation (a file id, an image or document by URL or in
 * S3) are looked for in the bytes, as names in quotes followed by a colon: inside a JSON string
 * every quote is escaped, so such a match is a member name wherever it is.
 */
export function findUnseenInput(raw: Uint8Array, json: Json): UnseenInput | undefined {
  let b = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  // A name spelled with escapes of plain letters (`"file\u005fid"`) is read by the provider as
  // the name; no serializer writes them, so a body that has one is decoded and written plainly
  // first (slow, and only for such bodies).
  if (escapesPlainLetters(b)) {
    try {
      b = Buffer.from(JSON.stringify(JSON.parse(b.toString("utf8"))));
    } catch {
      // request.ts refuses a body that is not JSON before it gets here.
    }
  }
  const members: string[] = [];
  let samplings = 1;

  // Content the provider fetches or loads: an uploaded file, an image or document by URL or in S3.
  members.push(...referencedContent(b));
  // Documents inline but compressed: a PDF or an Office file unfolds into page images and text.
  members.push(...compressedDocuments(b));

  // State the provider stored earlier.
  for (const name of STORED) if (json[name] !== undefined && json[name] !== null) members.push(name);
  const prompt = json.prompt;
  if (prompt && typeof prompt === "object" && !Array.isArray(prompt)) members.push("prompt.id");

  // Tools that run at the provider, within this call.
  const server: string[] = [];
  if (Array.isArray(json.tools)) {
    for (const [i, tool] of json.tools.entries()) {
      const type = tool && typeof tool === "object" ? (tool as Json).type : undefined;
      if (typeof type === "string" && !CLIENT_TOOL.test(type)) server.push(`tools[${i}].type ${JSON.stringify(type)}`);
    }
  }
  const converseTools = member(json.toolConfig, "tools");
  if (Array.isArray(converseTools)) {
    for (const [i, tool] of converseTools.entries()) {
      if (member(tool, "systemTool") !== undefined) server.push(`toolConfig.tools[${i}].systemTool`);
    }
  }
  if (Array.isArray(json.mcp_servers) && json.mcp_servers.length > 0) server.push("mcp_servers");
  if (json.web_search_options !== undefined && json.web_search_options !== null) server.push("web_search_options");
  if (server.length > 0) {
    members.push(...server);
    samplings = SERVER_TOOL_SAMPLINGS;
  }
  return members.length > 0 ? { members, samplings } : undefined;
}

function member(parent: unknown, name: string): unknown {
  return parent && typeof parent === "object" && !Array.isArray(parent) ? (parent as Json)[name] : undefined;
}

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * The members naming content by reference, anywhere in the body. Each is found by the end of its
 * name (`_id"`, `Location"`, `url"`), searched natively: a needle that begins with a quote or a
 * common letter stops at most bytes of a conversation, one beginning with `_` or `L` at few.
 */
function referencedContent(b: Buffer): string[] {
  const found = new Set<string>();
  for (let at = b.indexOf(ID_END); at >= 0; at = b.indexOf(ID_END, at + 1)) {
    if (named(b, at, FILE) && valueAfter(b, at + ID_END.length) >= 0) found.add("file_id");
  }
  for (let at = b.indexOf(LOCATION_END); at >= 0; at = b.indexOf(LOCATION_END, at + 1)) {
    if (named(b, at, S3) && valueAfter(b, at + LOCATION_END.length) >= 0) found.add("s3Location");
  }
  for (let at = b.indexOf(URL_END); at >= 0; at = b.indexOf(URL_END, at + 1)) {
    const value = valueAfter(b, at + URL_END.length);
    if (named(b, at, FILE_) && value >= 0) found.add("file_url");
    else if (named(b, at, IMAGE_) && value >= 0) {
      // OpenAI: a string (Responses) or `{ "url": … }` (chat); a data: URL is in the body.
      const url = b[value] === OPEN_OBJECT ? memberValue(b, "url", value) : value;
      if (url >= 0 && !startsWith(b, url, DATA_URL)) found.add("image_url");
    } else if (b[at - 1] === QUOTE && isValueOf(b, at - 2, '"type"')) found.add('source.type "url"');
  }
  return [...found];
}

/**
 * Compressed documents sent inline, anywhere in the body: Anthropic's base64 document source
 * (`"media_type": "application/pdf"`), OpenAI's inline file (`"file_data"`, a PDF as a data URL)
 * and a Bedrock Converse document of a compressed format (`"format": "pdf"`, `"docx"`, …). A few
 * kilobytes of one unfold into a page image and the text of each page: far more input than a
 * quarter of its base64 in tokens, bounded only by the model's context window. Found as names or
 * values in quotes, which inside a JSON string would be escaped.
 */
function compressedDocuments(b: Buffer): string[] {
  const found: string[] = [];
  pdf: for (const type of PDF_TYPES) {
    for (let at = b.indexOf(type); at >= 0; at = b.indexOf(type, at + 1)) {
      if (b[at + type.length] === QUOTE && b[at - 1] === QUOTE && isValueOf(b, at - 2, '"media_type"')) {
        found.push('source.media_type "application/pdf"');
        break pdf;
      }
    }
  }
  for (let at = b.indexOf(FILE_DATA); at >= 0; at = b.indexOf(FILE_DATA, at + 1)) {
    if (valueAfter(b, at + FILE_DATA.length) >= 0) {
      found.push("file_data");
      break;
    }
  }
  const formats = new Set<string>();
  for (let at = b.indexOf(FORMAT); at >= 0; at = b.indexOf(FORMAT, at + 1)) {
    const value = valueAfter(b, at + FORMAT.length);
    if (value < 0 || b[value] !== QUOTE) continue;
    const end = b.indexOf(QUOTE, value + 1);
    const format = end > value && end - value <= 6 ? b.toString("latin1", value + 1, end).toLowerCase() : "";
    if (COMPRESSED_FORMATS.has(format)) formats.add(`document.format ${JSON.stringify(format)}`);
  }
  found.push(...formats);
  return found;
}

/** The media type as serializers write it, and with its slash escaped (`\/`, which JSON allows). */
const PDF_TYPES = [Buffer.from("application/pdf"), Buffer.from("application\\/pdf")];
const FILE_DATA = Buffer.from('"file_data"');
const FORMAT = Buffer.from('"format"');
/** Converse document formats that are compressed (or binary) rather than text. */
const COMPRESSED_FORMATS = new Set(["pdf", "doc", "docx", "xls", "xlsx"]);

const ID_END = Buffer.from('_id"');
const LOCATION_END = Buffer.from('Location"');
const URL_END = Buffer.from('url"');
const FILE = Buffer.from('"file');
const FILE_ = Buffer.from('"file_');
const IMAGE_ = Buffer.from('"image_');
const S3 = Buffer.from('"s3');

/** Whether the name ending at `at` begins with `start` (`"file_` before `id"`). */
function named(b: Buffer, at: number, start: Buffer): boolean {
  return at >= start.length && startsWith(b, at - start.length, start);
}

/** Where the value after a name ending just before `i` starts (past its colon); -1 if it is not a name. */
function valueAfter(b: Buffer, i: number): number {
  while (isSpace(b[i])) i++;
  if (b[i] !== COLON) return -1;
  i++;
  while (isSpace(b[i])) i++;
  return i;
}

/**
 * Whether the body may have a `\u` escape of a printable ASCII character (`\u0020` to `\u007f`):
 * one regular expression over the text, only for a body with a `\u00` escape at all (many have one
 * per accented letter, which native needle searches would stop at one by one). Text that spells
 * such an escape (`\\u0041`) counts too, and costs only the decoding.
 */
export function escapesPlainLetters(b: Buffer): boolean {
  return b.indexOf(ESCAPE_U00) >= 0 && ESCAPED_ASCII.test(b.toString("latin1"));
}

const ESCAPE_U00 = Buffer.from("\\u00");
const ESCAPED_ASCII = /\\u00[2-7][0-9a-f]/i;

/** Where the value of the first member `name` from `from` on starts; -1 if none. */
function memberValue(b: Buffer, name: string, from: number): number {
  const quoted = `"${name}"`;
  for (let at = b.indexOf(quoted, from); at >= 0; at = b.indexOf(quoted, at + quoted.length)) {
    const value = valueAfter(b, at + quoted.length);
    if (value >= 0) return value;
  }
  return -1;
}

function startsWith(b: Buffer, at: number, prefix: Buffer): boolean {
  return b.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;
}

/**
 * Whether the string value whose opening quote is just after `i` (Anthropic's `"url"`) is the value
 * of the member `quotedName` (`"type"`, with its quotes).
 */
function isValueOf(b: Buffer, i: number, quotedName: string): boolean {
  while (isSpace(b[i])) i--;
  if (b[i] !== COLON) return false;
  i--;
  while (isSpace(b[i])) i--;
  const start = i - quotedName.length + 1;
  return b[i] === QUOTE && start >= 0 && b.toString("latin1", start, i + 1) === quotedName;
}
