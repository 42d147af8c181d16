import type { Logger } from "./logger.ts";

/** Faults that reached the process level since it started; reported by `/health`. */
export interface ProcessFaults {
  uncaughtExceptions: number;
  unhandledRejections: number;
}

const faults: ProcessFaults = { uncaughtExceptions: 0, unhandledRejections: 0 };
let installed = false;

/** A copy of the process-level fault counters. */
export function processFaults(): ProcessFaults {
  return { ...faults };
}

/**
 * The last resort behind every socket and promise having its own handler: an error that still
 * escapes is logged at `fatal` with its stack and counted (see `/health`) instead of ending the
 * process for every other client. It never hides one: each occurrence is logged and counted.
 * Installed once per process by the deployables (never by libraries or tests).
 */
export function installProcessGuard(logger: Logger): void {
  if (installed) return;
  installed = true;
  process.on("uncaughtException", (err, origin) => {
    faults.uncaughtExceptions++;
    logger.fatal({ err, origin, count: faults.uncaughtExceptions }, "uncaught exception (process kept running)");
  });
  process.on("unhandledRejection", (reason) => {
    faults.unhandledRejections++;
    logger.fatal({ err: reason, count: faults.unhandledRejections }, "unhandled promise rejection");
  });
}
