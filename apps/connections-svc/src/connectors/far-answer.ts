/**
 * Words for an answer from a server a tenant aimed us at, which never quote it. A parser's message
 * quotes the text around the fault (V8's `JSON.parse` about ten characters, YAML a code frame), and
 * a server may echo a credential it was sent (a header, a key in its URL) into a broken answer: the
 * quoted fragment is too short for any redaction to recognize, and it would reach `lastError`, the
 * problem and the logs. So the errors name the cause, the content type and the size, never the text.
 */

/** What an answer was: its declared content type and its size in bytes (when known). */
export interface AnswerShape {
  contentType: string | null | undefined;
  bytes?: number | undefined;
}

/** Content types named as they are; any other is only called "another content type" (it is the server's text). */
const NAMED_TYPES = new Set([
  "application/json",
  "application/problem+json",
  "application/vnd.oai.openapi+json",
  "application/vnd.oai.openapi",
  "application/yaml",
  "application/x-yaml",
  "text/yaml",
  "text/x-yaml",
  "application/xml",
  "text/xml",
  "text/html",
  "text/plain",
  "text/event-stream",
  "application/octet-stream",
]);

/** The media type of a `content-type` header when it is a well-known one, else a phrase that quotes nothing. */
export function contentTypeName(contentType: string | null | undefined): string {
  if (!contentType) return "no content type";
  const essence = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  return NAMED_TYPES.has(essence) ? essence : "another content type";
}

/** `content-type application/json, 812 bytes` (the size left off when unknown). */
export function describeAnswer(answer: AnswerShape): string {
  const type = contentTypeName(answer.contentType);
  const shown = type.includes("/") ? `content-type ${type}` : type;
  return answer.bytes === undefined ? shown : `${shown}, ${answer.bytes} bytes`;
}

/**
 * Where a JSON or YAML parser stopped, as ` at line L, column C`, from the numbers of its error
 * only (V8 says `(line 2 column 7)`, the YAML parser carries `linePos`); empty when it names none.
 */
export function parsePosition(error: unknown): string {
  const linePos = (error as { linePos?: Array<{ line?: unknown; col?: unknown }> })?.linePos?.[0];
  if (typeof linePos?.line === "number" && typeof linePos.col === "number") {
    return ` at line ${linePos.line}, column ${linePos.col}`;
  }
  const match = /\(line (\d+) column (\d+)\)/.exec((error as Error)?.message ?? "");
  return match ? ` at line ${match[1]}, column ${match[2]}` : "";
}
