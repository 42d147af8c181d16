import { ProblemError } from "@agentplane/problem-details";
import { WorkerLane, type WorkerLaneOptions } from "@agentplane/service-kit";
import type { AnswerShape } from "../far-answer.ts";
import type { OperationFilter } from "./filter.ts";
import type { ParseAnswer, ParsedDescription, ParseJob } from "./parse-worker.ts";

/**
 * A description within the bounds (size, `$ref` unfolding) parses in about a second; the parser's
 * own limit is 10 s for each of validation and dereferencing. Past this the thread is replaced.
 */
const PARSE_TIMEOUT_MS = 25_000;

/**
 * The worker next to this file: `parse-worker.ts` when the service runs from its TypeScript
 * sources (Node strips the types, as it does for this file), `parse-worker.js` from built output.
 */
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./parse-worker.ts" : "./parse-worker.js",
  import.meta.url,
);

export type DescriptionParserOptions = WorkerLaneOptions;

/** A description and what the tools are selected by (`ParseJob` without its id). */
export interface ParseRequest {
  input: string | Record<string, unknown>;
  pointer: string;
  fetched?: AnswerShape | undefined;
  documentUrl?: string | undefined;
  include?: OperationFilter | undefined;
  exclude?: OperationFilter | undefined;
}

/**
 * Parses OpenAPI descriptions into connector tools (validation, dereferencing, tool building:
 * `loadOpenApiDescription` and `buildToolsFromDocument`) on a thread of their own. One just within
 * the `$ref` bound takes about half a second to a second of a core; on the main thread that held
 * every request of the service (and, in the all-in-one process, of the platform) meanwhile, and any
 * project member who may create connectors could send one after another. Parses run one at a time,
 * in order, with service-kit's `WorkerLane`: at most `maxWaiting` wait, and past that a parse is refused with a 503 and
 * `Retry-After`. The 400 problems of an invalid description reach the caller unchanged. The thread
 * starts on the first parse, stops when idle and is replaced when it fails or a parse overruns its
 * timeout (decision 0046, the shape of governance's `PolicyCompiler`).
 */
export class DescriptionParser {
  readonly #lane: WorkerLane<Omit<ParseJob, "id">, ParsedDescription, ParseAnswer>;

  constructor(options: DescriptionParserOptions = {}) {
    this.#lane = new WorkerLane(
      {
        url: WORKER_URL,
        job: "a parse",
        thread: "the parsing thread",
        failure: "The description could not be parsed",
        closing: "Connections is shutting down",
        queued: (waiting) => `${waiting} descriptions are being parsed`,
        settle,
      },
      { timeoutMs: PARSE_TIMEOUT_MS, ...options },
    );
  }

  /** Whether the thread is running (it runs only while there are parses). */
  get running(): boolean {
    return this.#lane.running;
  }

  parse(request: ParseRequest): Promise<ParsedDescription> {
    return this.#lane.run({
      input: request.input,
      pointer: request.pointer,
      fetched: request.fetched,
      documentUrl: request.documentUrl,
      include: request.include,
      exclude: request.exclude,
    });
  }

  close(): Promise<void> {
    return this.#lane.close();
  }
}

function settle(answer: ParseAnswer): { result: ParsedDescription } | { error: Error } {
  if ("parsed" in answer) return { result: answer.parsed };
  if ("problem" in answer) {
    const { slug, status, title, detail, errors, headers, extensions } = answer.problem;
    return {
      error: new ProblemError(slug, {
        status,
        title,
        headers,
        extensions,
        ...(detail !== undefined ? { detail } : {}),
        ...(errors ? { errors } : {}),
      }),
    };
  }
  return { error: new ProblemError("internal-error", { detail: `The description's parser failed: ${answer.error}` }) };
}
