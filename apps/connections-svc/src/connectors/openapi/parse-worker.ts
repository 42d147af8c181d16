import { parentPort } from "node:worker_threads";
import { ProblemError } from "@agentplane/problem-details";
import type { AnswerShape } from "../far-answer.ts";
import type { OperationFilter } from "./filter.ts";
import { defaultBaseUrl, loadOpenApiDescription } from "./load.ts";
import { type BuildResult, buildToolsFromDocument } from "./tools.ts";

/** A description to parse into tools (see description-parser.ts). */
export interface ParseJob {
  id: number;
  input: string | Record<string, unknown>;
  pointer: string;
  fetched: AnswerShape | undefined;
  /** Where a fetched description came from: relative `servers` resolve against it. */
  documentUrl: string | undefined;
  include: OperationFilter | undefined;
  exclude: OperationFilter | undefined;
}

/** What the tools are built from and the service needs besides: the title and the default base URL. */
export interface ParsedDescription extends BuildResult {
  title?: string;
  defaultBaseUrl?: string;
}

/** The parsed description, the problem (a 400) the description earns, or an error the parser raised. */
export type ParseAnswer =
  | { id: number; parsed: ParsedDescription }
  | {
      id: number;
      problem: Pick<ProblemError, "slug" | "status" | "title" | "detail" | "errors" | "headers" | "extensions">;
    }
  | { id: number; error: string };

async function parse(job: ParseJob): Promise<ParsedDescription> {
  const loaded = await loadOpenApiDescription(job.input, { pointer: job.pointer, fetched: job.fetched });
  const { tools, warnings } = buildToolsFromDocument(loaded.document, { include: job.include, exclude: job.exclude });
  const title = loaded.document.info?.title;
  const baseUrl = defaultBaseUrl(loaded.document, job.documentUrl);
  return { tools, warnings, ...(title ? { title } : {}), ...(baseUrl ? { defaultBaseUrl: baseUrl } : {}) };
}

function answerOf(id: number, err: unknown): ParseAnswer {
  if (!(err instanceof ProblemError)) return { id, error: (err as Error)?.message ?? String(err) };
  const { slug, status, title, detail, errors, headers, extensions } = err;
  return { id, problem: { slug, status, title, detail, errors, headers, extensions } };
}

// One job after another, in arrival order (parsing is asynchronous in places, and interleaved jobs
// would all finish late). The dereferenced document never leaves this thread: only the tools do.
let queue: Promise<void> = Promise.resolve();
parentPort?.on("message", (job: ParseJob) => {
  queue = queue.then(() =>
    parse(job).then(
      (parsed) => parentPort?.postMessage({ id: job.id, parsed } satisfies ParseAnswer),
      (err: unknown) => parentPort?.postMessage(answerOf(job.id, err)),
    ),
  );
});
