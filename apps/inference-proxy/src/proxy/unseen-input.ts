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

const ESCAPED_ASCII = /\\u00[2-7][0-9a-f]/i;
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
  if (b.includes("\\u00") && ESCAPED_ASCII.test(b.toString("latin1"))) {
    try {
      b = Buffer.from(JSON.stringify(JSON.parse(b.toString("utf8"))));
    } catch {
      // request.ts refuses a body that is not JSON before it gets here.
    }
  }
  const members: string[] = [];
  let samplings = 1;

  // Content the provider fetches or loads: an uploaded file, an image or document by URL or in S3.
  for (const name of ["file_id", "file_url", "s3Location"]) if (memberValue(b, name) >= 0) members.push(name);
  for (let at = memberValue(b, "image_url"); at >= 0; at = memberValue(b, "image_url", at)) {
    // OpenAI: a string (Responses) or `{ "url": … }` (chat); a data: URL is in the body.
    const url = b[at] === OPEN_OBJECT ? memberValue(b, "url", at) : at;
    if (url >= 0 && !startsWith(b, url, DATA_URL)) {
      members.push("image_url");
      break;
    }
  }
  if (typeIsUrl(b)) members.push('source.type "url"');

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

/** Where the value of the first member `name` (at any depth) from `from` on starts; -1 if none. */
function memberValue(b: Buffer, name: string, from = 0): number {
  const quoted = `"${name}"`;
  for (let at = b.indexOf(quoted, from); at >= 0; at = b.indexOf(quoted, at + quoted.length)) {
    let i = at + quoted.length;
    while (isSpace(b[i])) i++;
    if (b[i] !== COLON) continue;
    i++;
    while (isSpace(b[i])) i++;
    return i;
  }
  return -1;
}

function startsWith(b: Buffer, at: number, prefix: Buffer): boolean {
  return b.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;
}

/** Anthropic's image and document sources by URL: `"type": "url"` (a string value, preceded by its name). */
function typeIsUrl(b: Buffer): boolean {
  for (let at = b.indexOf('"url"'); at >= 0; at = b.indexOf('"url"', at + 5)) {
    let i = at - 1;
    while (isSpace(b[i])) i--;
    if (b[i] !== COLON) continue;
    i--;
    while (isSpace(b[i])) i--;
    if (b[i] === QUOTE && i >= 5 && b.toString("latin1", i - 5, i + 1) === '"type"') return true;
  }
  return false;
}
