import { Transform } from "node:stream";
import type { ExecProcess } from "../types.ts";

/** The exit codes util-linux and sh give a program they could not execute: ENOENT, and any other error. */
const NOT_FOUND = 127;
const NOT_EXECUTABLE = 126;

/**
 * What a shell would say instead of the line of whatever failed to execute the exec's program
 * (nsenter; with a working directory, the `sh` that changes to it first):
 * `<program>: command not found` for a name looked up on PATH, else `<program>: <error>`.
 */
function shellMessage(program: string, error: string, exitCode: number): string {
  if (exitCode === NOT_FOUND && !program.includes("/")) return `${program}: command not found\n`;
  return `${program}: ${error === "not found" ? "No such file or directory" : error}\n`;
}

/**
 * How the line telling that `program` could not be executed starts: nsenter's
 * (`nsenter: failed to execute <program>: <error>`), or, when the exec changes to `cwd` first, that
 * of the `sh -c 'cd -- "$0" && exec "$@"' <cwd>` doing it (dash: `<cwd>: 1: exec: <program>: <error>`),
 * or of the `sh` that exports variables inside first (host-env.ts: `sh: 1: exec: <program>: <error>`).
 */
export function execFailurePrefix(program: string, cwd?: string, exportsInside = false): string {
  if (cwd) return `${cwd}: 1: exec: ${program}: `;
  return exportsInside ? `sh: 1: exec: ${program}: ` : `nsenter: failed to execute ${program}: `;
}

/**
 * The exec's stderr with the line starting with `failurePrefix` (see execFailurePrefix) told as a
 * shell would tell it. The line is rewritten only when it is all the exec wrote to stderr and the
 * exit code is that of a failed execute (127 or 126, no signal): a program that ran keeps its own
 * output unless it printed exactly that line about itself, and nothing else, and exited so. Output
 * that cannot be that line passes through as it comes; only a prefix of it is held back, until the
 * stream ends (the process has then exited, or closed its stderr).
 */
export function withShellExecErrors(proc: ExecProcess, program: string, failurePrefix: string): ExecProcess {
  const prefix = Buffer.from(failurePrefix);
  // The longest errno text is well under this.
  const longest = prefix.length + 128;
  let held: Buffer | undefined = Buffer.alloc(0);
  /** Whether `held` may still be (the start of) the failure line. */
  const mayBeFailure = (text: Buffer): boolean => {
    if (text.length <= prefix.length) return prefix.subarray(0, text.length).equals(text);
    if (text.length > longest || !text.subarray(0, prefix.length).equals(prefix)) return false;
    const newline = text.indexOf(10);
    return newline === -1 || newline === text.length - 1;
  };
  const stderr = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (held === undefined) return done(null, chunk);
      held = Buffer.concat([held, chunk]);
      if (mayBeFailure(held)) return done();
      const out = held;
      held = undefined;
      done(null, out);
    },
    flush(done) {
      const text = held;
      if (!text || text.length === 0) return done();
      void proc.exited.then(({ exitCode, signal }) => {
        const line = text.toString("utf8");
        const complete = line.endsWith("\n") && line.length > failurePrefix.length + 1;
        if (!signal && complete && (exitCode === NOT_FOUND || exitCode === NOT_EXECUTABLE)) {
          done(null, shellMessage(program, line.slice(failurePrefix.length, -1), exitCode));
        } else {
          done(null, text);
        }
      });
    },
  });
  proc.stderr.pipe(stderr);
  // Destroyed by its reader (output left open by a background child): the pipe goes too.
  stderr.once("close", () => proc.stderr.destroy());
  return { ...proc, stderr };
}
