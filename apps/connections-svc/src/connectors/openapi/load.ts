import { createRequire } from "node:module";
import { badRequest, type FieldError } from "@agentplane/problem-details";
import { type AnswerShape, describeAnswer, parsePosition } from "../far-answer.ts";
import { assertRefsUnfoldWithin } from "./ref-unfolding.ts";

/** A dereferenced OpenAPI 3.x document. `$ref` cycles become object cycles (cut when tools are built). */
export interface OpenApiDocument {
  openapi: string;
  info?: { title?: string; version?: string; description?: string };
  servers?: Array<{ url: string; variables?: Record<string, { default?: string }> }>;
  paths?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

export interface LoadedDescription {
  document: OpenApiDocument;
  /** `openapi` of the source (`3.0.3`, `3.1.0`) or `2.0` for a converted Swagger document. */
  sourceVersion: string;
  warnings: string[];
}

const FRAME_LINES = 12;

/** YAML, loaded (synchronously, from its CommonJS build) when the first YAML description arrives. */
function parseYaml(text: string): unknown {
  const { parse } = createRequire(import.meta.url)("yaml") as typeof import("yaml");
  return parse(text, { maxAliasCount: 100 });
}

/**
 * Where a description came from. One a server answered (`fetched`, with the answer's content type
 * and size) is never quoted in errors: the parsers' messages and code frames are replaced by words
 * that name the fault and its position. The tenant's own inline text is quoted as the parsers do.
 */
export interface DescriptionSource {
  pointer?: string;
  fetched?: AnswerShape | undefined;
}

/** Turns the text (JSON or YAML) or object into a plain object; a syntax error is a 400 naming `spec`. */
export function parseDescriptionText(
  input: string | object,
  { pointer = "/spec", fetched }: DescriptionSource = {},
): Record<string, unknown> {
  if (typeof input !== "string") return structuredClone(input) as Record<string, unknown>;
  const text = input.trim();
  const json = text.startsWith("{");
  let parsed: unknown;
  try {
    parsed = json ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    const message = fetched
      ? `the server's answer is not valid ${json ? "JSON" : "YAML"}${parsePosition(error)} (${describeAnswer(fetched)})`
      : (error as Error).message.split("\n").slice(0, FRAME_LINES).join("\n");
    throw badRequest("The description is neither valid JSON nor valid YAML", [{ pointer, message }]);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw badRequest("The description must be an object", [
      { pointer, message: "expected an OpenAPI document object" },
    ]);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Loads an OpenAPI 3.0/3.1 or Swagger 2.0 description: Swagger is converted to OpenAPI 3.0 first,
 * the document is validated by `@readme/openapi-parser` (its messages become the 400's errors) and
 * dereferenced without resolving anything outside the document (no file or network access).
 */
export async function loadOpenApiDescription(
  input: string | object,
  source: DescriptionSource = {},
): Promise<LoadedDescription> {
  const pointer = source.pointer ?? "/spec";
  const fetched = source.fetched !== undefined;
  let raw = parseDescriptionText(input, { pointer, fetched: source.fetched });
  const warnings: string[] = [];
  let sourceVersion = typeof raw.openapi === "string" ? raw.openapi : "";
  if (raw.swagger === "2.0") {
    sourceVersion = "2.0";
    try {
      const { convertObj } = await import("swagger2openapi");
      const converted = await convertObj(raw as never, { patch: true, warnOnly: true, resolve: false } as never);
      raw = converted.openapi as unknown as Record<string, unknown>;
      warnings.push("Swagger 2.0 description converted to OpenAPI 3.0");
    } catch (error) {
      throw badRequest("The Swagger 2.0 description could not be converted", [
        { pointer, message: fetched ? WITHHELD : (error as Error).message },
      ]);
    }
  } else if (!/^3\.[01]\./.test(sourceVersion)) {
    throw badRequest("Only OpenAPI 3.0, 3.1 and Swagger 2.0 descriptions are supported", [
      {
        pointer: `${pointer}/openapi`,
        message: `unsupported version ${shownVersion(raw.openapi ?? raw.swagger ?? null, fetched)}`,
      },
    ]);
  }
  assertRefsUnfoldWithin(raw, pointer);
  const options = { resolve: { external: false, file: false }, timeoutMs: 10_000 };
  // The parser is loaded when a description is first loaded, not when the service starts.
  const { dereference, validate } = await import("@readme/openapi-parser");
  const result = await validate(structuredClone(raw) as never, options);
  if (!result.valid) {
    const errors: FieldError[] = result.errors.map((e) => ({
      pointer,
      message: fetched ? schemaRuleOnly(e.message) : trimFrame(e.message),
    }));
    if (result.additionalErrors > 0) {
      errors.push({ pointer, message: `and ${result.additionalErrors} more errors` });
    }
    throw badRequest("The OpenAPI description is invalid", errors);
  }
  for (const w of result.warnings) warnings.push(trimFrame(w.message));
  let document: OpenApiDocument;
  try {
    document = (await dereference(raw as never, { ...options, dereference: { circular: true } })) as OpenApiDocument;
  } catch (error) {
    throw badRequest("The OpenAPI description could not be dereferenced", [
      { pointer, message: fetched ? WITHHELD : (error as Error).message },
    ]);
  }
  return { document, sourceVersion, warnings };
}

/** In place of a message that would quote a fetched description. */
const WITHHELD = "the parser's message is not shown: it quotes the server's answer";

/**
 * The rule a fetched description breaks, without the code frame or anything else of the document:
 * the validator's first line (`TYPE must be string`, `REQUIRED must have required property 'x'`)
 * comes from the OpenAPI schema; any other message may quote the document and is withheld.
 */
function schemaRuleOnly(message: string): string {
  const first = message.split("\n")[0]?.trim() ?? "";
  return /^[A-Z][A-Z ]{1,40} must [a-zA-Z0-9 '"_$^.,:()+*?\\/[\]{}|-]{1,200}$/.test(first) ? first : WITHHELD;
}

/** A document's `openapi`/`swagger` value as shown in the error: a fetched one only when it looks like a version. */
function shownVersion(value: unknown, fetched: boolean): string {
  if (!fetched) return JSON.stringify(value);
  return typeof value === "string" && /^\d{1,3}(\.\d{1,3}){0,2}$/.test(value) ? JSON.stringify(value) : "(not shown)";
}

function trimFrame(message: string): string {
  return message.split("\n").slice(0, FRAME_LINES).join("\n").trimEnd();
}

/**
 * The default base URL: the first server, variables at their defaults, relative to the document URL.
 * A server URL that resolves to no URL is returned as written, for the caller's URL check to refuse
 * by name (it is the description's word, not a failure of the parser).
 */
export function defaultBaseUrl(document: OpenApiDocument, documentUrl?: string): string | undefined {
  const server = document.servers?.[0];
  if (!server?.url) return documentUrl ? new URL("/", documentUrl).toString().replace(/\/$/, "") : undefined;
  let url = server.url.replace(/\{([^}]+)\}/g, (_, name: string) => server.variables?.[name]?.default ?? "");
  if (!/^https?:\/\//i.test(url)) {
    if (!documentUrl || !URL.canParse(url, documentUrl)) return documentUrl ? url : undefined;
    url = new URL(url, documentUrl).toString();
  }
  return url.replace(/\/+$/, "");
}
