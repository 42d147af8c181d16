import { parentPort } from "node:worker_threads";
import { ProblemError } from "@agentplane/problem-details";
import { compilePolicyText } from "./policy-text.ts";

/** A policy body to compile (see compiler.ts). */
export interface CompileJob {
  id: number;
  text: string;
  pointer: string;
}

/** The rules, the 400 problem the body earns, or an error Cedar itself raised. */
export type CompileAnswer =
  | { id: number; rules: ReturnType<typeof compilePolicyText> }
  | { id: number; problem: { slug: string; detail: string | undefined; errors: ProblemError["errors"] } }
  | { id: number; error: string };

// Cedar's WebAssembly module in this thread is its own: a body that broke it would break only this
// thread, which the main thread replaces, never the module that answers decisions.
parentPort?.on("message", (job: CompileJob) => {
  let answer: CompileAnswer;
  try {
    answer = { id: job.id, rules: compilePolicyText(job.text, job.pointer) };
  } catch (err) {
    answer =
      err instanceof ProblemError
        ? { id: job.id, problem: { slug: err.slug, detail: err.detail, errors: err.errors } }
        : { id: job.id, error: (err as Error).message };
  }
  parentPort?.postMessage(answer);
});
