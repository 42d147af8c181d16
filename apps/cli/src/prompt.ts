import { createInterface } from "node:readline/promises";
import type { Io } from "./context.ts";
import { CliError, EXIT } from "./exit-codes.ts";

/** Asks on a terminal; without one, refuses unless --yes (a script must say what it means). */
export async function confirm(io: Io, question: string, yes: boolean): Promise<void> {
  if (yes) return;
  if (!io.stdin.isTTY || !io.stderr.isTTY) {
    throw new CliError(`${question.replace(/\?$/, "")}: pass --yes to confirm (no terminal to ask on)`);
  }
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    // Ctrl-C or Ctrl-D at the prompt rejects the question: cancelled, like a no.
    const answer = await rl.question(`${question} [y/N] `).catch(() => {
      io.stderr.write("\n");
      throw new CliError("cancelled", EXIT.cancelled);
    });
    if (!/^y(es)?$/i.test(answer.trim())) throw new CliError("cancelled", EXIT.cancelled);
  } finally {
    rl.close();
  }
}

/** A spinner on stderr while `work` runs, only when both stdout and stderr are terminals. */
export async function withSpinner<T>(io: Io, text: string, work: () => Promise<T>): Promise<T> {
  if (!text || !io.stdout.isTTY || !io.stderr.isTTY) return work();
  const { default: yoctoSpinner } = await import("yocto-spinner");
  const spinner = yoctoSpinner({ text, stream: io.stderr }).start();
  try {
    return await work();
  } finally {
    spinner.stop();
  }
}

/**
 * A secret typed or pasted on a terminal, not echoed (the terminal's scrollback, a screen share or
 * a recording would keep it): raw mode until Enter or Ctrl-D, Backspace taking back a character,
 * Ctrl-C cancelling. The terminal is given back cooked on every way out.
 */
export function readHidden(io: Io): Promise<string> {
  const stdin = io.stdin;
  return new Promise((resolve, reject) => {
    let value = "";
    const done = (error?: Error) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      io.stderr.write("\n");
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of String(chunk)) {
        if (ch === "\r" || ch === "\n" || ch === "\u0004") return done();
        if (ch === "\u0003") return done(new CliError("cancelled", EXIT.cancelled));
        if (ch === "\u007f" || ch === "\b") value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.setRawMode(true);
    stdin.on("data", onData);
    stdin.resume();
  });
}
