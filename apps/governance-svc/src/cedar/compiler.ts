import { ProblemError } from "@agentplane/problem-details";
import { WorkerLane, type WorkerLaneOptions } from "@agentplane/service-kit";
import type { StoredRule } from "../db/schema.ts";
import type { CompileAnswer, CompileJob } from "./compile-worker.ts";

/** A compile takes well under a second within the body bounds (decision 0026); past this the thread is replaced. */
const COMPILE_TIMEOUT_MS = 10_000;

export type PolicyCompilerOptions = WorkerLaneOptions;

/**
 * Compiles policy bodies (parse, schema validation, rule ids: `compilePolicyText`) on a thread of
 * their own. A full body takes up to about 0.6 s of a core; on the main thread that held every
 * decision of every organization (and, in the all-in-one process, every request) meanwhile.
 * Compiles run one at a time, in order, with service-kit's `WorkerLane`: at most `maxWaiting`
 * wait, and past that a write is refused with a 503 and `Retry-After`. The thread starts on the
 * first compile, stops when idle (a Cedar module costs memory) and is replaced when it fails or a
 * compile overruns its timeout.
 */
export class PolicyCompiler {
  readonly #lane: WorkerLane<Omit<CompileJob, "id">, StoredRule[], CompileAnswer>;

  constructor(options: PolicyCompilerOptions = {}) {
    this.#lane = new WorkerLane(
      {
        url: new URL("./compile-worker.ts", import.meta.url),
        job: "a compile",
        thread: "the compiling thread",
        failure: "The policy could not be compiled",
        closing: "Governance is shutting down",
        queued: (waiting) => `${waiting} policy bodies are being compiled`,
        settle,
      },
      { timeoutMs: COMPILE_TIMEOUT_MS, ...options },
    );
  }

  /** Whether the thread is running (it runs only while there are compiles). */
  get running(): boolean {
    return this.#lane.running;
  }

  compile(text: string, pointer = "/body/cedar"): Promise<StoredRule[]> {
    return this.#lane.run({ text, pointer });
  }

  close(): Promise<void> {
    return this.#lane.close();
  }
}

function settle(answer: CompileAnswer): { result: StoredRule[] } | { error: Error } {
  if ("rules" in answer) return { result: answer.rules };
  if ("problem" in answer) {
    const { slug, detail, errors } = answer.problem;
    return { error: new ProblemError(slug, { ...(detail ? { detail } : {}), ...(errors ? { errors } : {}) }) };
  }
  return {
    error: new ProblemError("internal-error", { detail: `Cedar failed while compiling the policy: ${answer.error}` }),
  };
}
