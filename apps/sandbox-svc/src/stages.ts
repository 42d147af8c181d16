/**
 * Timestamps of the stages of a sandbox start and exec, for finding where their time goes. Kept
 * only once `keepStages()` was called (the sandbox bench's platform does, and prints the
 * breakdown); until then `stage` does nothing.
 */
let keeping = false;

export interface StageMark {
  stage: string;
  /** performance.now() of this process. */
  at: number;
}

const marks: StageMark[] = [];

export function keepStages(): void {
  keeping = true;
}

export function stage(name: string): void {
  if (keeping) marks.push({ stage: name, at: performance.now() });
}

/** The marks since the last call, oldest first. */
export function takeStages(): StageMark[] {
  return marks.splice(0);
}
